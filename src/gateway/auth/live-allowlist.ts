/**
 * The allowlist settings a running gateway decides with, kept current with `<home>/.env`: each
 * authorization asks `current()`, which costs one `stat` of the file while it stays the same and
 * re-reads it when it changed (inode, mtime or size; see `StampedFileCache`). So an edit from the
 * dashboard, `hermes config set` or a text editor counts from the very next message: a user
 * removed from `<PLATFORM>_ALLOWED_USERS` is refused at once.
 *
 * Only the names that decide who may talk are taken from the file (`*_ALLOWED_USERS`,
 * `*_ALLOW_ALL_USERS`, `*_UNAUTHORIZED_DM_BEHAVIOR`); a name set in the real process environment
 * still wins over the file, as at start. A file that cannot be read or is garbled (a line that is
 * no assignment, a quote that never closes, bytes that are not text) changes nothing: the last good
 * settings stay and one warning says why. A deleted file takes its names away (deny by default).
 */
import { parse } from "dotenv";
import { envBytesProblem } from "../../config/env-file-check.js";
import { envPath } from "../../config/home.js";
import type { Env } from "../../state/gateway/allowlist.js";
import { StampedFileCache } from "../../util/stamped-cache.js";

/** Names the gateway's authorization reads. */
export function isAuthEnvName(name: string): boolean {
  return /^[A-Z0-9_]+_(ALLOWED_USERS|ALLOW_ALL_USERS|UNAUTHORIZED_DM_BEHAVIOR)$/.test(name);
}

class MalformedEnvFile extends Error {}

/** `.env`'s authorization names, or MalformedEnvFile. */
function parseAuthNames(bytes: Buffer): Readonly<Record<string, string>> {
  const problem = envBytesProblem(bytes);
  if (problem) throw new MalformedEnvFile(problem);
  const names: Record<string, string> = {};
  for (const [name, value] of Object.entries(parse(bytes.toString("utf8")))) {
    if (isAuthEnvName(name)) names[name] = value;
  }
  return Object.freeze(names);
}

export interface LiveAuthEnvOptions {
  home: string;
  /** The gateway's environment at start (real environment plus `.env`). */
  env: Env;
  /**
   * The real process environment, whose names win over the file. Absent: every name of `env` the
   * file did not give at start (with the same value) counts as the real environment's.
   */
  processEnv?: Env | undefined;
  /** One line for a file that cannot be used (said once per problem). */
  warn: (line: string) => void;
  /** Clock for the stamp cache's racy-write window, for tests. */
  now?: () => number;
}

export class LiveAuthEnv {
  private readonly path: string;
  private readonly cache: StampedFileCache<Readonly<Record<string, string>>>;
  private readonly fixed: ReadonlySet<string>;
  private readonly startEnv: Env;
  private lastVars: Readonly<Record<string, string>> | undefined;
  private lastEnv: Env;
  private lastProblem: string | undefined;

  constructor(private readonly options: LiveAuthEnvOptions) {
    this.path = envPath(options.home);
    this.cache = new StampedFileCache(parseAuthNames, {
      max: 1,
      ...(options.now ? { now: options.now } : {}),
    });
    this.startEnv = options.env;
    this.lastEnv = options.env;
    let atStart: Readonly<Record<string, string>> = {};
    try {
      atStart = this.cache.read(this.path) ?? {};
    } catch {
      // The gateway started with what dotenv made of it; the first good version replaces that.
    }
    const real = options.processEnv;
    this.fixed = new Set(
      Object.keys(options.env).filter(
        (name) =>
          isAuthEnvName(name) &&
          (real
            ? real[name] !== undefined
            : options.env[name] !== undefined && atStart[name] !== options.env[name]),
      ),
    );
  }

  /** The environment to authorize with now. */
  current(): Env {
    let vars: Readonly<Record<string, string>>;
    try {
      vars = this.cache.read(this.path) ?? {};
    } catch (error) {
      const why =
        error instanceof MalformedEnvFile
          ? error.message
          : `it cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
      if (why !== this.lastProblem) {
        this.lastProblem = why;
        this.options.warn(
          `${this.path} was not applied: ${why}; the allowlists in force before still apply until it is fixed`,
        );
      }
      return this.lastEnv;
    }
    this.lastProblem = undefined;
    if (vars === this.lastVars) return this.lastEnv;
    const next: Record<string, string | undefined> = { ...this.startEnv };
    for (const name of Object.keys(next)) if (isAuthEnvName(name) && !this.fixed.has(name)) delete next[name];
    for (const [name, value] of Object.entries(vars)) if (!this.fixed.has(name)) next[name] = value;
    this.lastVars = vars;
    this.lastEnv = next;
    return next;
  }
}
