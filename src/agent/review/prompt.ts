/**
 * What the background review reads: its own system prompt (the job, where each kind of lesson
 * goes, what is already stored so it does not save it twice) and one user message holding the
 * conversation as a transcript. Pure text assembly; the runner gathers the inputs.
 *
 * The transcript is text rather than a replay of the messages: the review agent has only the
 * memory and skill tools, and a replayed history would carry calls of tools it does not have
 * (strict providers refuse those), and a different toolset misses the prompt cache anyway.
 */

import { type Message, messageText } from "../../ai/types.js";
import { stripMemoryContext } from "../../knowledge/memory/providers/context-block.js";
import type { ReviewFocus } from "./nudges.js";

/** Why a review runs: a nudge came due after a turn, or turns are about to leave the context. */
export type ReviewTrigger = "nudge" | "compression" | "new_session" | "reset";

/** What is stored now, for the review's duplicate check. */
export interface StoredMemory {
  /** USER.md entries (as the prompt would show them), or null when the profile is switched off. */
  user: { entries: string[]; usage: string } | null;
  /** MEMORY.md entries, or null when memory is switched off. */
  memory: { entries: string[]; usage: string } | null;
}

/** The reviewer's tools: nothing that runs commands, reads files or talks to anyone. */
export const REVIEW_TOOLS: readonly string[] = ["memory", "skill_manage", "skill_view", "skills_list"];

/** The reply that means the review found nothing worth keeping. */
export const NOTHING_TO_SAVE = "Nothing to save.";

const FOCUS_TEXT: Record<ReviewFocus, string> = {
  memory:
    "Focus of this pass: memory. Look for facts about the user and durable facts about their " +
    "environment and projects. Touch skills only if the conversation clearly produced a procedure.",
  skills:
    "Focus of this pass: skills. The agent needed many tool iterations; if a reusable procedure " +
    "came out of that trial and error, capture it as a skill (or improve the skill that covers it). " +
    "Save a fact to memory too when one clearly stands out.",
  both: "Focus of this pass: both memory (facts) and skills (procedures).",
};

const TRIGGER_TEXT: Record<ReviewTrigger, string> = {
  nudge: "",
  compression:
    "These turns are about to be compressed out of the agent's context: this is the last chance " +
    "to keep what matters from them.",
  new_session:
    "The user is starting a new session, so these turns leave the agent's context: this is the " +
    "last chance to keep what matters from them.",
  reset:
    "The conversation is being reset, so these turns leave the agent's context: this is the last " +
    "chance to keep what matters from them.",
};

function storedBlock(title: string, stored: { entries: string[]; usage: string } | null): string {
  if (stored === null) return `${title}: switched off in config; do not write there.`;
  if (stored.entries.length === 0) return `${title} (${stored.usage}): empty.`;
  return `${title} (${stored.usage}):\n${stored.entries.map((e) => `- ${e.replace(/\n/g, "\n  ")}`).join("\n")}`;
}

