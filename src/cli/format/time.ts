/**
 * Times, sizes and counts as the CLI prints them. Timestamps are Unix seconds (floats), as the
 * session store keeps them; "local" means the machine's time zone.
 */

const pad = (n: number) => String(n).padStart(2, "0");

/** Local `YYYY-MM-DD`. */
export function formatDay(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Local `YYYY-MM-DD HH:MM`. */
export function formatDateTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${formatDay(seconds)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Local `HH:MM`. */
export function formatClock(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * How long ago `seconds` was, relative to `now` (seconds): "just now", "5m ago", "3h ago",
 * "yesterday", "4d ago", then the local date once it is a month or more in the past. A time in
 * the future (clock skew) reads "just now".
 */
export function relativeTime(seconds: number, now: number): string {
  const diff = now - seconds;
  if (diff < 60) return "just now";
  if (diff < 3600) return `${Math.floor(diff / 60)}m ago`;
  if (diff < 86_400) return `${Math.floor(diff / 3600)}h ago`;
  if (diff < 2 * 86_400) return "yesterday";
  if (diff < 30 * 86_400) return `${Math.floor(diff / 86_400)}d ago`;
  return formatDay(seconds);
}

/** `512 B`, `1.2 KB`, `3.4 MB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

/** `1,234`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Token counts: `950`, `12.3K`, `4.5M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}K`;
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0)}M`;
}

/** `$0.0123` below a dollar, `$12.34` above, `—` when the cost is unknown. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "—";
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}
