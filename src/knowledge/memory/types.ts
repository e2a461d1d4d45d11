/**
 * Bounded, file-backed memory in Python Hermes's format: `memories/MEMORY.md` (the agent's notes)
 * and `memories/USER.md` (the user profile). Entries are plain text, possibly multi-line, joined by
 * a line holding only `§` (`"\n§\n"`). Limits are in characters of the joined file.
 */

export type MemoryTarget = "memory" | "user";

export const ENTRY_DELIMITER = "\n§\n";

export interface MemoryLimits {
  memory: number;
  user: number;
}

export type MemoryAction = "add" | "replace" | "remove";

export interface MemoryOperation {
  action: MemoryAction;
  /** The new entry text (add, replace). */
  content?: string;
  /** A short substring that identifies exactly one entry (replace, remove). */
  old_text?: string;
}

/**
 * The result of a memory operation, returned to the model as the tool result. On failure it
 * carries what the model needs to fix the call: the current entries and usage (over the limit, no
 * match), or the matching entries (ambiguous `old_text`).
 */
export interface MemoryResult {
  success: boolean;
  target: MemoryTarget;
  message?: string;
  error?: string;
  /** `"67% — 1,474/2,200 chars"` on success, `"1,474/2,200"` with errors. */
  usage?: string;
  entry_count?: number;
  current_entries?: string[];
  matches?: string[];
  /** Set when a hand-edited file was kept and copied aside instead of rewritten. */
  backup?: string;
}
