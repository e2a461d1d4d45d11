/**
 * What an unknown user in a DM gets when pairing is on: a one-hour code to hand the owner
 * (`hermes pairing approve <platform> <code>`), rate-limited by the pairing store. Never throws.
 */

import type { PairingRecords } from "../../state/gateway/pairing.js";
import type { Logger } from "../../util/log.js";
import type { MessageSource, PlatformAdapter } from "../platforms/types.js";

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function offerPairing(
  pairing: PairingRecords,
  adapter: PlatformAdapter,
  source: MessageSource,
  print: (line: string) => void,
  plog: Logger,
): Promise<void> {
  try {
    const request = await pairing.requestCode(source.platform, {
      id: source.userId,
      ...(source.userName ? { name: source.userName } : {}),
    });
    if (request.status !== "created") {
      print(`${source.platform}: pairing request from ${source.userId}: ${request.status}`);
      plog.info("pairing request not granted a code", { user: source.userId, status: request.status });
      return;
    }
    print(`${source.platform}: sent a pairing code to unknown user ${source.userId}`);
    plog.info("pairing code sent", { user: source.userId, chat: source.chatId });
    await adapter.send(
      { chatId: source.chatId, ...(source.threadId ? { threadId: source.threadId } : {}) },
      "👋 I don't know you yet, so I can't answer. To pair this account, ask my owner to run:\n\n" +
        `hermes pairing approve ${source.platform} ${request.code}\n\n` +
        "The code expires in one hour.",
      { plain: true },
    );
  } catch (error) {
    print(`${source.platform}: pairing failed for ${source.userId}: ${describeError(error)}`);
    plog.error("pairing failed", { user: source.userId, error: describeError(error) });
  }
}

/** A message from a user not allowed in: logged, then a pairing code offered (`pairing`) or ignored. */
export async function refuseStranger(
  pairing: PairingRecords,
  adapter: PlatformAdapter,
  source: MessageSource,
  offer: boolean,
  print: (line: string) => void,
  plog: Logger,
): Promise<void> {
  plog.info("message from unauthorized user", {
    chat: source.chatId,
    user: source.userId,
    action: offer ? "pairing" : "ignored",
  });
  if (offer) await offerPairing(pairing, adapter, source, print, plog);
  else print(`${source.platform}: ignored a message from unauthorized user ${source.userId}`);
}
