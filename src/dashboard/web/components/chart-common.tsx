/**
 * What the hand-made SVG charts share: the width of their box (they draw in real pixels so text
 * stays readable on a phone), round axis ticks, the theme's series colours (`--chart-1..6`), and
 * the "Show as table" fallback every chart carries for screen readers and copying numbers.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/** The CSS colour of series `i` (cycles through the six theme colours). */
export function seriesColor(i: number): string {
  return `var(--chart-${(i % 6) + 1})`;
}

/** Tracks an element's content width; `fallback` until it has been measured. */
export function useWidth<T extends HTMLElement>(fallback = 640) {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      const w = Math.floor(el.clientWidth);
      if (w > 0) setWidth((old) => (old === w ? old : w));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/** About `count` round tick values from 0 to at least `max` (1, 2, 2.5 or 5 × a power of ten). */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw) as number;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 0.999; v += step) ticks.push(Math.round(v * 1e9) / 1e9);
  if ((ticks[ticks.length - 1] ?? 0) < max) ticks.push(ticks.length * step);
  return ticks;
}

export interface TableColumn {
  label: string;
  numeric?: boolean;
}

/** The chart's numbers as a table inside a closed `<details>`. */
export function ChartTable({
  caption,
  columns,
  rows,
}: {
  caption: string;
  columns: TableColumn[];
  rows: Array<{ key: string; cells: ComponentChildren[] }>;
}) {
  return (
    <details class="chart-table">
      <summary>Show as table</summary>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.label} scope="col" class={c.numeric ? "num" : ""}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}>
                {r.cells.map((cell, i) => (
                  <td key={columns[i]?.label ?? i} class={columns[i]?.numeric ? "num" : ""}>
                    {cell}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/** A colour key for the series of a chart. */
export function Legend({ names }: { names: string[] }) {
  if (names.length < 2) return null;
  return (
    <ul class="chart-legend">
      {names.map((n, i) => (
        <li key={n}>
          <span class="chart-swatch" style={{ background: seriesColor(i) }} aria-hidden="true" />
          {n}
        </li>
      ))}
    </ul>
  );
}
