/**
 * Who the agent is: `SOUL.md` from the home when it has one, else the built-in identity. SOUL.md
 * is capped and scanned like a project context file; a blocked SOUL.md falls back to the default
 * identity with a note saying why, so the agent still knows who it is.
 */
import { join } from "node:path";
import type { ThreatFinding } from "../../knowledge/threats.js";
import { blockedNotice, capText, contextMaxChars, readPromptFile, scanContext } from "./context-text.js";
import { DEFAULT_IDENTITY } from "./layers.js";

export { DEFAULT_IDENTITY };

export interface Identity {
  /** The identity text as it goes into the prompt. */
  text: string;
  source: "default" | "soul";
  /** Path of SOUL.md when it was read (used or blocked). */
  file?: string;
  blocked?: ThreatFinding[];
  truncated: boolean;
  /** Why SOUL.md was not used although it exists (binary, unreadable). */
  warning?: string;
}

/**
 * The identity for a home. Missing or empty SOUL.md gives the default; a SOUL.md with injection
 * findings gives the default plus a BLOCKED note. `maxChars` caps SOUL.md like a context file.
 */
export function loadIdentity(home: string, options: { maxChars?: number | null } = {}): Identity {
  const file = join(home, "SOUL.md");
  const read = readPromptFile(file);
  if (!read.ok) {
    const skipped = read.reason === "binary" || read.reason === "unreadable" || read.reason === "too_large";
    return {
      text: DEFAULT_IDENTITY,
      source: "default",
      truncated: false,
      ...(skipped
        ? { file, warning: `${file} was skipped: ${read.reason}${read.detail ? ` (${read.detail})` : ""}.` }
        : {}),
    };
  }
  const capped = capText(read.text, contextMaxChars(options.maxChars), "SOUL.md", file);
  const findings = scanContext(capped.text);
  if (findings.length > 0) {
    return {
      text: `${DEFAULT_IDENTITY}\n\n${blockedNotice(file, findings)}`,
      source: "default",
      file,
      blocked: findings,
      truncated: false,
    };
  }
  return { text: capped.text, source: "soul", file, truncated: capped.truncated };
}
