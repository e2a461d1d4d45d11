/**
 * Upstream's runtime footer on gateway replies: when `display.runtime_footer.enabled` is true
 * (off by default), the final message of a turn ends with one line of runtime facts,
 * `fake-model · 12% · ~/project`, after a blank line. Only the final answer carries it, never
 * progress lines or streamed pieces. `display.platforms.<platform>.runtime_footer` overrides the
 * global block per platform (`enabled`, `fields`). Fields are upstream's `model`, `context_pct`
 * and `cwd`, in the order listed; a field without data is left out and unknown names are ignored,
 * so a partial footer is shown rather than one with `?` in it. Pure.
 */
import type { CommandSession } from "./types.js";

export const FOOTER_FIELDS = ["model", "context_pct", "cwd"] as const;
export type FooterField = (typeof FOOTER_FIELDS)[number];

export interface FooterSettings {
  enabled: boolean;
  fields: string[];
}

export interface FooterFacts {
  model: string;
  /** Tokens in the last request (how full the context is). */
  contextTokens: number;
  /** The context window; null or 0 when unknown (the percentage is then left out). */
  contextLength: number | null;
  cwd: string;
  /** The host user's home directory, shown as `~`. */
  home?: string | undefined;
}

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function overlay(settings: FooterSettings, block: unknown): void {
  const footer = record(block);
  if ("enabled" in footer) settings.enabled = footer["enabled"] === true;
  const fields = footer["fields"];
  if (Array.isArray(fields) && fields.length > 0) settings.fields = fields.map((f) => String(f));
}

/** The footer settings for `platform`: defaults, then `display.runtime_footer`, then the platform's. */
export function footerSettings(display: unknown, platform: string): FooterSettings {
  const settings: FooterSettings = { enabled: false, fields: [...FOOTER_FIELDS] };
  const d = record(display);
  overlay(settings, d["runtime_footer"]);
  overlay(settings, record(record(d["platforms"])[platform])["runtime_footer"]);
  return settings;
}

/** `cwd` with the home directory folded to `~`. */
function homeRelative(cwd: string, home: string | undefined): string {
  if (!home || home === "/") return cwd;
  const base = home.endsWith("/") ? home.slice(0, -1) : home;
  if (cwd === base) return "~";
  return cwd.startsWith(`${base}/`) ? `~${cwd.slice(base.length)}` : cwd;
}

/** The footer line for `fields`; "" when no field has data. */
export function formatFooter(facts: FooterFacts, fields: readonly string[]): string {
  const parts: string[] = [];
  for (const field of fields) {
    const name = field.trim().toLowerCase();
    if (name === "model") {
      // `openai/gpt-5.4` reads as `gpt-5.4`.
      const short = facts.model.slice(facts.model.lastIndexOf("/") + 1);
      if (short) parts.push(short);
    } else if (name === "context_pct") {
      const window = facts.contextLength;
      if (window && window > 0 && facts.contextTokens >= 0) {
        parts.push(`${Math.max(0, Math.min(100, Math.round((facts.contextTokens / window) * 100)))}%`);
      }
    } else if (name === "cwd") {
      if (facts.cwd) parts.push(homeRelative(facts.cwd, facts.home));
    }
  }
  return parts.join(" · ");
}

/**
 * The footer for a reply on `platform`, or "" when it is off or has nothing to show. `facts` is
 * called only when the footer is on (it reads the session's usage from the store).
 */
export function runtimeFooter(display: unknown, platform: string, facts: () => FooterFacts): string {
  const settings = footerSettings(display, platform);
  return settings.enabled ? formatFooter(facts(), settings.fields) : "";
}

/** The facts of a conversation for its footer: the model, how full its context is, its cwd. */
export function sessionFooterFacts(
  session: Pick<CommandSession, "contextReport" | "agent">,
  home: string | undefined,
): FooterFacts {
  const report = session.contextReport();
  return {
    model: report.model,
    contextTokens: report.contextTokens,
    contextLength: report.contextLength,
    cwd: session.agent.cwd,
    home,
  };
}
