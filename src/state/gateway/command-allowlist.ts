/**
 * The approvals "always allow" list: pattern keys (and exact commands) the user answered "always"
 * for, which approve matching commands without asking again (see `isCommandAllowlisted`). In a
 * file home it is `command_allowlist` in config.yaml, edited in place so comments stay; with the
 * PostgreSQL backend it is a table every instance shares (`pgCommandAllowlist`), so an "always"
 * given through one instance holds on all of them.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../../config/errors.js";
import { configPath } from "../../config/home.js";
import { setConfigValue } from "../../config/write.js";
import { parseYaml } from "../../config/yaml-doc.js";
import { withFileLock } from "../../util/file-lock.js";

/** The "always allow" list (asynchronous: a database may stand behind it). */
export interface CommandAllowlist {
  /** Every entry, oldest first. */
  list(): Promise<string[]>;
  /** Adds an entry; false when it was listed already (nothing changes then). */
  add(entry: string): Promise<boolean>;
  /** Removes an entry; false when it was not listed. */
  remove(entry: string): Promise<boolean>;
}

/** An entry no backend should keep (blank, or holding NUL); nothing was written. */
export class CommandAllowlistError extends Error {
  override name = "CommandAllowlistError";
}

/** `entry` when it may be stored; throws {@link CommandAllowlistError} otherwise. */
export function checkAllowlistEntry(entry: string): string {
  if (typeof entry !== "string" || entry.trim() === "") {
    throw new CommandAllowlistError("An allowlist entry must be a non-empty pattern key or command.");
  }
  if (entry.includes("\u0000")) {
    throw new CommandAllowlistError("An allowlist entry cannot contain a NUL character.");
  }
  return entry;
}

export interface ConfigAllowlistOptions {
  /** How long a change waits for another process editing the list (default 10 s). */
  lockTimeoutMs?: number;
}

/**
 * `command_allowlist` as written in config.yaml: entries are taken literally, never with `${VAR}`
 * substituted (the user approved the text they saw). Throws {@link ConfigError} when the file does
 * not parse or the key is not a list.
 */
export function readConfigAllowlist(home: string): string[] {
  const file = configPath(home);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new ConfigError(`cannot read the file (${(error as Error).message})`, { file });
  }
  const raw: unknown = parseYaml(text, file, { allowDuplicateKeys: true }).doc.toJS({ maxAliasCount: 1000 });
  const value =
    raw && typeof raw === "object" ? (raw as Record<string, unknown>)["command_allowlist"] : undefined;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new ConfigError("command_allowlist must be a list", { file, key: "command_allowlist" });
  return value.filter((e) => e !== null && e !== undefined).map(String);
}

/**
 * `command_allowlist` in `<home>/config.yaml`. Reads see edits made elsewhere (the file is read
 * each time); changes re-read the list under a lock and rewrite only that key.
 */
export function configCommandAllowlist(home: string, options: ConfigAllowlistOptions = {}): CommandAllowlist {
  const read = (): string[] => readConfigAllowlist(home);
  const change = <T>(fn: (list: string[]) => { list?: string[]; result: T }): Promise<T> =>
    withFileLock(
      configPath(home),
      () => {
        const { list, result } = fn(read());
        if (list) setConfigValue(home, "command_allowlist", JSON.stringify(list));
        return result;
      },
      { timeoutMs: options.lockTimeoutMs ?? 10_000 },
    );
  return {
    async list() {
      return read();
    },
    async add(entry) {
      checkAllowlistEntry(entry);
      return change((list) =>
        list.includes(entry) ? { result: false } : { list: [...list, entry], result: true },
      );
    },
    async remove(entry) {
      return change((list) =>
        list.includes(entry) ? { list: list.filter((e) => e !== entry), result: true } : { result: false },
      );
    },
  };
}
