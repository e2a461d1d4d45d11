/**
 * Whether `<home>/.env` can be trusted as written: every line a comment, a blank or an assignment
 * (`NAME=value`, `export NAME=value`, `NAME: value`, quoted values over several lines), text in
 * UTF-8 without NUL bytes. dotenv itself skips what it cannot read, so a garbled edit (an
 * unterminated quote, a half-written line) would otherwise be read as a different set of
 * variables; the running gateway keeps its last good allowlists instead (see
 * `gateway/auth/live-allowlist.ts`), and the writers warn about it.
 */
import { readFileSync } from "node:fs";
import { envPath } from "./home.js";

const ASSIGNMENT = /^\s*(?:export\s+)?[\w.-]+(?:\s*=|:\s)\s*(.*)$/;

/** Why `.env`'s text cannot be trusted, or undefined when every line is a comment, blank or assignment. */
export function envFileProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "it holds NUL bytes (not a text file)";
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const match = ASSIGNMENT.exec(line);
    if (!match) return `line ${i + 1} is not NAME=value`;
    const value = match[1] ?? "";
    const quote = value[0];
    if (quote !== '"' && quote !== "'" && quote !== "`") continue;
    let j = i;
    let rest = value.slice(1);
    while (!closes(rest, quote)) {
      j++;
      if (j >= lines.length) return `line ${i + 1} opens a ${quote} quote that never closes`;
      rest = lines[j] ?? "";
    }
    i = j;
  }
  return undefined;
}

function closes(text: string, quote: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return true;
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** `envFileProblem` for the file's bytes, with a UTF-8 check first. */
export function envBytesProblem(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return "it is not UTF-8 text";
  }
  return envFileProblem(text);
}

/** The problem of `<home>/.env` as it is now; undefined when it is fine or missing. */
export function envFileProblemAt(home: string): string | undefined {
  try {
    return envBytesProblem(readFileSync(envPath(home)));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? undefined : `it cannot be read (${code ?? String(error)})`;
  }
}
