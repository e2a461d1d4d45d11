/**
 * Contracts shared by the command analyser (shell), the interpreter-code analyser (python, perl,
 * node, ruby, php one-liners, heredocs and `execute_code` scripts) and the callers that act on a
 * verdict (terminal, execute_code, file tools, MCP filesystem servers).
 */
import type { GuardRoots } from "./protected-paths.js";

/** One reason a command needs a decision. */
export interface Finding {
  /** Stable key for "approve for this session/always" and for tests: `recursive_delete`. */
  key: string;
  /** Human-readable reason: "recursive delete of /home/me/project". */
  reason: string;
  /** Refused whatever the approval mode (`--yolo`, `approvals.mode: off`, `cron_mode: approve`). */
  hardline?: true;
  /**
   * Touches a protected path (Hermes's config, memory, skills, the user's login files, /etc...).
   * Refused where nobody can be asked, even when `cron_mode: approve`.
   */
  protectedPath?: true;
}

/** What the analysers need to know about where a command runs. */
export interface AnalysisContext {
  /** The directory relative paths resolve against (the shell's cwd or the call's workdir). */
  cwd: string;
  /** The user's home and Hermes's home, for `~`, `$HOME`, `$HERMES_HOME` and the protected list. */
  roots: GuardRoots;
  /** The value `~`, `$HOME` expand to (the first of `roots.homes`). */
  home: string;
  /** The value `$HERMES_HOME` expands to. */
  hermesHome: string;
  /**
   * Resolves symlinks of an absolute path as far as it exists (default: the filesystem's
   * `realpath`). Tests inject a pure one.
   */
  realPath?: (abs: string) => string;
}

/** The analysers' verdict on one command or script. */
export interface CommandVerdict {
  /** Needs a decision (approval, or refusal when hardline). */
  dangerous: boolean;
  /** Never allowed. Implies `dangerous`. */
  hardline: boolean;
  /** Some finding is about a protected path. */
  protectedPath: boolean;
  /** All distinct reasons, hardline first, joined with "; ". Absent when safe. */
  reason?: string;
  /** The key of the deciding finding (the first hardline one, else the first). */
  patternKey?: string;
  /** Every finding, deduplicated by key. Empty when safe. */
  findings: Finding[];
}

/** Languages whose code the interpreter analyser reads. */
export type ScriptLanguage = "python" | "perl" | "ruby" | "node" | "php" | "lua";
