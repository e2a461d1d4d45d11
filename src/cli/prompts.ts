/**
 * Questions the CLI asks on the terminal: dangerous-command approval and `clarify`.
 */
import { createInterface } from "node:readline/promises";
import type { HermesConfig } from "../config/defaults.js";
import type { ApprovalDecision, ApprovalRequest, ClarifyRequest } from "../tools/types.js";

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

export async function askApproval(request: ApprovalRequest): Promise<ApprovalDecision> {
  process.stderr.write(`\n⚠️  Dangerous command (${request.reason}):\n    ${request.command}\n`);
  const answer = (await ask("Allow? [o]nce / [s]ession / [a]lways / [D]eny: ")).toLowerCase();
  if (answer === "o" || answer === "once" || answer === "y" || answer === "yes") return "once";
  if (answer === "s" || answer === "session") return "session";
  if (answer === "a" || answer === "always") return "always";
  return "deny";
}

export async function askClarify(request: ClarifyRequest): Promise<string> {
  process.stderr.write(`\n❓ ${request.question}\n`);
  const choices = request.choices ?? [];
  for (const [i, choice] of choices.entries()) process.stderr.write(`   ${i + 1}. ${choice}\n`);
  const answer = await ask(choices.length > 0 ? "Choose a number or type an answer: " : "Answer: ");
  const n = Number(answer);
  if (Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1] ?? answer;
  return answer;
}

/** Adds an "always" approval to `command_allowlist` in config.yaml, keeping the file's comments. */
export async function persistAllowlistEntry(
  home: string,
  config: HermesConfig,
  patternKey: string,
): Promise<void> {
  const list = [...new Set([...(config.command_allowlist ?? []), patternKey])];
  config.command_allowlist = list;
  const { setConfigValue } = await import("../config/write.js");
  await setConfigValue(home, "command_allowlist", JSON.stringify(list));
}
