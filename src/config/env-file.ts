/**
 * `<home>/.env`: the secrets file Python Hermes shares with us. Read with dotenv; written line by
 * line so the user's comments, ordering and unrelated entries survive.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { parse } from "dotenv";
import { atomicWriteFileSync } from "../util/atomic-write.js";
import { StampedFileCache } from "../util/stamped-cache.js";
import { ConfigError } from "./errors.js";
import { envPath } from "./home.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface EnvFileResult {
  /** A new object: the real environment plus the file's variables the environment lacked. */
  env: Record<string, string | undefined>;
  /** Names taken from the file (those the real environment did not already define). */
  loaded: string[];
  path: string;
  exists: boolean;
}

/**
 * Loads `<home>/.env` without overriding the real environment: a variable already present in `env`
 * (even as an empty string) wins over the file. Does not touch `process.env`; the caller decides
 * whether to apply the result. A missing file gives a copy of `env`.
 */
export function loadEnvFile(home: string, env: Env): EnvFileResult {
  const path = envPath(home);
  const merged: Record<string, string | undefined> = { ...env };
  let vars: Record<string, string> | undefined;
  try {
    vars = parsedEnvFiles.read(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { env: merged, loaded: [], path, exists: false };
    throw new ConfigError(`cannot read the file (${code ?? String(error)})`, { file: path });
  }
  if (vars === undefined) return { env: merged, loaded: [], path, exists: false };
  const loaded: string[] = [];
  for (const [name, value] of Object.entries(vars)) {
    if (Object.hasOwn(merged, name) && merged[name] !== undefined) continue;
    merged[name] = value;
    loaded.push(name);
  }
  return { env: merged, loaded, path, exists: true };
}

/**
 * Parsed `.env` files by stamp: every agent a server starts reads the file (which names it added
 * to the environment), so it is parsed again only when it changed.
 */
const parsedEnvFiles = new StampedFileCache((bytes) => Object.freeze(parse(bytes.toString("utf8"))));

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True for a name usable as an environment variable (`OPENROUTER_API_KEY`). */
export function isValidEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/**
 * Sets `name=value` in `<home>/.env`: replaces an existing assignment (later duplicates of the same
 * name are removed so the new value is the one that counts), or appends one. Other lines and
 * comments are kept. The file is written atomically with mode 0600. Returns the file's path.
 */
export function setEnvVar(home: string, name: string, value: string): string {
  if (!isValidEnvName(name)) {
    throw new ConfigError(`invalid environment variable name ${JSON.stringify(name)}`, { key: name });
  }
  const path = envPath(home);
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const line = `${name}=${quoteEnvValue(name, value)}`;
  mkdirSync(home, { recursive: true });
  atomicWriteFileSync(path, replaceAssignment(text, name, line), { mode: 0o600 });
  return path;
}

/**
 * Removes every assignment of `name` from `<home>/.env` (a quoted value spanning lines goes whole);
 * other lines are kept, the file stays 0600. Returns true when one was there. A missing file: false.
 */
export function removeEnvVar(home: string, name: string): boolean {
  if (!isValidEnvName(name)) {
    throw new ConfigError(`invalid environment variable name ${JSON.stringify(name)}`, { key: name });
  }
  const path = envPath(home);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  if (!text.split(/\r?\n/).some((l) => new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=`).test(l))) return false;
  // The assignment (however many lines) becomes one marker line, which is then dropped.
  const marker = "\u0000hermes-removed\u0000";
  const replaced = replaceAssignment(text, name, marker);
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const kept = replaced.split(/\r?\n/).filter((l) => l !== marker);
  atomicWriteFileSync(path, kept.join(eol), { mode: 0o600 });
  return true;
}

/** Pure: `text` with every assignment of `name` replaced by `line` (once, at the first place). */
export function replaceAssignment(text: string, name: string, line: string): string {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.length === 0 ? [] : text.split(/\r?\n/);
  const trailingNewline = text.endsWith("\n");
  if (trailingNewline) lines.pop();
  const start = new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=\\s*(.*)$`);
  const out: string[] = [];
  let replaced = false;
  for (let i = 0; i < lines.length; i++) {
    const match = start.exec(lines[i] ?? "");
    if (!match) {
      out.push(lines[i] ?? "");
      continue;
    }
    i = endOfAssignment(lines, i, match[1] ?? "");
    if (!replaced) out.push(line);
    replaced = true;
  }
  if (!replaced) out.push(line);
  return `${out.join(eol)}${eol}`;
}

/** Index of the last line of an assignment whose quoted value may span several lines. */
function endOfAssignment(lines: readonly string[], index: number, value: string): number {
  const quote = value[0];
  if (quote !== '"' && quote !== "'" && quote !== "`") return index;
  if (closesQuote(value.slice(1), quote)) return index;
  for (let j = index + 1; j < lines.length; j++) {
    if (closesQuote(lines[j] ?? "", quote)) return j;
  }
  // Unterminated: dotenv reads it as a one-line value, so only this line is the assignment.
  return index;
}

function closesQuote(text: string, quote: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return true;
  }
  return false;
}

const PLAIN_VALUE = /^[A-Za-z0-9_\-.,:/@+=%~^]*$/;

/**
 * Quotes a value so Node's dotenv and Python's python-dotenv read back the same string: plain when
 * safe, else single quotes (literal in both), else double quotes. Values the two libraries would
 * read differently are refused rather than stored wrongly.
 */
export function quoteEnvValue(name: string, value: string): string {
  if (PLAIN_VALUE.test(value)) return value;
  // python-dotenv expands ${VAR} whatever the quoting; Node's dotenv never does.
  if (value.includes("${")) throw unportable(name);
  // python-dotenv unescapes \\ and \' inside single quotes; Node's dotenv does not.
  if (!value.includes("'") && !/\\[\\']/.test(value)) return `'${value}'`;
  // In double quotes python-dotenv decodes backslash escapes; Node's dotenv does not.
  if (!/["\\$\r\n]/.test(value)) return `"${value}"`;
  throw unportable(name);
}

function unportable(name: string): ConfigError {
  return new ConfigError(
    `cannot store this value for ${name} in .env so that both Hermes versions read it the same; edit the file by hand`,
    { key: name },
  );
}
