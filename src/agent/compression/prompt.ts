/**
 * The summary request sent to the auxiliary model, and the markers that identify a summary in
 * history so a later pass updates it instead of summarising a summary.
 */
import { type Message, messageText } from "../../ai/types.js";

export const SUMMARY_MARKER = "[Context summary of earlier turns]";
export const SUMMARY_END = "[End of context summary]";
const SUMMARY_NOTE =
  "Earlier turns of this conversation were condensed into the summary below to save context. " +
  "Use it as background; the conversation continues after it, and the latest request is still the one to act on.";

/** Per-message cap when rendering turns for the summariser (head and tail of long texts kept). */
const TURN_CHAR_CAP = 6000;

export function isSummaryMessage(message: Message): boolean {
  return messageText(message).startsWith(SUMMARY_MARKER);
}

/** Splits a summary message into the summary text and whatever was merged after it. */
export function splitSummaryMessage(message: Message): { summary: string; rest: string } | undefined {
  const text = messageText(message);
  if (!text.startsWith(SUMMARY_MARKER)) return undefined;
  const endAt = text.indexOf(SUMMARY_END);
  const inner = endAt === -1 ? text.slice(SUMMARY_MARKER.length) : text.slice(SUMMARY_MARKER.length, endAt);
  const rest = endAt === -1 ? "" : text.slice(endAt + SUMMARY_END.length).trim();
  const summary = inner.replace(SUMMARY_NOTE, "").trim();
  return { summary, rest };
}

export function formatSummaryMessage(summary: string): string {
  return `${SUMMARY_MARKER}\n${SUMMARY_NOTE}\n\n${summary.trim()}\n${SUMMARY_END}`;
}

function cap(text: string): string {
  if (text.length <= TURN_CHAR_CAP) return text;
  const half = Math.floor(TURN_CHAR_CAP / 2);
  return `${text.slice(0, half)}\n…[${text.length - TURN_CHAR_CAP} characters omitted]…\n${text.slice(-half)}`;
}

/** Renders turns as plain labelled text for the summariser. */
export function renderTurns(messages: readonly Message[]): string {
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const m of messages) {
    const text = messageText(m);
    if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((c) => {
        names.set(c.id, c.function.name);
        return `  -> called ${c.function.name}(${cap(c.function.arguments)})`;
      });
      lines.push(`ASSISTANT:${text ? ` ${cap(text)}` : ""}${calls.length ? `\n${calls.join("\n")}` : ""}`);
    } else if (m.role === "tool") {
      const name = (m.tool_call_id && names.get(m.tool_call_id)) || m.name || "tool";
      lines.push(`TOOL RESULT (${name}): ${cap(text)}`);
    } else {
      lines.push(`${m.role.toUpperCase()}: ${cap(text)}`);
    }
  }
  return lines.join("\n\n");
}

const TEMPLATE = `## Active task
(The user's most recent request, quoted word for word inside quotation marks.)

## Done
(Concrete results so far: files changed, commands that succeeded, answers given.)

## In progress
(What was being worked on when these turns ended.)

## Blocked
(Failures still unresolved, each with the exact error text copied verbatim.)

## Key decisions
(Choices made and why, including approaches that were rejected.)

## Pending user asks
(Questions or requests from the user not yet answered or done.)

## Relevant files
(Paths, URLs, identifiers, with a few words on each.)

## Critical context
(Anything else needed to continue: constraints, preferences, values, credentials' names but never their values.)`;

/**
 * The prompt asking for a structured summary of `middle`. With a previous summary, the model is
 * asked to revise that summary with the new turns rather than start over. `focus` steers what to
 * keep in most detail (`/compress focus <topic>`).
 */
export function buildSummaryPrompt(
  middle: readonly Message[],
  previousSummary?: string,
  focus?: string,
  latestUserRequest?: string,
): string {
  const parts: string[] = [];
  parts.push(
    "You are condensing part of a conversation between a user and an AI agent that uses tools, so the agent can keep working after these turns are removed from its context. " +
      'Write only the summary, in the exact section layout below, in the language of the conversation. Be specific: keep names, paths, numbers, commands and error messages exactly as they appear. Leave a section as "None" when it has nothing. Do not invent anything.',
  );
  if (previousSummary?.trim()) {
    parts.push(
      "An earlier pass already produced the summary below. UPDATE it with the new turns that follow: keep what still holds, move finished items to Done, drop what the new turns show is obsolete, and add what is new. Return one complete summary, not a diff.\n\n<previous-summary>\n" +
        previousSummary.trim() +
        "\n</previous-summary>",
    );
  }
  if (focus?.trim()) {
    parts.push(
      `The user asked to keep the most detail about: "${focus.trim()}". Keep everything related to it in full; summarise other matters briefly.`,
    );
  }
  if (latestUserRequest?.trim()) {
    parts.push(
      `The user's most recent request, to quote under Active task:\n<latest-request>\n${latestUserRequest.trim()}\n</latest-request>`,
    );
  }
  parts.push(`Layout:\n\n${TEMPLATE}`);
  parts.push(`<turns>\n${renderTurns(middle)}\n</turns>`);
  return parts.join("\n\n");
}
