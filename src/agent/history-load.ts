/**
 * A stored conversation as the next request may carry it: repaired (ai/history-repair.ts) so a
 * session killed mid-turn is valid for strict providers. Stand-ins that only complete the end of
 * the history are written back once, so the transcript shows them and later loads find nothing
 * to do; other repairs are applied again, identically, on each load.
 */
import { describeRepair, repairChanged, repairHistory } from "../ai/history-repair.js";
import type { Message } from "../ai/types.js";
import type { SessionStore } from "../state/types.js";
import type { Logger } from "../util/log.js";

export async function loadRepairedConversation(
  store: SessionStore,
  id: string,
  options: { logger?: Logger; onWarning?: (message: string) => void },
): Promise<Message[]> {
  const repair = repairHistory(await store.conversation(id));
  if (!repairChanged(repair)) return repair.messages;
  const log = options.logger?.child({ component: "agent", sessionId: id });
  if (repair.appended) {
    try {
      await store.appendMessages(id, repair.appended);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      log?.warning(`Could not save the repaired history: ${why}`);
      options.onWarning?.(
        `Could not save the repaired history in ${store.path} (${why}); it is repaired again next time.`,
      );
    }
    // Told once: the repair is on disk, so the next resume finds nothing to repair.
    const note = describeRepair(repair);
    if (note) options.onWarning?.(note);
  }
  log?.info("history repaired on resume", {
    missingResults: repair.missingResults,
    orphanResults: repair.orphanResults,
    movedResults: repair.movedResults,
    droppedDuplicates: repair.droppedDuplicates,
    markedInterrupted: repair.markedInterrupted,
    droppedEmpty: repair.droppedEmpty,
    written: repair.appended !== undefined,
  });
  return repair.messages;
}