/** The review agent's system prompt. */
export function reviewSystemPrompt(input: {
  focus: ReviewFocus;
  trigger: ReviewTrigger;
  stored: StoredMemory;
}): string {
  const trigger = TRIGGER_TEXT[input.trigger];
  return [
    "You are the learning reviewer of Hermes, a personal AI agent. You are not talking to the user and",
    "nobody reads your reply. You read a conversation Hermes just had and decide what is worth",
    "keeping for future sessions, then save it with your tools. Saving nothing is a fine outcome when",
    "nothing stands out; saving noise is not.",
    "",
    "Where each kind of lesson goes:",
    '- memory tool, target "user" (USER.md): who the user is. Name, role, preferences, how they want',
    "  the agent to work, corrections they made to its behaviour.",
    '- memory tool, target "memory" (MEMORY.md): durable facts about the environment and projects.',
    "  Paths, tools and versions in use, conventions, decisions that will still hold next week.",
    "- skill_manage: a reusable procedure that took iteration to get right. The steps in order, the",
    "  commands that worked, the pitfalls with the reason behind each. Name a skill for the class of",
    "  task (deploy-static-site), never for today's instance of it.",
    "",
    "Do not save: details of a one-off task, anything likely stale within days, secrets (keys,",
    "tokens, passwords), failures the user can fix with setup (a missing binary, a missing key),",
    "claims that a tool does not work, or guesses that were never confirmed in the conversation.",
    "",
    "No duplicates. What is stored now is listed below: skip a fact already there; when a fact",
    "changed, replace its entry (memory action replace with old_text) instead of adding a second one.",
    "Before creating a skill, call skills_list; when a skill already covers the task, read it with",
    "skill_view and patch it instead of creating another. Keep memory entries short: one fact each,",
    "written to make sense without this conversation. Memory has a size limit; make room by",
    "replacing or removing stale entries when it is nearly full.",
    "",
    FOCUS_TEXT[input.focus],
    ...(trigger ? [trigger] : []),
    "",
    `When you are done, reply with one short line saying what you saved, or exactly "${NOTHING_TO_SAVE}"`,
    "",
    "Stored now:",
    storedBlock("USER.md", input.stored.user),
    "",
    storedBlock("MEMORY.md", input.stored.memory),
  ].join("\n");
}

export interface TranscriptLimits {
  /** The whole transcript; the oldest messages are left out first. */
  maxChars: number;
  /** One user or assistant message. */
  maxMessageChars: number;
  /** One tool call's arguments or one tool result. */
  maxToolChars: number;
}

export const DEFAULT_TRANSCRIPT_LIMITS: TranscriptLimits = {
  maxChars: 48_000,
  maxMessageChars: 6_000,
  maxToolChars: 800,
};

function clip(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max)} […${t.length - max} more characters]`;
}

function renderMessage(m: Message, limits: TranscriptLimits): string {
  const text = messageText(m);
  switch (m.role) {
    case "user":
      // A memory provider's recall rides in the user message: it is not what the user said, and
      // saving it again would only copy the provider into MEMORY.md.
      return `[user] ${clip(stripMemoryContext(text), limits.maxMessageChars)}`;
    case "assistant": {
      const lines: string[] = [];
      if (text.trim()) lines.push(`[assistant] ${clip(text, limits.maxMessageChars)}`);
      for (const call of m.tool_calls ?? []) {
        lines.push(
          `[assistant → ${call.function.name}] ${clip(call.function.arguments, limits.maxToolChars)}`,
        );
      }
      return lines.join("\n");
    }
    case "tool":
      return `[${m.name ?? "tool"} result] ${clip(text, limits.maxToolChars)}`;
    default:
      return "";
  }
}

/**
 * The conversation as lines the reviewer reads, newest kept first when it is too long (a line says
 * how many earlier messages were left out). Empty when there is nothing to read.
 */
export function renderTranscript(
  messages: readonly Message[],
  limits: TranscriptLimits = DEFAULT_TRANSCRIPT_LIMITS,
): string {
  const kept: string[] = [];
  let used = 0;
  let omitted = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const line = renderMessage(messages[i] as Message, limits);
    if (!line) continue;
    if (used + line.length + 2 > limits.maxChars && kept.length > 0) {
      omitted = messages.slice(0, i + 1).filter((m) => m.role !== "system").length;
      break;
    }
    kept.push(line);
    used += line.length + 2;
  }
  kept.reverse();
  if (omitted > 0) kept.unshift(`[… ${omitted} earlier messages left out …]`);
  return kept.join("\n\n");
}

/** The review's one user message: the transcript and the task. */
export function reviewUserMessage(transcript: string): string {
  return [
    "Conversation to review:",
    "",
    "<conversation>",
    transcript,
    "</conversation>",
    "",
    "Review it now: save what is worth keeping with your tools, then reply with one short line.",
  ].join("\n");
}
