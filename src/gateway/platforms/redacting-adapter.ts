/**
 * The one send path of every platform: whatever the gateway sends (replies, streamed edits, tool
 * progress, approval prompts, cron and webhook deliveries, captions, button labels) passes the
 * secret redactor before it reaches the adapter. `createAdapter` wraps every adapter it builds.
 *
 * Not covered: the bytes of files sent with `sendMedia` (an attachment is passed as it is).
 */
import type { Redactor } from "../../util/redact.js";
import type { Button, OutboundMedia, PlatformAdapter, SendOptions } from "./types.js";

/** `adapter` with every outgoing text redacted by `redactor`. Incoming events are untouched. */
export function redactingAdapter(adapter: PlatformAdapter, redactor: Redactor): PlatformAdapter {
  const text = (value: string) => redactor.redact(value);
  const options = (value: SendOptions | undefined): SendOptions | undefined =>
    value?.buttons
      ? {
          ...value,
          buttons: value.buttons.map((row) => row.map((b): Button => ({ ...b, label: text(b.label) }))),
        }
      : value;
  const wrapped: PlatformAdapter = {
    get platform() {
      return adapter.platform;
    },
    get capabilities() {
      return adapter.capabilities;
    },
    connect: (handlers, connectOptions) => adapter.connect(handlers, connectOptions),
    disconnect: () => adapter.disconnect(),
    send: (target, body, sendOptions) => adapter.send(target, text(body), options(sendOptions)),
    edit: (target, messageId, body, sendOptions) =>
      adapter.edit(target, messageId, text(body), options(sendOptions)),
    typing: (target) => adapter.typing(target),
    sendMedia: (target, media: OutboundMedia) =>
      adapter.sendMedia(
        target,
        media.caption === undefined ? media : { ...media, caption: text(media.caption) },
      ),
  };
  if (adapter.setCommands) {
    const setCommands = adapter.setCommands.bind(adapter);
    wrapped.setCommands = (commands) => setCommands(commands);
  }
  if (adapter.processing) {
    const processing = adapter.processing.bind(adapter);
    wrapped.processing = (message, state) => processing(message, state);
  }
  // Its own posts (transcripts, notes) are redacted where it sends them (discord-voice.ts).
  if (adapter.voiceChannels) wrapped.voiceChannels = adapter.voiceChannels;
  return wrapped;
}
