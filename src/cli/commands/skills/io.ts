/**
 * What the `hermes skills` subcommands share: the output channels, the clock, the home, and the
 * terminal questions (asked on stderr, only when stdin is a terminal).
 */
import { createInterface } from "node:readline/promises";
import pc from "picocolors";
import type { ScanFinding, Verdict } from "../../../knowledge/skills/hub/scan.js";

import { CliFailure } from "../../command.js";
import type { CliIo } from "../../io.js";

export { CliFailure };

export interface SkillsIo extends CliIo {
  cwd: string;
}

export function canAsk(io: SkillsIo): boolean {
  return io.stdin.isTTY === true;
}

/** Asks a yes/no question on the terminal (default no). Call only when {@link canAsk}. */
export async function ask(io: SkillsIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * Confirmation for a destructive step: true with `yes`, the answer on a terminal, and a usage
 * failure (exit 2) when nobody can be asked, so a script never removes anything by accident.
 */
export async function confirmOrFail(
  io: SkillsIo,
  question: string,
  action: string,
  yes: boolean | undefined,
): Promise<boolean> {
  if (yes) return true;
  if (!canAsk(io)) {
    throw new CliFailure(`${action} needs confirmation and stdin is not a terminal; pass -y to confirm.`, 2);
  }
  return ask(io, question);
}

export function style(io: SkillsIo, fn: (s: string) => string, text: string): string {
  return io.color ? fn(text) : text;
}

export function paintVerdict(io: SkillsIo, verdict: Verdict): string {
  const fn = verdict === "safe" ? pc.green : verdict === "caution" ? pc.yellow : pc.red;
  return style(io, fn, verdict);
}

/** Findings as indented lines, most severe first, `file:line` for each. */
export function findingLines(
  io: SkillsIo,
  findings: readonly ScanFinding[],
  minimum: "low" | "high" = "low",
): string[] {
  const order = { critical: 0, high: 1, medium: 2, low: 3 } as const;
  const shown = findings.filter((f) => minimum === "low" || order[f.severity] <= order.high);
  return [...shown]
    .sort((a, b) => order[a.severity] - order[b.severity] || a.file.localeCompare(b.file) || a.line - b.line)
    .flatMap((f) => {
      const where = f.line > 0 ? `${f.file}:${f.line}` : f.file;
      const sev = f.severity.toUpperCase().padEnd(8);
      const paint = f.severity === "critical" ? pc.red : f.severity === "high" ? pc.yellow : pc.dim;
      const head = `  ${style(io, paint, sev)} ${where}  ${f.description} [${f.id}]`;
      return f.match ? [head, `           ${style(io, pc.dim, f.match)}`] : [head];
    });
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
