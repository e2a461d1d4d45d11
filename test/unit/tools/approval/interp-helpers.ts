import { analyseScript } from "../../../../src/tools/approval/interpreters.js";
import type { AnalysisContext, Finding, ScriptLanguage } from "../../../../src/tools/approval/types.js";

export const HOME = "/home/u";
export const HERMES = "/home/u/.hermes";

/** A pure context: the user's home, Hermes's home inside it, a project directory, no symlinks. */
export const CTX: AnalysisContext = {
  cwd: "/home/u/proj",
  home: HOME,
  hermesHome: HERMES,
  roots: { homes: [HOME], hermesHomes: [HERMES] },
  realPath: (p) => p,
};

/**
 * Runs the analyser with a recording shell analyser: every command line it is handed is kept in
 * `commands`; lines mentioning rm, curl or DANGER come back as a `shell` finding.
 */
export function analyse(language: ScriptLanguage, source: string, ctx: AnalysisContext = CTX) {
  const commands: string[] = [];
  const shell = (command: string): Finding[] => {
    commands.push(command);
    return /\brm\b|curl|DANGER/.test(command) ? [{ key: "shell", reason: `shell: ${command}` }] : [];
  };
  const findings = analyseScript(language, source, ctx, shell);
  return { findings, commands };
}

/**
 * What a case expects:
 * - `"safe"`: no finding;
 * - `"$ <command>"`: that exact command line is handed to the shell analyser (and reported when
 *   it is dangerous);
 * - `"key"`, `"key!"` (hardline), `"key@"` (protected path): a finding with that key.
 */
export type Expect = string;

/** Describes a mismatch, or undefined when `source` gives what `expect` says. */
export function check(language: ScriptLanguage, source: string, expect: Expect): string | undefined {
  const { findings, commands } = analyse(language, source);
  const got = `findings=${JSON.stringify(findings.map((f) => `${f.key}${f.hardline ? "!" : ""}${f.protectedPath ? "@" : ""}`))} commands=${JSON.stringify(commands)}`;
  if (expect === "safe") return findings.length === 0 ? undefined : got;
  if (expect.startsWith("$ ")) return commands.includes(expect.slice(2)) ? undefined : got;
  const key = expect.replace(/[!@]$/, "");
  const ok = findings.some(
    (f) =>
      f.key === key &&
      (!expect.endsWith("!") || f.hardline === true) &&
      (!expect.endsWith("@") || f.protectedPath === true),
  );
  return ok ? undefined : got;
}
