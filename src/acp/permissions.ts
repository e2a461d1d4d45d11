/**
 * Hermes's questions as ACP permission requests: a dangerous command's approval (allow once, for
 * the session, always, or deny) and a `clarify` question with choices. Pure: the caller sends the
 * request and hands the editor's outcome back here. Anything unexpected (a cancelled request, an
 * option id that was not offered) is a denial: the guard fails closed.
 */
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { ApprovalDecision, ApprovalRequest } from "../tools/types.js";
import { fenced, textContent } from "./tool-updates.js";

/** Option ids → Hermes's approval answers (upstream's ids, so editor keymaps carry over). */
const DECISIONS: Readonly<Record<string, ApprovalDecision>> = {
  allow_once: "once",
  allow_session: "session",
  allow_always: "always",
  deny: "deny",
};

/**
 * The options offered for an approval. A protected-path request is approved only once at a time
 * (Hermes counts its "session"/"always" as "once"), so it offers only allow once and deny: the
 * editor must never offer a scope Hermes would drop.
 */
export function approvalOptions(request: ApprovalRequest): PermissionOption[] {
  const options: PermissionOption[] = [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }];
  if (request.protectedPath !== true) {
    // ACP has no session-scoped kind; the id keeps Hermes's meaning.
    options.push({ optionId: "allow_session", name: "Allow for this session", kind: "allow_always" });
    options.push({
      optionId: "allow_always",
      name: "Allow always (command_allowlist)",
      kind: "allow_always",
    });
  }
  options.push({ optionId: "deny", name: "Deny", kind: "reject_once" });
  return options;
}

/** The tool call a permission request shows: the command and why it needs approval. */
export function approvalToolCall(toolCallId: string, request: ApprovalRequest): ToolCallUpdate {
  return {
    toolCallId,
    title: `${request.reason}: ${oneLine(request.command, 120)}`,
    kind: "execute",
    status: "pending",
    content: [textContent(`${request.reason}\n\n${fenced(`$ ${request.command}`, "sh")}`)],
    rawInput: { command: request.command, reason: request.reason },
  };
}

/** Hermes's answer for the editor's outcome: "deny" unless an offered allow option was picked. */
export function approvalDecision(
  outcome: RequestPermissionOutcome,
  offered: readonly PermissionOption[],
): ApprovalDecision {
  if (outcome.outcome !== "selected") return "deny";
  if (!offered.some((o) => o.optionId === outcome.optionId)) return "deny";
  return Object.hasOwn(DECISIONS, outcome.optionId) ? (DECISIONS[outcome.optionId] ?? "deny") : "deny";
}

/** Prefix of the option ids of clarify choices (`choice-0`...). */
const CHOICE = "choice-";

/** Options for a clarify question: one per choice, and a way to decline. */
export function clarifyOptions(choices: readonly string[]): PermissionOption[] {
  return [
    ...choices.map((name, i): PermissionOption => ({ optionId: `${CHOICE}${i}`, name, kind: "allow_once" })),
    { optionId: "skip", name: "Skip the question", kind: "reject_once" },
  ];
}

/** The tool call a clarify request shows. */
export function clarifyToolCall(toolCallId: string, question: string): ToolCallUpdate {
  return {
    toolCallId,
    title: `Question: ${oneLine(question, 120)}`,
    kind: "other",
    status: "pending",
    content: [textContent(question)],
  };
}

/** What the model reads as the user's answer. */
export function clarifyAnswer(outcome: RequestPermissionOutcome, choices: readonly string[]): string {
  const index = outcome.outcome === "selected" ? /^choice-(\d{1,3})$/.exec(outcome.optionId)?.[1] : undefined;
  const choice = index !== undefined ? choices[Number(index)] : undefined;
  if (choice !== undefined) return choice;
  return "(The user skipped the question. Proceed with your best judgement and state the assumption you made.)";
}

/** The answer to a free-text clarify question, which an ACP permission request cannot carry. */
export const FREE_TEXT_CLARIFY =
  "(This editor can only offer choices. Give `choices`, or ask the question in your reply and end the turn: the user answers in their next message.)";

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
