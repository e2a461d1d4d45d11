/**
 * Input history in `HERMES_HOME/.hermes_history`, the file Python Hermes keeps (prompt_toolkit's
 * FileHistory format: each entry is a `# <timestamp>` line followed by its lines prefixed with `+`),
 * so both implementations share one history. The file is capped: when it holds far more entries than
 * are kept, it is rewritten (atomically) with the newest ones.
 */
import { appendFileSync, chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFileSync } from "../../util/atomic-write.js";

export const HISTORY_FILE_NAME = ".hermes_history";

/** Default number of entries loaded and kept. */
export const HISTORY_LIMIT = 1000;

// Things that look like credentials: never written to the history file.
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/,
  /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{16,}/,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\bAIza[0-9A-Za-z_-]{30,}/,
  /\b[A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD)\s*[=:]\s*\S{6,}/i,
];

/**
 * Whether `entry` may be written to the history file: not empty, not starting with a space (the
 * shell convention for "don't remember this"), and not looking like it holds a credential.
 */
export function shouldRemember(entry: string): boolean {
  if (entry.trim() === "") return false;
  if (entry.startsWith(" ")) return false;
  return !SECRET_PATTERNS.some((p) => p.test(entry));
}

/** Parses the FileHistory format; returns entries oldest first. Unknown lines end an entry. */
export function parseHistory(text: string): string[] {
  const entries: string[] = [];
  let lines: string[] | null = null;
  const end = () => {
    if (lines) entries.push(lines.join("\n"));
    lines = null;
  };
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.startsWith("+")) {
      lines ??= [];
      lines.push(line.slice(1));
    } else {
      end();
    }
  }
  end();
  return entries;
}

/** One entry in the FileHistory format, preceded by its timestamp comment. */
export function formatHistoryEntry(entry: string, when: Date): string {
  const stamp = when.toISOString().replace("T", " ").replace("Z", "");
  return `\n# ${stamp}\n${entry
    .split("\n")
    .map((l) => `+${l}\n`)
    .join("")}`;
}

export interface HistoryStore {
  /** Entries newest first, as readline wants them. */
  readonly entries: string[];
  /** Remembers a submitted entry (in memory always, on disk when `shouldRemember` agrees). */
  add(entry: string): void;
}

/** The history of one home. I/O errors cost the history, never the session: they are ignored. */
export class HistoryFile implements HistoryStore {
  readonly path: string;
  readonly entries: string[];
  private readonly limit: number;
  private readonly now: () => Date;

  constructor(home: string, options: { limit?: number; now?: () => Date } = {}) {
    this.path = join(home, HISTORY_FILE_NAME);
    this.limit = options.limit ?? HISTORY_LIMIT;
    this.now = options.now ?? (() => new Date());
    const all = this.read();
    if (all.length > this.limit * 2) this.compact(all.slice(-this.limit));
    this.entries = all.slice(-this.limit).reverse();
  }

  add(entry: string): void {
    if (entry.trim() === "") return;
    if (this.entries[0] !== entry) {
      this.entries.unshift(entry);
      if (this.entries.length > this.limit) this.entries.length = this.limit;
    }
    if (!shouldRemember(entry)) return;
    try {
      const fresh = !existsSync(this.path);
      appendFileSync(this.path, formatHistoryEntry(entry, this.now()), { mode: 0o600 });
      if (fresh) chmodSync(this.path, 0o600);
    } catch {
      // An unwritable home loses the history line, nothing else.
    }
  }

  private read(): string[] {
    try {
      return parseHistory(readFileSync(this.path, "utf8"));
    } catch {
      return [];
    }
  }

  private compact(keep: string[]): void {
    const when = this.now();
    try {
      atomicWriteFileSync(this.path, keep.map((e) => formatHistoryEntry(e, when)).join(""), { mode: 0o600 });
    } catch {
      // Leave the long file as it is; it still loads.
    }
  }
}
