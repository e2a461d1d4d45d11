/**
 * The guard in front of `execute_code`. A script's tool calls go through the normal tool path
 * (terminal and write_file approvals apply there), but the script can also act directly:
 * `open(path, "w")`, `os.system`, `shutil.rmtree`, `child_process`. Before it runs, the
 * interpreter-code analyser reads it: hardline findings refuse it outright, anything else needs
 * the user's approval, and a denial tells the model to use the tools instead.
 */
import { homedir } from "node:os";
import { withAdvice } from "../approval/denial.js";
import { findingsOf } from "../approval/index.js";
import { analyseScript } from "../approval/interpreters.js";
import { guardRoots } from "../approval/protected-paths.js";
import type { AnalysisContext, Finding } from "../approval/types.js";
import type { ToolContext } from "../types.js";

/** Lines of the script shown to the user in the approval prompt. */
const SUMMARY_LINES = 12;
const SUMMARY_CHARS = 1200;

/** Where the script runs, for resolving its paths: the tool's cwd, the child's HOME, Hermes's home. */
export function scriptContext(ctx: Pick<ToolContext, "cwd" | "env" | "home">): AnalysisContext {
  const home = ctx.env.HOME?.startsWith("/") ? ctx.env.HOME : homedir();
  return {
    cwd: ctx.cwd,
    home,
    hermesHome: ctx.home,
    roots: guardRoots(ctx.home, { ...ctx.env, HOME: home }),
  };
}

/**
 * Refuses or asks about a script before it runs; returns when it may run. Throws the message the
 * model reads when it is refused (hardline) or denied.
 */
export async function guardScript(
  code: string,
  language: "python" | "javascript",
  ctx: ToolContext,
  shell?: (command: string) => Finding[],
): Promise<void> {
  const where = scriptContext(ctx);
  // Commands the script runs are judged by the same shell analyser as the terminal's.
  const judgeShell = shell ?? ((command: string) => findingsOf(command, where));
  const findings = analyseScript(language === "python" ? "python" : "node", code, where, judgeShell);
  if (findings.length === 0) return;
  const hardline = findings.filter((f) => f.hardline);
  if (hardline.length > 0) {
    throw new Error(
      `Blocked: this script ${reasons(hardline)}. execute_code never runs that, with or without approval, and it was not run. Do not retry it or a variant; tell the user if it is really needed.`,
    );
  }
  const reason = reasons(findings);
  const protectedPath = findings.some((f) => f.protectedPath);
  const advice =
    "Do this work through the tools instead: terminal for commands, write_file or patch for files, the memory and skill_manage tools for Hermes's memory and skills; or ask the user.";
  const decision = await ctx
    .requestApproval({
      command: summary(code),
      reason: `execute_code script: ${reason}`,
      patternKey: (findings.find((f) => f.protectedPath) ?? (findings[0] as Finding)).key,
      ...(protectedPath ? { protectedPath: true } : {}),
    })
    .catch((error: unknown) => {
      throw withAdvice(error, advice);
    });
  if (decision === "deny") {
    throw new Error(
      `Script denied by the user or the non-interactive approval policy: it ${reason}. It was not run. ${advice}`,
    );
  }
}

function reasons(findings: readonly Finding[]): string {
  return [...new Set(findings.map((f) => f.reason))].join("; ");
}

/** The first lines of the script, for the approval prompt. */
function summary(code: string): string {
  const lines = code.trim().split("\n");
  let text = lines.slice(0, SUMMARY_LINES).join("\n");
  if (text.length > SUMMARY_CHARS) text = `${text.slice(0, SUMMARY_CHARS)}…`;
  const more = lines.length - SUMMARY_LINES;
  return more > 0 ? `${text}\n… (${more} more lines)` : text;
}
