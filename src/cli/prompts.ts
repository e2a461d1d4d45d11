/**
 * Questions the CLI asks on the terminal: dangerous-command approval and `clarify`.
 *
 * The terminal is one resource per process. While the interactive REPL is open it owns the input
 * line, so it registers an asker (`useTerminalAsker`) and every question goes through it; opening a
 * second readline on stdin then would steal keystrokes from the live prompt. Without a registered
 * asker (a `-q` run on a terminal) a short-lived readline asks instead.
 */
import { createRequire } from "node:module";
import type * as ReadlinePromises from "node:readline/promises";
import type { ApprovalPromptOptions } from "../agent/approval-policy.js";
import type { HermesConfig } from "../config/defaults.js";
import type { ApprovalDeniedError } from "../tools/approval/denial.js";
import type { ApprovalDecision, ApprovalRequest, ClarifyRequest } from "../tools/types.js";
import type { AskOptions } from "./tui/input.js";
import { colorFor, createStyle, type Style } from "./tui/style.js";

/**
 * Asks on the terminal: prints `lines`, shows `prompt`; resolves null when the user cancelled or
 * `options.signal` withdrew the question (then `options.withdrawn()` is shown after the prompt).
 */
export type TerminalAsker = (
  lines: string[],
  prompt: string,
  options?: AskerOptions,
) => Promise<string | null>;

/** A question's options; `approval` is set for an approval question (voice mode may answer it). */
export type AskerOptions = AskOptions & { approval?: ApprovalRequest };

let activeAsker: TerminalAsker | null = null;

/** Routes every question through `asker` until the returned function is called. */
export function useTerminalAsker(asker: TerminalAsker): () => void {
  activeAsker = asker;
  return () => {
    if (activeAsker === asker) activeAsker = null;
  };
}

async function ask(lines: string[], prompt: string, options: AskerOptions = {}): Promise<string | null> {
  if (activeAsker) return activeAsker(lines, prompt, options);
  if (options.signal?.aborted) return null;
  if (lines.length > 0) process.stderr.write(`${lines.join("\n")}\n`);
  // node:readline loads for the first question, not with every chat command that imports this.
  const { createInterface } = createRequire(import.meta.url)(
    "node:readline/promises",
  ) as typeof ReadlinePromises;
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const closed = new Promise<null>((resolve) => rl.once("close", () => resolve(null)));
  rl.once("SIGINT", () => rl.close());
  const onAbort = () => {
    process.stderr.write(`${options.withdrawn?.() ?? ""}\n`);
    rl.close();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await Promise.race([rl.question(prompt), closed]);
  } catch {
    return null;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    rl.close();
  }
}

function stderrStyle(): Style {
  return createStyle(colorFor(process.stderr, process.env));
}

/**
 * The approval question: what is dangerous, the command, and the answers. A protected-path request
 * can only be approved once (nothing about it is remembered), so it offers yes or no.
 */
export function approvalQuestion(
  request: ApprovalRequest,
  style: Style,
  timeoutS?: number,
): { lines: string[]; prompt: string } {
  const within = timeoutS === undefined ? "" : style.dim(` (${timeoutS} s)`);
  if (request.protectedPath) {
    return {
      lines: [
        `${style.yellow("🔒 Protected path")} ${style.dim(`(${request.reason})`)}`,
        `    ${style.bold(request.command)}`,
        style.dim("    Only you can approve this, one action at a time; it is never remembered."),
      ],
      prompt: `Allow once? ${style.bold("y")}es / ${style.bold("N")}o${within}: `,
    };
  }
  return {
    lines: [
      `${style.yellow("⚠️  Dangerous command")} ${style.dim(`(${request.reason})`)}`,
      `    ${style.bold(request.command)}`,
    ],
    prompt: `Allow? ${style.bold("o")}nce / ${style.bold("s")}ession / ${style.bold("a")}lways / ${style.bold("D")}eny${within}: `,
  };
}

/**
 * Reads an approval answer; anything unclear (or a cancelled question) denies. For a protected
 * path only a yes (or "once") approves.
 */
export function parseApprovalAnswer(
  answer: string | null,
  request?: Pick<ApprovalRequest, "protectedPath">,
): ApprovalDecision {
  const a = (answer ?? "").trim().toLowerCase();
  if (a === "o" || a === "once" || a === "y" || a === "yes") return "once";
  if (request?.protectedPath) return "deny";
  if (a === "s" || a === "session") return "session";
  if (a === "a" || a === "always") return "always";
  return "deny";
}

/** The clarify question with up to 4 numbered choices; free text is always allowed. */
export function clarifyQuestion(request: ClarifyRequest, style: Style): { lines: string[]; prompt: string } {
  const choices = (request.choices ?? []).slice(0, 4);
  const lines = [`${style.cyan("❓")} ${style.bold(request.question)}`];
  for (const [i, choice] of choices.entries()) lines.push(`   ${style.cyan(`${i + 1}.`)} ${choice}`);
  const prompt = choices.length > 0 ? `Choose 1-${choices.length} or type an answer: ` : "Your answer: ";
  return { lines, prompt };
}

/** Text the model receives when the user cancelled a clarify question. */
export const CLARIFY_CANCELLED = "(The user cancelled the question without answering.)";

/** A number picks that choice; other text is the answer as typed. */
export function parseClarifyAnswer(answer: string | null, choices: readonly string[] = []): string {
  if (answer === null) return CLARIFY_CANCELLED;
  const text = answer.trim();
  const n = Number(text);
  const offered = choices.slice(0, 4);
  if (text !== "" && Number.isInteger(n) && n >= 1 && n <= offered.length) return offered[n - 1] ?? text;
  return text;
}

/**
 * Asks on the terminal. The question is withdrawn (a denial, said so on the prompt line) when
 * `options.signal` aborts: `approvals.timeout` passed or the turn was interrupted.
 */
export async function askApproval(
  request: ApprovalRequest,
  options?: ApprovalPromptOptions,
): Promise<ApprovalDecision> {
  const style = stderrStyle();
  const timeoutS = options ? Math.round(options.timeoutMs / 1000) : undefined;
  const { lines, prompt } = approvalQuestion(request, style, timeoutS);
  const withdrawn = () =>
    String(options?.signal.reason).includes("timeout")
      ? `⏱ no answer within ${timeoutS} s: denied (approvals.timeout)`
      : "cancelled: denied";
  const answer = await ask(["", ...lines], prompt, {
    ...(options ? { signal: options.signal } : {}),
    withdrawn,
    approval: request,
  });
  if (options?.signal.aborted) return "deny";
  return parseApprovalAnswer(answer, request);
}

/**
 * One stderr line for a denial in a non-interactive run, with what to do about it; `-v` is not
 * needed to see it (a silent denial looks like the agent ignoring the task).
 */
export function denialNotice(request: ApprovalRequest, denial: Pick<ApprovalDeniedError, "why">): string {
  const flat = request.command.replace(/\s+/g, " ").trim();
  const command = flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
  const hint = request.protectedPath
    ? "protected paths need an interactive session"
    : "--yolo approves dangerous commands; protected paths need an interactive session";
  return `hermes: not approved: ${command} (${request.reason.replace(/\s+/g, " ")}): ${denial.why}. Hint: ${hint}.`;
}

export async function askClarify(request: ClarifyRequest): Promise<string> {
  const { lines, prompt } = clarifyQuestion(request, stderrStyle());
  return parseClarifyAnswer(await ask(["", ...lines], prompt), request.choices);
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
