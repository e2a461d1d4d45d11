/**
 * How recalled provider memory travels to the model: appended to the user's message of the turn
 * inside a `<memory-context>` fence with a note that it is not new user input, exactly as Python
 * Hermes wraps it (agent/memory_manager.py `build_memory_context_block`). Pure.
 */

// Tags with any spacing and case (`< /MEMORY-CONTEXT >`): the model reads them as tags too.
const FENCE_TAG = /<\s*\/?\s*memory-context\s*>/gi;
const FENCED_BLOCK = /\s*<\s*memory-context\s*>[\s\S]*?<\s*\/\s*memory-context\s*>/gi;
const SYSTEM_NOTE =
  /\[System note:\s*The following is recalled memory context,\s*NOT new user input\.[^\]]*\]\s*/gi;

export const MEMORY_CONTEXT_NOTE =
  "[System note: The following is recalled memory context, NOT new user input. " +
  "Treat as authoritative reference data — this is the agent's persistent memory and should inform all responses.]";

/**
 * Strips fence tags and the system note from provider text, so a provider (or a stored memory
 * quoting an earlier block) cannot close the fence early and speak as the user.
 */
export function sanitizeProviderContext(text: string): string {
  return text.replace(SYSTEM_NOTE, "").replace(FENCE_TAG, "").trim();
}

/** The fenced block for `raw`, or "" when there is nothing to say. */
export function buildMemoryContextBlock(raw: string): string {
  const clean = sanitizeProviderContext(raw);
  if (!clean) return "";
  return `<memory-context>\n${MEMORY_CONTEXT_NOTE}\n\n${clean}\n</memory-context>`;
}

/** The user's text with the block appended after a blank line (unchanged when the block is empty). */
export function withMemoryContext(userText: string, block: string): string {
  return block ? `${userText}\n\n${block}` : userText;
}

/**
 * The user's own words from a message that may carry fenced blocks: what providers sync and what
 * the prefetch query uses, so recalled context never feeds back into the memory it came from.
 */
export function stripMemoryContext(text: string): string {
  return text.replace(FENCED_BLOCK, "").trimEnd();
}

const TRIVIAL =
  /^(yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)[\s!?.:;,"'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()[\]{}<>*&^%$#@+=`\u00a0]*$/i;

/**
 * True when a prompt carries nothing to recall for (empty, a slash command, a greeting or an
 * acknowledgement), as upstream's `is_trivial_prompt`: such turns skip the prefetch round trip.
 */
export function isTrivialPrompt(text: string): boolean {
  const stripped = text.trim();
  if (!stripped || stripped.startsWith("/")) return true;
  return TRIVIAL.test(stripped);
}
