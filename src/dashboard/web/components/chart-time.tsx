/**
 * A time-series chart in hand-made SVG: one column per period (a day), stacked bars or lines per
 * series, a y axis with round ticks, x labels thinned to fit, and a tooltip for the period under
 * the pointer. The chart is one tab stop: arrow keys (Home/End too) move through the periods and
 * the tooltip follows, read out through a live region. "Show as table" holds the same numbers.
 *
 * Each bar carries `data-x`, `data-series` and `data-value`, so tests can compare what is drawn
 * with what the API answered.
 */
import { useState } from "preact/hooks";
import { ChartTable, Legend, niceTicks, seriesColor, useWidth } from "./chart-common.js";

export interface TimeSeries {
  name: string;
  /** One value per x (same order as `xs`); null: nothing known (drawn as 0, shown as "–"). */
  values: Array<number | null>;
}

export interface TimeChartProps {
  /** Accessible name and the table's caption ("Tokens per day"). */
  title: string;
  /** The periods, oldest first (`YYYY-MM-DD`). */
  xs: string[];
  series: TimeSeries[];
  /** How a value reads in ticks, tooltips and the table. */
  format: (n: number) => string;
  /** How a value reads in the table (default: `format`); the table carries exact numbers. */
  formatTable?: (n: number) => string;
  /** Short x label (default: the text as given). */
  formatX?: (x: string) => string;
  kind?: "bar" | "line";
  height?: number;
}

const PAD = { top: 12, right: 12, bottom: 26, left: 56 };

export function TimeChart({
  title,
  xs,
  series,
  format,
  formatTable = format,
  formatX = (x) => x,
  kind = "bar",
  height = 220,
}: TimeChartProps) {
  const { ref, width } = useWidth<HTMLDivElement>();
  const [active, setActive] = useState<number | null>(null);
  const plotW = Math.max(40, width - PAD.left - PAD.right);
  const plotH = height - PAD.top - PAD.bottom;
  const value = (s: TimeSeries, i: number) => s.values[i] ?? 0;
  const totals = xs.map((_, i) =>
    kind === "bar"
      ? series.reduce((sum, s) => sum + value(s, i), 0)
      : Math.max(0, ...series.map((s) => value(s, i))),
  );
  const ticks = niceTicks(Math.max(0, ...totals));
  const top = ticks[ticks.length - 1] || 1;
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const band = plotW / Math.max(1, xs.length);
  const barW = Math.max(1, Math.min(48, band * 0.72));
  const cx = (i: number) => PAD.left + band * i + band / 2;
  // Label at most one x per ~70 px.
  const every = Math.max(1, Math.ceil(xs.length / Math.max(1, Math.floor(plotW / 70))));
  const last = xs.length - 1;
  const labelled = (i: number) => i % every === 0 || (i === last && last % every >= every * 0.6);

  const move = (e: KeyboardEvent) => {
    if (xs.length === 0) return;
    const current = active ?? last;
    const next =
      e.key === "ArrowRight"
        ? Math.min(last, current + 1)
        : e.key === "ArrowLeft"
          ? Math.max(0, current - (active === null ? 0 : 1))
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : e.key === "Escape"
                ? null
                : undefined;
    if (next === undefined) return;
    e.preventDefault();
    setActive(next);
  };
  const pointerAt = (e: PointerEvent) => {
    const box = (e.currentTarget as SVGElement).getBoundingClientRect();
    const i = Math.floor((e.clientX - box.left - PAD.left) / band);
    setActive(i >= 0 && i < xs.length ? i : null);
  };

  const describe = (i: number) =>
    `${formatX(xs[i] ?? "")}: ${series
      .map(
        (s) => `${series.length > 1 ? `${s.name} ` : ""}${s.values[i] === null ? "–" : format(value(s, i))}`,
      )
      .join(", ")}${kind === "bar" && series.length > 1 ? `; total ${format(totals[i] ?? 0)}` : ""}`;

  return (
    <figure class="chart">
      <figcaption class="chart-title">{title}</figcaption>
      <Legend names={series.map((s) => s.name)} />
      {/* biome-ignore lint/a11y/useSemanticElements: a figure's plot, not a form's fieldset */}
      <div
        ref={ref}
        class="chart-box"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the chart is one tab stop; arrow keys read its periods
        tabIndex={0}
        role="group"
        aria-label={`${title}. Arrow keys read each day.`}
        onKeyDown={move}
        onBlur={() => setActive(null)}
      >
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          aria-hidden="true"
          onPointerMove={pointerAt}
          onPointerLeave={() => setActive(null)}
        >
          {ticks.map((t) => (
            <g key={t} class="chart-tick">
              <line x1={PAD.left} x2={PAD.left + plotW} y1={y(t)} y2={y(t)} class="chart-grid" />
              <text x={PAD.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
                {format(t)}
              </text>
            </g>
          ))}
          {xs.map((x, i) =>
            labelled(i) ? (
              <text key={x} x={cx(i)} y={height - 8} text-anchor="middle" class="chart-xlabel">
                {formatX(x)}
              </text>
            ) : null,
          )}
          {active !== null ? (
            <rect class="chart-hover" x={PAD.left + band * active} y={PAD.top} width={band} height={plotH} />
          ) : null}
          {kind === "bar"
            ? xs.map((x, i) => {
                let base = 0;
                return (
                  <g key={x} class="chart-col">
                    {series.map((s, si) => {
                      const v = value(s, i);
                      const y0 = y(base);
                      base += v;
                      const h = Math.max(0, y0 - y(base));
                      return (
                        <rect
                          key={s.name}
                          class="chart-bar"
                          x={cx(i) - barW / 2}
                          y={y0 - h}
                          width={barW}
                          height={h}
                          style={{ fill: seriesColor(si) }}
                          data-x={x}
                          data-series={s.name}
                          data-value={String(v)}
                        />
                      );
                    })}
                  </g>
                );
              })
            : series.map((s, si) => (
                <g key={s.name}>
                  <polyline
                    class="chart-line"
                    style={{ fill: "none", stroke: seriesColor(si) }}
                    points={xs.map((_, i) => `${cx(i)},${y(value(s, i))}`).join(" ")}
                  />
                  {xs.map((x, i) => (
                    <circle
                      key={x}
                      cx={cx(i)}
                      cy={y(value(s, i))}
                      r={active === i ? 4 : 2.5}
                      style={{ fill: seriesColor(si) }}
                      data-x={x}
                      data-series={s.name}
                      data-value={String(value(s, i))}
                    />
                  ))}
                </g>
              ))}
          <line x1={PAD.left} x2={PAD.left + plotW} y1={y(0)} y2={y(0)} class="chart-axis" />
        </svg>
        {active !== null ? (
          <div
            class="chart-tooltip"
            style={{
              left: `${Math.min(Math.max(cx(active), 90), width - 90)}px`,
              top: `${PAD.top}px`,
            }}
          >
            {describe(active)}
          </div>
        ) : null}
        <p class="sr-only" aria-live="polite">
          {active !== null ? describe(active) : ""}
        </p>
      </div>
      <ChartTable
        caption={title}
        columns={[{ label: "Day" }, ...series.map((s) => ({ label: s.name, numeric: true }))]}
        rows={xs.map((x, i) => ({
          key: x,
          cells: [x, ...series.map((s) => (s.values[i] === null ? "–" : formatTable(value(s, i))))],
        }))}
      />
    </figure>
  );
}
