/**
 * The prompt-injection scanner for text that ends up in a prompt: project context files, SOUL.md,
 * memory entries (tool writes and hand-edited lines at load), skills, webhook payloads and cron
 * prompts (at creation and again over the assembled prompt at run time).
 *
 * Findings belong to families (threat-patterns.ts): instruction override, exfiltration, tampering
 * with the agent's own files, jailbreak, decode-then-execute, command and control, download and
 * run, hidden text. Each family is a few patterns over normalised text, so a rewording, full-width
 * letters, Cyrillic look-alikes or a zero-width split do not get past it. Three cumulative scopes:
 *
 * - `base`: unambiguous attacks. Applies everywhere.
 * - `context`: adds identity hijack and command-and-control vocabulary, for files the agent reads
 *   but the user did not necessarily write (AGENTS.md from a cloned repo, installed skills).
 * - `strict`: adds the wider forms (any curl | sh, any "send ... to https://", persistence,
 *   secrets at rest), for content the agent itself writes (memory, skills it creates, cron
 *   prompts), where a refusal costs nothing and the model can rephrase.
 *
 * Scanning stops after 64 KiB (callers window longer text: context-text.ts `scanContext`).
 */

import { PATTERNS, type ThreatFamily, type ThreatScope } from "./threat-patterns.js";

export type { ThreatFamily, ThreatScope } from "./threat-patterns.js";

export interface ThreatFinding {
  /** Stable id, e.g. `ignore_instructions` or `invisible_unicode_U+200B`. */
  id: string;
  /** The kind of attack: `override`, `exfiltration`, `tampering`, `jailbreak`, `c2`, ... */
  family: ThreatFamily;
  /** What was found, for people: "asks to ignore previous instructions". */
  description: string;
}

export const MAX_SCAN_CHARS = 65_536;

/** People-facing names of the families, for refusals and warnings. */
export const FAMILY_NAMES: Record<ThreatFamily, string> = {
  override: "instruction override",
  exfiltration: "exfiltration",
  tampering: "tampering with the agent's instructions or config",
  jailbreak: "jailbreak",
  translate_execute: "decode-then-execute",
  c2: "command and control",
  download_execute: "download and run",
  hidden: "hidden text",
  secret: "secret",
};

/**
 * Characters that hide text from people: zero-width space/joiners, word joiner and invisible
 * operators, BOM, soft hyphen, combining grapheme joiner, bidi embeddings/overrides/isolates
 * (U+202A–202E, U+2066–2069), and the tags block (U+E0000–E007F, "ASCII smuggling").
 */
const INVISIBLE =
  /\u034F|[\u00AD\u180E\u200B-\u200F\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]/gu;
/** An emoji and its modifiers: a ZWJ between two of these is part of one emoji (woman + ZWJ + laptop). */
const EMOJI_BEFORE = String.raw`\p{Extended_Pictographic}[\u{FE0F}\u{1F3FB}-\u{1F3FF}]?`;
/**
 * Invisible characters that are ordinary text: ZWJ inside emoji sequences, ZWNJ/ZWJ between letters
 * of scripts that need them (Persian, Indic), a subdivision flag's tag sequence (🏴 + tags + U+E007F)
 * and the left-to-right/right-to-left marks between right-to-left letters.
 */
const ORDINARY_INVISIBLE = new RegExp(
  [
    String.raw`(?<=${EMOJI_BEFORE})\u200D(?=\p{Extended_Pictographic})`,
    String.raw`(?<=(?!\p{Script=Latin})[\p{L}\p{M}])[\u200C\u200D](?=(?!\p{Script=Latin})[\p{L}\p{M}])`,
    String.raw`\u{1F3F4}[\u{E0020}-\u{E007E}]{1,12}\u{E007F}`,
    String.raw`(?<=[\p{Script=Arabic}\p{Script=Hebrew}\d\s])[\u200E\u200F](?=[\p{Script=Arabic}\p{Script=Hebrew}\d\s])`,
  ].join("|"),
  "gu",
);

/**
 * Cyrillic and Greek letters drawn like Latin ones, folded so "іgnоrе" (Cyrillic і, о, е) reads as
 * "ignore". NFKC does not fold these; only letters that look the same in lower case are listed.
 */
const HOMOGLYPHS: Record<string, string> = {
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  і: "i",
  ї: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  һ: "h",
  ɡ: "g",
  ɑ: "a",
  α: "a",
  ε: "e",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
};
const TAG_CHARS = /[\u{E0020}-\u{E007E}]/gu;
const HOMOGLYPH_RE = new RegExp(`[${Object.keys(HOMOGLYPHS).join("")}]`, "gu");

