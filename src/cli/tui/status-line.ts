/**
 * The REPL's status line: one dim row above the prompt with the session's runtime facts
 * (`gpt-5.4 · 12% · 3.4k tokens · $0.0123 · ~/project`). Which facts, and in what order, follow
 * upstream's `display.runtime_footer.fields`; a field whose data is missing is left out rather
 * than shown as `?` (as upstream's footer does). Pure: the caller passes the facts and the width.
 */
import { formatCost } from "../../commands/format.js";
import type { Style } from "./style.js";
import { displayWidth, truncateToWidth } from "./text-width.js";

/** Field names the status line knows; any other name in the config is ignored. */
export const STATUS_FIELDS = ["model", "context_pct", "tokens", "cost", "cwd", "provider"] as const;
export type StatusField = (typeof STATUS_FIELDS)[number];

/**
 * The REPL's fields when `display.runtime_footer.fields` is not set: upstream's footer fields
 * (model, context %, cwd) plus the token and cost figures its CLI status bar shows.
 */
export const DEFAULT_STATUS_FIELDS: readonly StatusField[] = [
  "model",
  "context_pct",
  "tokens",
  "cost",
  "cwd",
];

export interface StatusFacts {
  model: string;
  provider?: string;
  /** Tokens in the last request (how full the context is). */
  contextTokens: number;
  /** The model's context window; null or 0 when unknown (the percentage is then left out). */
  contextLength: number | null;
  /** Input plus output tokens spent this session. */
  totalTokens: number;
  /** USD this session; null when no price is known. */
  costUsd: number | null;
  /** The cost is not billed per token (a subscription or a local model). */
  costIncluded?: boolean;
  cwd: string;
  /** The user's home directory, shown as `~`. */
  home?: string;
}

/**
 * The configured field list: `display.runtime_footer.fields` when it is a non-empty list,
 * otherwise `DEFAULT_STATUS_FIELDS`. Unknown names are dropped; an all-unknown list means default.
 */
export function statusFields(runtimeFooter: unknown): StatusField[] {
  const fields =
    runtimeFooter && typeof runtimeFooter === "object"
      ? (runtimeFooter as { fields?: unknown }).fields
      : undefined;
  if (!Array.isArray(fields)) return [...DEFAULT_STATUS_FIELDS];
  const known = fields
    .map((f) => String(f).trim().toLowerCase())
    .filter((f): f is StatusField => (STATUS_FIELDS as readonly string[]).includes(f));
  return known.length > 0 ? [...new Set(known)] : [...DEFAULT_STATUS_FIELDS];
}

/** `950`, `3.4k`, `12k`, `1.2M`: short enough for a status line. */
export function compactCount(n: number): string {
  const v = Math.max(0, Math.round(n));
  if (v < 1000) return String(v);
  if (v < 1_000_000)
    return `${v < 10_000 ? (v / 1000).toFixed(1) : Math.round(v / 1000)}k`.replace(".0k", "k");
  return `${(v / 1_000_000).toFixed(1)}M`.replace(".0M", "M");
}

/** `openai/gpt-5.4` → `gpt-5.4`: the vendor prefix adds nothing on one line. */
function shortModel(model: string): string {
  return model.slice(model.lastIndexOf("/") + 1);
}

/** `cwd` with the home directory shown as `~`. */
export function homeRelative(cwd: string, home: string | undefined): string {
  if (!home || home === "/") return cwd;
  const h = home.endsWith("/") ? home.slice(0, -1) : home;
  if (cwd === h) return "~";
  return cwd.startsWith(`${h}/`) ? `~${cwd.slice(h.length)}` : cwd;
}

/** `~/a/b/c/project` cut from the left to `width` cells: `…/c/project`. */
function shortenPath(path: string, width: number): string {
  if (displayWidth(path) <= width) return path;
  if (width <= 1) return "";
  let tail = path;
  while (tail.length > 0 && displayWidth(tail) > width - 1) {
    const slash = tail.indexOf("/", 1);
    tail = slash > 0 ? tail.slice(slash) : tail.slice(1);
  }
  return `…${tail}`;
}

function fieldText(field: StatusField, facts: StatusFacts): string | null {
  switch (field) {
    case "model":
      return facts.model ? shortModel(facts.model) : null;
    case "provider":
      return facts.provider || null;
    case "context_pct": {
      const length = facts.contextLength;
      if (!length || length <= 0) return null;
      const pct = Math.max(0, Math.min(100, Math.round((facts.contextTokens / length) * 100)));
      return `${pct}%`;
    }
    case "tokens":
      return `${compactCount(facts.totalTokens)} tokens`;
    case "cost":
      if (facts.costIncluded) return "included";
      return facts.costUsd === null ? null : formatCost(facts.costUsd);
    case "cwd":
      return facts.cwd ? homeRelative(facts.cwd, facts.home) : null;
  }
}

/**
 * The status line for `width` terminal cells, or null when no field has data. The working
 * directory gives way first (cut from the left), then the line is cut at the right.
 */
export function formatStatusLine(
  facts: StatusFacts,
  fields: readonly StatusField[],
  width: number,
  style: Pick<Style, "dim">,
): string | null {
  const parts = fields
    .map((field) => ({ field, text: fieldText(field, facts) }))
    .filter((p): p is { field: StatusField; text: string } => p.text !== null && p.text !== "");
  if (parts.length === 0) return null;
  const sep = " · ";
  const join = () => parts.map((p) => p.text).join(sep);
  const cwd = parts.find((p) => p.field === "cwd");
  if (cwd && displayWidth(join()) > width) {
    const others = displayWidth(join()) - displayWidth(cwd.text);
    cwd.text = shortenPath(cwd.text, Math.max(0, width - others));
    if (cwd.text === "") parts.splice(parts.indexOf(cwd), 1);
  }
  return style.dim(truncateToWidth(join(), Math.max(1, width)));
}
