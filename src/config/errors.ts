/**
 * Errors the config layer raises for problems the user can fix by editing a file or a command
 * line. The CLI prints `message` alone (no stack) and exits with code 2.
 */

export interface ConfigErrorDetails {
  /** File the problem is in; absent when the bad value came from the command line. */
  file?: string | undefined;
  /** 1-based line of the offending node, when known. */
  line?: number | undefined;
  /** 1-based column of the offending node, when known. */
  column?: number | undefined;
  /** Dotted config key the problem concerns, when there is one (`agent.max_turns`). */
  key?: string | undefined;
}

/**
 * A config file that does not parse, or a value of the wrong type. The message reads
 * `<file> line <n>: <what is wrong>` so it can be shown to the user as is.
 */
export class ConfigError extends Error {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly key: string | undefined;
  /** The message without the file and line prefix. */
  readonly detail: string;

  constructor(detail: string, details: ConfigErrorDetails = {}) {
    super(formatLocation(details.file, details.line) + detail);
    this.name = "ConfigError";
    this.detail = detail;
    this.file = details.file;
    this.line = details.line;
    this.column = details.column;
    this.key = details.key;
  }
}

/** A profile name that would not be a safe single directory name. */
export class ProfileNameError extends Error {
  readonly profile: string;

  constructor(profile: string, reason: string) {
    super(`invalid profile name ${JSON.stringify(profile)}: ${reason}`);
    this.name = "ProfileNameError";
    this.profile = profile;
  }
}

/**
 * A profile operation the user can fix: the sticky profile is gone, a profile already exists, a
 * reserved name. The message says what to do; the CLI prints it alone and exits 2.
 */
export class ProfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProfileError";
  }
}

function formatLocation(file: string | undefined, line: number | undefined): string {
  if (file === undefined) return "";
  return line === undefined ? `${file}: ` : `${file} line ${line}: `;
}