/** Every hiding character in `text` that is not {@link ORDINARY_INVISIBLE}, by index. */
function hidingCharacters(text: string): Map<number, number> {
  const found = new Map<number, number>();
  // The exemptions' lookbehinds are slow over a whole file; most text has nothing to exempt.
  INVISIBLE.lastIndex = 0;
  if (!INVISIBLE.test(text)) return found;
  INVISIBLE.lastIndex = 0;
  const ordinary = new Set<number>();
  for (const match of text.matchAll(ORDINARY_INVISIBLE)) {
    for (let i = 0; i < match[0].length; i++) ordinary.add((match.index ?? 0) + i);
  }
  for (const match of text.matchAll(INVISIBLE)) {
    const at = match.index ?? 0;
    // A byte-order mark opening the file is how some editors save UTF-8.
    if (at === 0 && match[0] === "\uFEFF") continue;
    if (!ordinary.has(at)) found.set(at, match[0].codePointAt(0) ?? 0);
  }
  return found;
}

/**
 * The text the patterns read: invisible characters and `*` dropped (all of them: an emoji's ZWJ means
 * nothing to a pattern), NFKC (full-width and mathematical letters, ligatures), homoglyphs folded,
 * lower case. The original text is never changed; this is for matching only.
 */
export function normaliseForScan(text: string): string {
  return (
    text
      // Tag characters mirror ASCII and models read them ("ASCII smuggling"): read them as ASCII.
      .replace(TAG_CHARS, (c) => String.fromCharCode((c.codePointAt(0) ?? 0xe0020) - 0xe0000))
      .replace(INVISIBLE, "")
      // Markdown emphasis splits words from their neighbours ("**will** leak", "**ignore** all").
      .replace(/\*+/g, "")
      .normalize("NFKC")
      .toLowerCase()
      .replace(HOMOGLYPH_RE, (c) => HOMOGLYPHS[c] ?? c)
      .replace(/[\u2018\u2019\u02bc]/g, "'")
  );
}

const SCOPE_RANK: Record<ThreatScope, number> = { base: 0, context: 1, strict: 2 };

/**
 * Every threat found in `text` for `scope` (which includes the narrower scopes), unique by id,
 * each naming its family. Reads the first {@link MAX_SCAN_CHARS} characters.
 */
export function scanThreats(text: string, scope: ThreatScope = "context"): ThreatFinding[] {
  if (!text) return [];
  const sample = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  const findings: ThreatFinding[] = [];
  const seen = new Set<string>();
  for (const code of hidingCharacters(sample).values()) {
    const hex = code.toString(16).toUpperCase().padStart(4, "0");
    const id = `invisible_unicode_U+${hex}`;
    if (!seen.has(id)) {
      seen.add(id);
      findings.push({ id, family: "hidden", description: `contains an invisible character (U+${hex})` });
    }
  }
  const normal = normaliseForScan(sample);
  const rank = SCOPE_RANK[scope];
  for (const pattern of PATTERNS) {
    if (seen.has(pattern.id) || SCOPE_RANK[pattern.scope] > rank) continue;
    if (pattern.re.test(normal)) {
      seen.add(pattern.id);
      findings.push({ id: pattern.id, family: pattern.family, description: pattern.description });
    }
  }
  return findings;
}

/** `"instruction override: asks to ignore previous instructions (ignore_instructions)"`, joined. */
export function describeFindings(findings: readonly ThreatFinding[]): string {
  return findings.map((f) => `${FAMILY_NAMES[f.family]}: ${f.description} (${f.id})`).join("; ");
}

/**
 * A refusal for content the agent is about to write (memory, skills), naming what was found, or
 * undefined when the content is clean.
 */
export function threatRefusal(text: string, scope: ThreatScope = "strict"): string | undefined {
  const findings = scanThreats(text, scope);
  if (findings.length === 0) return undefined;
  return (
    `Refused: the content looks like prompt injection (${describeFindings(findings)}). It would be loaded into future system prompts, so it must not carry ` +
    "instructions to the agent, hidden text or ways to move secrets. Rephrase it as a plain fact."
  );
}

/** Whether the text is longer than the scanner reads (callers treat that as suspicious). */
export function tooLargeToScan(text: string): boolean {
  return text.length > MAX_SCAN_CHARS;
}
