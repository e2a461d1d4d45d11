/**
 * Hermes's log files under `<HERMES_HOME>/logs/`, laid out as Python Hermes lays them out:
 * - `agent.log`: every component at `logging.level` and above (INFO by default);
 * - `errors.log`: WARNING and above from every component;
 * - `gateway.log`: the gateway's components (`gateway`, `gateway.*`) at `logging.level` and above.
 * Each rotates by size (`logging.max_size_mb`, `logging.backup_count`; see rotating-file.ts).
 *
 * One event is one line: `<ISO time UTC> <LEVEL> <session id or -> <component>: <message> k=v…`.
 * Every text of the line (the message and each value) goes through the injected `redact` before it
 * is capped and written, then control characters (newlines included) are escaped, so a multi-line
 * error or a pasted PEM block stays one line and a crafted message cannot forge another event.
 *
 * Files are created 0600 and the folder 0700; nothing is opened before the first line is written,
 * so commands that log nothing (`--version`, `--help`) pay nothing. Writes never throw into the
 * caller: the first failure (unwritable folder, full disk) disables logging for the process with
 * one warning on stderr.
 *
 * Hand-written on purpose. pino/pino-roll and winston write asynchronously (a worker thread or a
 * stream): lines still buffered are lost when the CLI calls `process.exit` or crashes, and their
 * import costs start-up time the one-shot CLI does not have. log4js's `fileSync` appender is
 * synchronous but keeps its own byte count per process, so the CLI and the gateway appending to
 * one file would each rotate it (shifting backups twice). What is needed is small: a formatted,
 * redacted line per call and one synchronous append (a few microseconds, see rotating-file.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { redactText } from "./redact.js";
import { RotatingFile } from "./rotating-file.js";

export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

/** Longest message and longest `key=value` value written (after redaction); the rest is counted. */
export const MAX_MESSAGE_CHARS = 4000;
export const MAX_VALUE_CHARS = 300;

export type LogValue = string | number | boolean | null | undefined;
/** Compact `key=value` facts appended to the line; `undefined` values are left out. */
export type LogExtras = Readonly<Record<string, LogValue>>;

export interface Logger {
  /** Whether a line at `level` is written anywhere: skip building costly extras when not. */
  enabled(level: LogLevel): boolean;
  debug(message: string, extras?: LogExtras): void;
  info(message: string, extras?: LogExtras): void;
  warning(message: string, extras?: LogExtras): void;
  error(message: string, extras?: LogExtras): void;
  /** The same files, another component and/or session id (`undefined` keeps this one's). */
  child(scope: { component?: string; sessionId?: string | undefined }): Logger;
}

export interface LogSinkOptions {
  /** The logs folder, normally `<HERMES_HOME>/logs` (created 0700 on the first write). */
  dir: string;
  /** Least level written to agent.log and gateway.log (errors.log always takes WARNING+). */
  level?: LogLevel;
  /** Rotation size per file; 0 never rotates. Default 5 MiB. */
  maxBytes?: number;
  /** Rotated copies kept per file. Default 3. */
  backupCount?: number;
  /** Applied to every line before it is written (the secret redactor). Default: identity. */
  redact?: (text: string) => string;
  /** Told once when logging is disabled by a write failure. Default: a line on stderr. */
  onDisabled?: (message: string) => void;
  now?: () => Date;
}

/** Parses a `logging.level` value; undefined for anything that is not a level. */
export function parseLogLevel(value: unknown): LogLevel | undefined {
  if (typeof value !== "string") return undefined;
  const name = value.trim().toUpperCase();
  if (name === "WARN") return "WARNING";
  if (name === "CRITICAL" || name === "FATAL") return "ERROR";
  return name in RANK ? (name as LogLevel) : undefined;
}

/**
 * The sink settings from config.yaml's `logging:` section: `level` (DEBUG|INFO|WARNING|ERROR,
 * default INFO; `verbose` lowers it to DEBUG), `max_size_mb` (default 5), `backup_count` (default 3).
 * Values that cannot be read fall back to the defaults.
 */
export function loggingSettings(
  section: unknown,
  options: { verbose?: boolean } = {},
): { level: LogLevel; maxBytes: number; backupCount: number } {
  const s = section && typeof section === "object" ? (section as Record<string, unknown>) : {};
  const size = Number(s["max_size_mb"]);
  const count = Number(s["backup_count"]);
  return {
    level: options.verbose ? "DEBUG" : (parseLogLevel(s["level"]) ?? "INFO"),
    maxBytes: Math.round((Number.isFinite(size) && size >= 0 ? size : 5) * 1024 * 1024),
    backupCount: Number.isInteger(count) && count >= 0 ? count : 3,
  };
}

/** `<home>/logs`. */
export function logsDir(home: string): string {
  return join(home, "logs");
}

