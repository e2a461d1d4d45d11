/**
 * Tool-call pairing for the wires with strict validation of it (Anthropic Messages, Bedrock
 * Converse), in one place so both send the same conversation: every tool call is answered by
 * exactly one result, in the user turn right after it.
 *
 * - A call nothing answered gets a stand-in result (the call is never dropped, which would void a
 *   signed thinking block before it).
 * - A result for a call the assistant turn just before did not make, and a second result for a
 *   call already answered, become plain text (`[result of tool call ID]` and the content): both
 *   APIs reject either as a `tool_result`/`toolResult`, and the model still sees what was said.
 * - Results lead their user turn, ahead of any text.
 * - Consecutive same-role messages merge into one turn (`mergeSameRole`), keeping only the first
 *   part's reasoning: the later parts' reasoning was signed against another turn.
 *
 * Pure: the wire's block shapes come in through a `PairingWire`.
 */

export type Block = Record<string, unknown>;

export interface PairedMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** How one wire spells the blocks pairing looks at. */
export interface PairingWire {
  /** The id of a tool-call block; undefined for any other block. */
  callId(block: Block): string | undefined;
  /** The call id a tool-result block answers; undefined for any other block. */
  resultId(block: Block): string | undefined;
  /** A result's content as text (images as "[image]"), for turning it into a text block. */
  resultText(block: Block): string;
  textBlock(text: string): Block;
  /** The stand-in result for a call nothing answered. */
  missingResult(callId: string): Block;
}

/**
 * `messages` (roles already alternating: same-role messages merged) with every call answered
 * exactly once in the next user turn. Changes the user turns' `content` in place and may append
 * a user turn; returns the list.
 */
export function pairToolResults(messages: PairedMessage[], wire: PairingWire): PairedMessage[] {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as PairedMessage;
    if (message.role === "user") {
      const previous = messages[i - 1];
      const expected = new Set(previous?.role === "assistant" ? callIds(previous, wire) : []);
      message.content = toolResultsFirst(
        message.content.map((block) => {
          const id = wire.resultId(block);
          // `delete` answers each call once: a second result for it falls through to text.
          if (id === undefined || expected.delete(id)) return block;
          return wire.textBlock(`[result of tool call ${id}]\n${wire.resultText(block)}`);
        }),
        wire,
      );
      continue;
    }
    const ids = callIds(message, wire);
    if (ids.length === 0) continue;
    let next = messages[i + 1];
    if (!next) {
      next = { role: "user", content: [] };
      messages.push(next);
    }
    const answered = new Set(next.content.map((b) => wire.resultId(b)).filter((id) => id !== undefined));
    const missing = ids.filter((id) => !answered.has(id)).map((id) => wire.missingResult(id));
    next.content = [...missing, ...next.content];
  }
  return messages;
}

/** Tool results first, everything else after, each in its own order (the APIs require it). */
export function toolResultsFirst(blocks: Block[], wire: Pick<PairingWire, "resultId">): Block[] {
  const results = blocks.filter((b) => wire.resultId(b) !== undefined);
  if (results.length === 0) return blocks;
  return [...results, ...blocks.filter((b) => wire.resultId(b) === undefined)];
}

function callIds(message: PairedMessage, wire: PairingWire): string[] {
  return message.content.map((b) => wire.callId(b)).filter((id) => id !== undefined);
}

/** How one wire spells the blocks a merge looks at. */
export interface MergeWire extends Pick<PairingWire, "resultId"> {
  /** A thinking/reasoning block (signed against its own turn). */
  isReasoning(block: Block): boolean;
  /** The stand-in text block a turn with nothing else carries. */
  isPlaceholder(block: Block): boolean;
  placeholder(): Block;
}

/**
 * Merges consecutive same-role messages into one turn. In a merged assistant turn only the first
 * part keeps its reasoning, and a placeholder stays only while the turn has nothing but
 * reasoning; in a merged user turn the tool results go first. Returns new messages.
 */
export function mergeSameRole(messages: readonly PairedMessage[], wire: MergeWire): PairedMessage[] {
  const out: PairedMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (!last || last.role !== message.role) {
      out.push({ role: message.role, content: [...message.content] });
      continue;
    }
    let add = message.content;
    if (message.role === "assistant") {
      add = add.filter((b) => !wire.isReasoning(b) && !wire.isPlaceholder(b));
      last.content = last.content.filter((b) => !wire.isPlaceholder(b));
    }
    last.content.push(...add);
    if (last.content.every((b) => wire.isReasoning(b))) last.content.push(wire.placeholder());
  }
  for (const message of out) {
    if (message.role === "user") message.content = toolResultsFirst(message.content, wire);
  }
  return out;
}
