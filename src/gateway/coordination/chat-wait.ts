/**
 * Waiting for a chat instead of forwarding to it: for inputs whose answer must go out on the
 * receiving instance's own connection (the API server's HTTP response), the receiver waits until no
 * other instance runs the conversation, claims it, runs the turn itself and releases it.
 */
import type { ChatClaim, Coordinator } from "../../state/coordination.js";

export class ChatBusyError extends Error {
  constructor(
    readonly key: string,
    readonly holder: string,
    waitedMs: number,
  ) {
    super(`the conversation is still busy on instance ${holder} after ${Math.round(waitedMs / 1000)} s`);
    this.name = "ChatBusyError";
  }
}

/**
 * Claims `key`, waiting while another instance holds it (polling every `pollMs`). Resolves with a
 * release function; rejects with `ChatBusyError` after `timeoutMs`, or with the signal's reason.
 */
export async function waitForChat(
  coordinator: Coordinator,
  key: string,
  options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<() => Promise<void>> {
  const claim = await waitForChatClaim(coordinator, key, options);
  return () => claim.release();
}

/** `waitForChat`, resolving with the claim itself (its turn fences its effects on it). */
export async function waitForChatClaim(
  coordinator: Coordinator,
  key: string,
  options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<ChatClaim> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  for (;;) {
    if (options.signal?.aborted) throw options.signal.reason;
    const result = await coordinator.claimChat(key);
    if ("claimed" in result) return result.claimed;
    if (Date.now() - started >= timeoutMs) throw new ChatBusyError(key, result.heldBy, Date.now() - started);
    await new Promise((r) => setTimeout(r, options.pollMs ?? 100));
  }
}