// C0 controls, DEL, C1 controls and the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** Escapes every character that could end or corrupt a line (and ESC, so `cat` stays safe). */
export function escapeLine(text: string): string {
  return text.replace(
    CONTROL,
    (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}

const BARE = /^[^\s"=\\]+$/;

/** `text` cut to `max` characters with a count of what was left out. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [+${text.length - max} chars]` : text;
}

function formatValue(value: string | number | boolean | null, redact: (text: string) => string): string {
  if (typeof value !== "string") return String(value);
  const text = clip(redact(value), MAX_VALUE_CHARS);
  return BARE.test(text) ? text : `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * ` k=v k2="two words"`: undefined values left out, strings redacted, capped at `MAX_VALUE_CHARS`
 * and quoted when they hold spaces, quotes, `=` or backslashes.
 */
export function formatExtras(
  extras: LogExtras | undefined,
  redact: (text: string) => string = (t) => t,
): string {
  if (!extras) return "";
  let out = "";
  for (const [key, value] of Object.entries(extras)) {
    if (value === undefined) continue;
    out += ` ${key}=${formatValue(value, redact)}`;
  }
  return out;
}

/** A field that must stay one word (session id, component). */
const word = (text: string | undefined): string => (text ? text.replace(/\s+/g, "_") : "-");

/**
 * One finished log line (with its newline). The message and every string value go through
 * `redact` before they are capped, so a cut never leaves part of a secret the redactor would
 * have recognised whole; then control characters are escaped. Pure.
 */
export function formatLogLine(
  record: {
    time: Date;
    level: LogLevel;
    sessionId?: string | undefined;
    component: string;
    message: string;
    extras?: LogExtras | undefined;
  },
  redact: (text: string) => string = (t) => t,
): string {
  const head = `${record.time.toISOString()} ${record.level} ${word(record.sessionId)} ${word(record.component)}:`;
  const message = clip(redact(record.message), MAX_MESSAGE_CHARS);
  return `${escapeLine(`${head} ${message}${formatExtras(record.extras, redact)}`)}\n`;
}

/** Whether a component's lines also go to gateway.log. */
const isGateway = (component: string): boolean => component === "gateway" || component.startsWith("gateway.");

/** The files of one logs folder, shared by every logger made from it. */
class LogSink {
  private readonly minimum: number;
  private readonly files = new Map<string, RotatingFile>();
  private disabled = false;
  private dirReady = false;

  constructor(private readonly options: LogSinkOptions) {
    this.minimum = RANK[options.level ?? "INFO"];
  }

  enabled(level: LogLevel): boolean {
    return !this.disabled && RANK[level] >= Math.min(this.minimum, RANK.WARNING);
  }

  write(
    level: LogLevel,
    component: string,
    sessionId: string | undefined,
    message: string,
    extras?: LogExtras,
  ) {
    if (!this.enabled(level)) return;
    let file = "";
    try {
      const line = formatLogLine(
        { time: (this.options.now ?? (() => new Date()))(), level, sessionId, component, message, extras },
        this.options.redact,
      );
      const rank = RANK[level];
      if (rank >= this.minimum) {
        file = "agent.log";
        this.file(file).append(line);
        if (isGateway(component)) {
          file = "gateway.log";
          this.file(file).append(line);
        }
      }
      if (rank >= RANK.WARNING) {
        file = "errors.log";
        this.file(file).append(line);
      }
    } catch (error) {
      this.disable(file, error);
    }
  }

  private file(name: string): RotatingFile {
    let file = this.files.get(name);
    if (!file) {
      if (!this.dirReady) {
        mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
        this.dirReady = true;
      }
      file = new RotatingFile(join(this.options.dir, name), {
        maxBytes: this.options.maxBytes ?? 5 * 1024 * 1024,
        backupCount: this.options.backupCount ?? 3,
        mode: 0o600,
      });
      this.files.set(name, file);
    }
    return file;
  }

  private disable(file: string, error: unknown): void {
    this.disabled = true;
    for (const f of this.files.values()) f.close();
    const where = file ? join(this.options.dir, file) : this.options.dir;
    const reason = error instanceof Error ? error.message : String(error);
    const message = `logging is off for this run: could not write ${where}: ${reason}`;
    try {
      (this.options.onDisabled ?? ((m) => process.stderr.write(`hermes: warning: ${m}\n`)))(message);
    } catch {
      // Nowhere left to report it.
    }
  }
}

class SinkLogger implements Logger {
  constructor(
    private readonly sink: LogSink,
    private readonly component: string,
    private readonly sessionId: string | undefined,
  ) {}

  enabled(level: LogLevel): boolean {
    return this.sink.enabled(level);
  }
  debug(message: string, extras?: LogExtras): void {
    this.sink.write("DEBUG", this.component, this.sessionId, message, extras);
  }
  info(message: string, extras?: LogExtras): void {
    this.sink.write("INFO", this.component, this.sessionId, message, extras);
  }
  warning(message: string, extras?: LogExtras): void {
    this.sink.write("WARNING", this.component, this.sessionId, message, extras);
  }
  error(message: string, extras?: LogExtras): void {
    this.sink.write("ERROR", this.component, this.sessionId, message, extras);
  }
  child(scope: { component?: string; sessionId?: string | undefined }): Logger {
    return new SinkLogger(this.sink, scope.component ?? this.component, scope.sessionId ?? this.sessionId);
  }
}

/** A logger writing the logs folder `options.dir`; `component` names its lines (default "hermes"). */
export function createLogger(options: LogSinkOptions, component = "hermes"): Logger {
  return new SinkLogger(new LogSink(options), component, undefined);
}

/**
 * The home's logger from config.yaml's `logging:` section (see `loggingSettings`). Opens nothing
 * until the first line.
 */
export function homeLogger(
  home: string,
  section: unknown,
  options: {
    component?: string;
    verbose?: boolean;
    redact?: (text: string) => string;
    onDisabled?: (message: string) => void;
  } = {},
): Logger {
  const settings = loggingSettings(section, { verbose: options.verbose === true });
  return createLogger(
    {
      dir: logsDir(home),
      ...settings,
      // The home's logs go through the process's one redactor unless a caller brings its own.
      redact: options.redact ?? redactText,
      ...(options.onDisabled ? { onDisabled: options.onDisabled } : {}),
    },
    options.component,
  );
}

/** A logger that writes nothing (library callers and tests that do not log). */
export const silentLogger: Logger = {
  enabled: () => false,
  debug: () => undefined,
  info: () => undefined,
  warning: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
