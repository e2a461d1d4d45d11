/**
 * Spoken approval prompts in voice mode. When a dangerous command waits for approval on the
 * keyboard prompt, voice mode says what it is ("Hermes wants to run: ... Approve?") under
 * `/voice tts`, and a push-to-talk answer can settle it. The answer goes back through the same
 * question the keyboard answers (cli/prompts.ts `askApproval` → `parseApprovalAnswer`), so the
 * approval policy sees nothing new.
 *
 * Only a transcript that is wholly one clear answer counts ("yes", "approve", "just once", "for
 * this session", "always", "no", "deny", ...): anything else ("yes, and also rm -rf", "no yes",
 * silence, a failed transcription) approves nothing and leaves the keyboard prompt waiting.
 * "session" and "always" count only where the keyboard offers them (not for protected paths).
 */

import type { ApprovalDecision, ApprovalRequest } from "../../tools/types.js";
import type { TerminalAsker } from "../prompts.js";

const ONCE = [
  "yes",
  "yeah",
  "yep",
  "yes please",
  "approve",
  "approved",
  "approve it",
  "allow",
  "allow it",
  "once",
  "just once",
  "only once",
  "yes once",
  "allow once",
  "approve once",
  "run it",
  "run it once",
];
const SESSION = [
  "session",
  "this session",
  "for this session",
  "for the session",
  "allow for this session",
  "approve for this session",
  "yes for this session",
];
const ALWAYS = ["always", "always allow", "allow always", "approve always", "yes always", "always approve"];
const DENY = [
  "no",
  "nope",
  "deny",
  "denied",
  "reject",
  "cancel",
  "stop",
  "don't",
  "do not",
  "no thanks",
  "no thank you",
  "don't run it",
  "do not run it",
];

/** Lowercase words with punctuation, a leading "hermes" and a trailing "please" dropped. */
function words(transcript: string): string {
  return transcript
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\[[^\]]*\]|\([^)]*\)/g, " ")
    .replace(/[^a-z' ]+/g, " ")
    .replace(/(^| )'+|'+( |$)/g, "$1$2")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^(ok |okay )?hermes /, "")
    .replace(/ please$/, "");
}

/**
 * The choice a spoken answer names, or null when it is not wholly one clear answer (then nothing
 * is decided). "session" and "always" are only taken where the keyboard offers them.
 */
export function parseSpokenApproval(
  transcript: string,
  request: Pick<ApprovalRequest, "protectedPath">,
): ApprovalDecision | null {
  const said = words(transcript);
  if (!said) return null;
  if (DENY.includes(said)) return "deny";
  if (ONCE.includes(said)) return "once";
  if (request.protectedPath) return null;
  if (SESSION.includes(said)) return "session";
  if (ALWAYS.includes(said)) return "always";
  return null;
}

/** What is said aloud: a short summary of the command (first line, at most 80 characters). */
export function approvalSpeech(request: Pick<ApprovalRequest, "command" | "protectedPath">): string {
  const first = request.command.split("\n")[0]?.replace(/\s+/g, " ").trim() ?? "";
  const more = request.command.trim().includes("\n") || first.length > 80;
  const summary = `${first.length > 80 ? first.slice(0, 80).replace(/\s+\S*$/, "") : first}${more ? ", and more" : ""}`;
  return request.protectedPath
    ? `Hermes wants to change a protected path: ${summary}. Approve once?`
    : `Hermes wants to run: ${summary}. Approve?`;
}

/** The answers to offer on screen for `request`. */
export function spokenChoices(request: Pick<ApprovalRequest, "protectedPath">): string {
  return request.protectedPath ? '"yes" or "no"' : '"yes", "session", "always" or "no"';
}

/** What voice mode offers the asker: a spoken answer while an approval question is open. */
export interface SpokenApprovals {
  /**
   * An approval question is on the prompt. `answer` is called at most once with a clear spoken
   * choice; the returned function is called when the question is settled either way.
   */
  approvalAsked(request: ApprovalRequest, answer: (decision: ApprovalDecision) => void): () => void;
}

/**
 * Wraps the REPL's asker: an approval question (`options.approval`) may also be answered by
 * voice. The keyboard prompt stays up; a spoken answer withdraws it, showing what was heard, and
 * is returned as if typed.
 */
export function withSpokenApprovals(voice: SpokenApprovals, ask: TerminalAsker): TerminalAsker {
  return async (lines, prompt, options = {}) => {
    const request = options.approval;
    if (!request) return ask(lines, prompt, options);
    const spoken = new AbortController();
    let decision: ApprovalDecision | null = null;
    const settle = voice.approvalAsked(request, (choice) => {
      if (decision || spoken.signal.aborted) return;
      decision = choice;
      spoken.abort();
    });
    const signal = options.signal ? AbortSignal.any([options.signal, spoken.signal]) : spoken.signal;
    try {
      const typed = await ask(lines, prompt, {
        ...options,
        signal,
        withdrawn: () => (decision ? `🎙 ${decision}` : (options.withdrawn?.() ?? "")),
      });
      return decision ?? typed;
    } finally {
      settle();
    }
  };
}
