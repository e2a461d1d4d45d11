/**
 * A horizontal bar chart for breakdowns (tokens by model, sessions by source, top tools): one row
 * per item, largest first as given, labels left, values right, in hand-made SVG sized to its box.
 * The labels and values are real text in the SVG (a screen reader reads them as a list of rows);
 * "Show as table" holds the same numbers. Bars carry `data-label` and `data-value` for tests.
 */
import { ChartTable, seriesColor, useWidth } from "./chart-common.js";

export interface BarItem {
  label: string;
  value: number;
  /** Shown after the value (e.g. "3 sessions unpriced"). */
  note?: string;
}

export interface BarChartProps {
  title: string;
  items: BarItem[];
  format: (n: number) => string;
  formatTable?: (n: number) => string;
  /** Theme colour index for the bars. */
  color?: number;
  /** Rows shown (the table lists them all). */
  limit?: number;
}

const ROW = 26;

export function BarChart({
  title,
  items,
  format,
  formatTable = format,
  color = 0,
  limit = 10,
}: BarChartProps) {
  const { ref, width } = useWidth<HTMLDivElement>(480);
  const shown = items.slice(0, limit);
  const labelW = Math.min(180, Math.max(80, Math.floor(width * 0.34)));
  const valueW = 72;
  const barMax = Math.max(20, width - labelW - valueW - 12);
  const max = Math.max(0, ...shown.map((i) => i.value)) || 1;
  const height = shown.length * ROW + 4;
  const cut = (text: string) => {
    const chars = Math.floor(labelW / 7.5);
    return text.length > chars ? `${text.slice(0, Math.max(1, chars - 1))}…` : text;
  };
  return (
    <figure class="chart">
      <figcaption class="chart-title">{title}</figcaption>
      <div ref={ref} class="chart-box">
        <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} aria-hidden="true">
          {shown.map((item, i) => {
            const w = Math.max(item.value > 0 ? 2 : 0, (item.value / max) * barMax);
            const y = i * ROW + 2;
            return (
              <g key={item.label}>
                <title>{`${item.label}: ${formatTable(item.value)}${item.note ? ` (${item.note})` : ""}`}</title>
                <text x={labelW - 8} y={y + ROW / 2} dy="0.32em" text-anchor="end" class="chart-label">
                  {cut(item.label)}
                </text>
                <rect
                  class="chart-bar"
                  x={labelW}
                  y={y + 4}
                  width={w}
                  height={ROW - 8}
                  rx={3}
                  style={{ fill: seriesColor(color) }}
                  data-label={item.label}
                  data-value={String(item.value)}
                />
                <text x={labelW + w + 6} y={y + ROW / 2} dy="0.32em" class="chart-value">
                  {format(item.value)}
                </text>
              </g>
            );
          })}
        </svg>
        <ul class="sr-only">
          {shown.map((item) => (
            <li
              key={item.label}
            >{`${item.label}: ${formatTable(item.value)}${item.note ? ` (${item.note})` : ""}`}</li>
          ))}
        </ul>
      </div>
      <ChartTable
        caption={title}
        columns={[{ label: "Name" }, { label: "Value", numeric: true }]}
        rows={items.map((item) => ({
          key: item.label,
          cells: [item.label, `${formatTable(item.value)}${item.note ? ` (${item.note})` : ""}`],
        }))}
      />
    </figure>
  );
}
