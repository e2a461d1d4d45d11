/**
 * Delivery without the agent: where a platform's home channel is, and how a text (with `MEDIA:`
 * attachments) reaches a chat in pieces the platform accepts. Used by the router for cron output and
 * webhooks, and by `hermes send`.
 */
import type { HermesConfig } from "../../config/defaults.js";
import { platformEnvPrefix } from "../../state/gateway/allowlist.js";
import type { Logger } from "../../util/log.js";
import { redactText } from "../../util/redact.js";
import type { OutboundTarget, PlatformAdapter } from "../platforms/types.js";
import { chunkMarkdown, extractMedia } from "./output.js";
import type { RouterOptions } from "./router-types.js";

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Splits `chat[:thread]`; Telegram chat ids may be negative, so only the last colon separates. */
export function parseChatRef(raw: string): OutboundTarget {
  const cut = raw.lastIndexOf(":");
  if (cut > 0) return { chatId: raw.slice(0, cut), threadId: raw.slice(cut + 1) };
  return { chatId: raw };
}

/**
 * A platform's home channel: `<PLATFORM>_HOME_CHANNEL` (`chat` or `chat:thread`, set by `/sethome`;
 * upstream's `MATRIX_HOME_ROOM` for Matrix), else `platforms.<platform>.home_channel` in config.yaml (a string or `{chat_id}`).
 */
export function homeChannel(
  platform: string,
  env: Readonly<Record<string, string | undefined>>,
  config: HermesConfig,
): OutboundTarget | undefined {
  const fromEnv = (
    env[`${platformEnvPrefix(platform)}_HOME_CHANNEL`] ??
    (platform === "matrix" ? env["MATRIX_HOME_ROOM"] : undefined)
  )?.trim();
  if (fromEnv) return parseChatRef(fromEnv);
  const value = section(section(config["platforms"])[platform])["home_channel"];
  const raw =
    typeof value === "string" || typeof value === "number"
      ? String(value)
      : (() => {
          const chat = section(value)["chat_id"];
          return typeof chat === "string" || typeof chat === "number" ? String(chat) : "";
        })();
  return raw ? parseChatRef(raw) : undefined;
}

/** The explicit chat, else the home channel; throws with the way to set one when there is none. */
export function resolveTarget(
  platform: string,
  target: { chatId?: string | undefined; threadId?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  config: HermesConfig,
): OutboundTarget {
  if (target.chatId)
    return { chatId: target.chatId, ...(target.threadId ? { threadId: target.threadId } : {}) };
  const home = homeChannel(platform, env, config);
  if (!home) {
    throw new Error(
      `${platform} has no home channel: send /sethome in the chat, or set ${platformEnvPrefix(platform)}_HOME_CHANNEL`,
    );
  }
  const threadId = target.threadId ?? home.threadId;
  return { chatId: home.chatId, ...(threadId ? { threadId } : {}) };
}

/** Sends `text` to `to`: chunked markdown first, then each attachment. Throws on the first failure. */
export async function deliverText(adapter: PlatformAdapter, to: OutboundTarget, text: string): Promise<void> {
  const { text: body, media, problems } = extractMedia(text);
  // Redacted before it is cut into messages, so a cut never splits a secret past recognition.
  const all = redactText(
    [body, ...problems.map((p) => `⚠️ Could not attach ${p}`)].filter(Boolean).join("\n\n"),
  );
  for (const chunk of chunkMarkdown(all, adapter.capabilities.maxMessageLength - 32))
    await adapter.send(to, chunk);
  for (const item of media) await adapter.sendMedia(to, item);
}

/**
 * `MessageRouter.deliver`: text without the agent (cron output, webhooks) to the given chat or the
 * platform's home channel, chunked, with attachments, told to the observer and logged. Throws when
 * the platform is not connected or has no home.
 */
export async function deliverAside(
  options: Pick<RouterOptions, "adapters" | "env" | "config" | "observer">,
  log: Logger,
  platform: string,
  target: { chatId?: string; threadId?: string },
  text: string,
): Promise<void> {
  const adapter = options.adapters.get(platform);
  if (!adapter) throw new Error(`the ${platform} platform is not connected`);
  const resolved = resolveTarget(platform, target, options.env, options.config);
  await deliverText(adapter, resolved, text);
  options.observer?.message("out", { platform, ...resolved }, text, { via: "deliver" });
  log.info("message out", { chat: resolved.chatId, chars: text.length, via: "deliver" });
}
