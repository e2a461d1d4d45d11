/**
 * Models as a picker shows them: the provider's own list with the catalog's context windows and
 * list prices next to each id, and the rule for reading what the user typed back. Pure.
 */
import { catalogContextLength } from "./context-length.js";
import type { ListedModel } from "./model-listing.js";
import { lookupPrice } from "./pricing.js";

export interface ModelChoice {
  id: string;
  /** The listing's window, else the catalog's; undefined when neither knows. */
  contextLength?: number;
  /** USD per million tokens, from the price catalog. */
  price?: { input: number; output: number };
}

/** Each listed model with its window and price; order kept, duplicates dropped. */
export function modelChoices(models: readonly ListedModel[]): ModelChoice[] {
  const seen = new Set<string>();
  const out: ModelChoice[] = [];
  for (const m of models) {
    if (seen.has(m.id)) continue;
    seen.add(m.id);
    const contextLength = m.contextLength ?? catalogContextLength(m.id);
    const found = lookupPrice(m.id);
    out.push({
      id: m.id,
      ...(contextLength !== undefined ? { contextLength } : {}),
      ...(found ? { price: { input: found.price.input, output: found.price.output } } : {}),
    });
  }
  return out;
}

/** `128k`, `1M`, `200k`. */
export function formatTokens(tokens: number): string {
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(1))}M`;
  if (tokens >= 1000) return `${Math.round(tokens / 1000)}k`;
  return String(tokens);
}

function usd(n: number): string {
  return n === 0 ? "$0" : n < 1 ? `$${n.toFixed(2)}` : `$${Number(n.toFixed(2))}`;
}

/** One line per model, numbered from 1: `  3. id   200k ctx   $3/$15 per Mtok`; `current` is marked. */
export function formatModelLines(choices: readonly ModelChoice[], current?: string): string[] {
  const width = Math.min(48, Math.max(0, ...choices.map((c) => c.id.length)));
  const numberWidth = String(choices.length).length;
  return choices.map((c, i) => {
    const facts: string[] = [];
    if (c.contextLength !== undefined) facts.push(`${formatTokens(c.contextLength)} ctx`);
    if (c.price) facts.push(`${usd(c.price.input)}/${usd(c.price.output)} per Mtok`);
    const mark = c.id === current ? " (current)" : "";
    const n = String(i + 1).padStart(numberWidth);
    return `  ${n}. ${c.id.padEnd(width)}${facts.length ? `  ${facts.join("  ")}` : ""}${mark}`.trimEnd();
  });
}

/**
 * What the user picked from `choices`: a number from the list, an exact id, or the one id that
 * starts with (or, failing that, contains) the text. `free` lets an unlisted id through as typed
 * (a provider whose list is partial); otherwise it is an error naming the nearest ids.
 */
export function pickModel(
  answer: string,
  choices: readonly ModelChoice[],
  options: { free?: boolean } = {},
): { ok: true; id: string } | { ok: false; message: string } {
  const text = answer.trim();
  if (text === "") return { ok: false, message: "Type a number from the list or a model id." };
  if (/^\d+$/.test(text)) {
    const chosen = choices[Number(text) - 1];
    if (chosen) return { ok: true, id: chosen.id };
    return { ok: false, message: `${text} is not in the list (1-${choices.length}).` };
  }
  const exact =
    choices.find((c) => c.id === text) ?? choices.find((c) => c.id.toLowerCase() === text.toLowerCase());
  if (exact) return { ok: true, id: exact.id };
  const lower = text.toLowerCase();
  const starts = choices.filter((c) => c.id.toLowerCase().startsWith(lower));
  const matches = starts.length > 0 ? starts : choices.filter((c) => c.id.toLowerCase().includes(lower));
  if (matches.length === 1 && matches[0]) return { ok: true, id: matches[0].id };
  if (options.free) return { ok: true, id: text };
  if (matches.length > 1) {
    const names = matches.slice(0, 5).map((c) => c.id);
    return {
      ok: false,
      message: `"${text}" matches several models: ${names.join(", ")}${matches.length > 5 ? ", …" : ""}.`,
    };
  }
  return { ok: false, message: `"${text}" is not one of the ${choices.length} listed models.` };
}
