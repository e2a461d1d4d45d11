/**
 * The Telegram emulator's update feed: `getUpdates` with long polling (`timeout`), `offset`
 * confirmation, `limit`, `allowed_updates`, and 409 Conflict for a poll another one superseded.
 */
import type { ServerResponse } from "node:http";
import type { EmulatorState } from "./telegram-emulator-state.js";
import type { StoredUpdate } from "./telegram-emulator-types.js";
import { ApiError, type Params } from "./telegram-emulator-wire.js";

/** The bot's updates not yet confirmed, from `offset` on, oldest first. */
export function pendingUpdates(state: EmulatorState, offset: number | undefined): StoredUpdate[] {
  return state.core.storage.userMessages
    .filter((u) => u.botToken === state.token && !u.isRead && (offset === undefined || u.updateId >= offset))
    .sort((a, b) => a.updateId - b.updateId);
}

/** Answers `getUpdates`, waiting up to `timeout` seconds for an update when there is none. */
export async function getUpdates(
  state: EmulatorState,
  params: Params,
  res: ServerResponse,
): Promise<unknown> {
  if (Array.isArray(params.allowed_updates)) state.allowedUpdates = params.allowed_updates as string[];
  const offset = params.offset === undefined ? undefined : Number(params.offset);
  const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100);
  const timeout = Math.max(Number(params.timeout ?? 0) || 0, 0);
  state.poll?.finish(true);
  state.poll = undefined;
  confirm(state, offset);
  if (pendingUpdates(state, offset).length === 0 && timeout > 0) {
    const conflict = await new Promise<boolean>((resolve) => {
      state.pollCount += 1;
      const finish = (isConflict: boolean): void => {
        clearTimeout(timer);
        state.changes.off("change", onChange);
        res.off("close", onClose);
        if (state.poll?.finish === finish) state.poll = undefined;
        state.pollCount -= 1;
        resolve(isConflict);
      };
      const onChange = (): void => {
        confirm(state, offset);
        if (pendingUpdates(state, offset).length > 0) finish(false);
      };
      const onClose = (): void => finish(false);
      const timer = setTimeout(() => finish(false), timeout * 1000);
      state.changes.on("change", onChange);
      res.on("close", onClose);
      state.poll = { finish };
    });
    if (conflict) {
      throw new ApiError(
        409,
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      );
    }
  }
  return pendingUpdates(state, offset)
    .slice(0, limit)
    .map((u) => formatUpdate(state, u));
}

function formatUpdate(state: EmulatorState, u: StoredUpdate): Record<string, unknown> {
  if (u.callbackQuery) {
    const id = String(u.callbackId);
    state.issuedQueries.add(id);
    const q = u.callbackQuery;
    return {
      update_id: u.updateId,
      callback_query: { id, from: q.from, message: q.message, chat_instance: "1", data: q.data },
    };
  }
  const { botToken: _token, ...body } = u.message ?? {};
  const kind = state.updateKinds.get(u.message ?? {});
  if (kind !== undefined) return { update_id: u.updateId, [kind]: body };
  return { update_id: u.updateId, message: { ...body, message_id: u.messageId } };
}

function updateKind(state: EmulatorState, u: StoredUpdate): string {
  return u.callbackQuery ? "callback_query" : (state.updateKinds.get(u.message ?? {}) ?? "message");
}

/** Marks updates before `offset` read, and those of kinds the bot opted out of. */
function confirm(state: EmulatorState, offset: number | undefined): void {
  const allowed = state.allowedUpdates;
  for (const u of state.core.storage.userMessages) {
    if (u.botToken !== state.token) continue;
    if (offset !== undefined && u.updateId < offset) u.isRead = true;
    // Telegram never delivers update types the bot opted out of.
    if (allowed && allowed.length > 0 && !allowed.includes(updateKind(state, u))) u.isRead = true;
  }
}
