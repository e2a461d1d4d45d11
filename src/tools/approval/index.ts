/**
 * Command approval: the analyser (`analyseCommand`) and the two calls the terminal tool and the
 * approval policy make. See analyse.ts for how a command is judged.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { analyseCommand } from "./analyse.js";
import { guardRoots } from "./protected-paths.js";
import type { AnalysisContext, CommandVerdict } from "./types.js";

export { analyseCommand, findingsOf, MAX_DEPTH, verdict } from "./analyse.js";
export type { AnalysisContext, CommandVerdict, Finding, ScriptLanguage } from "./types.js";

/** The context of this process: its cwd, $HOME and $HERMES_HOME (for callers that have no better one). */
export function processContext(
  cwd = process.cwd(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): AnalysisContext {
  const home = env.HOME ?? homedir();
  const hermesHome = env.HERMES_HOME ?? join(home, ".hermes");
  return { cwd, home, hermesHome, roots: guardRoots(hermesHome, env) };
}

/**
 * Classifies a shell command. Safe commands return `dangerous: false` with no findings. When
 * several findings apply, a hardline one decides, then the first found; `reason` lists them all.
 */
export function detectDangerousCommand(
  command: string,
  ctx: AnalysisContext = processContext(),
): CommandVerdict {
  return analyseCommand(command, ctx);
}

/**
 * Whether `command_allowlist` (entries persisted from the user's "always" answers: pattern keys or
 * exact commands) approves this command: an exact match of the trimmed command, or every finding's
 * key is listed. Never for hardline commands, and never for protected paths (only an explicit
 * answer from the user approves those). A command with no finding is allowlisted only by an exact
 * entry.
 */
export function isCommandAllowlisted(
  command: string,
  allowlist: readonly string[],
  ctx: AnalysisContext = processContext(),
): boolean {
  const v = analyseCommand(command, ctx);
  if (v.hardline || v.protectedPath) return false;
  const trimmed = command.trim();
  if (allowlist.some((entry) => entry.trim() === trimmed)) return true;
  return v.findings.length > 0 && v.findings.every((f) => allowlist.includes(f.key));
}
