/**
 * What a Home Assistant event means for the gateway: pure decisions over the event JSON of HA's
 * WebSocket API (`{type: "event", event: {event_type, data, context}}`) and the adapter's
 * settings (`homeassistant:` in config.yaml, upstream's keys).
 *
 * `state_changed` events pass the watch filters (closed by default: `watch_domains`,
 * `watch_entities` or `watch_all` must let them in; `ignore_entities` always wins), then a
 * per-entity cooldown, and become one line the agent reads, worded by domain. Conversation input
 * is an event an automation fires (`conversation_event`, default `hermes_conversation`, with
 * `data.text`), answered in the conversation it names.
 */
import type { InboundMessage } from "./types.js";

export interface HomeAssistantSettings {
  watchDomains: ReadonlySet<string>;
  watchEntities: ReadonlySet<string>;
  ignoreEntities: ReadonlySet<string>;
  watchAll: boolean;
  /** Seconds between two forwarded changes of one entity (upstream default 30). */
  cooldownSeconds: number;
  /** The event type automations fire to talk to the agent. */
  conversationEvent: string;
  /** Title of the persistent notifications the answers become. */
  notificationTitle: string;
}

/** Chat id of state changes (upstream's), and the user they come from. */
export const HA_EVENTS_CHAT = "ha_events";
export const HA_SYSTEM_USER = "homeassistant";
/** Chat ids of conversations start with this; the rest is the conversation id. */
export const HA_CONVERSATION_PREFIX = "conversation:";

const names = (value: unknown): Set<string> =>
  new Set(
    (Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [])
      .map((v) => String(v).trim())
      .filter(Boolean),
  );

/** Settings from the `homeassistant:` section (or `platforms.homeassistant.extra`). */
export function homeAssistantSettings(settings: Readonly<Record<string, unknown>>): HomeAssistantSettings {
  const cooldown = Number(settings["cooldown_seconds"] ?? 30);
  const watchAll = settings["watch_all"];
  const event = settings["conversation_event"];
  const title = settings["notification_title"];
  return {
    watchDomains: names(settings["watch_domains"]),
    watchEntities: names(settings["watch_entities"]),
    ignoreEntities: names(settings["ignore_entities"]),
    watchAll:
      watchAll === true || (typeof watchAll === "string" && /^(true|1|yes|on)$/i.test(watchAll.trim())),
    cooldownSeconds: Number.isFinite(cooldown) && cooldown >= 0 ? cooldown : 30,
    conversationEvent: typeof event === "string" && event.trim() ? event.trim() : "hermes_conversation",
    notificationTitle: typeof title === "string" && title.trim() ? title.trim() : "Hermes Agent",
  };
}

/** Whether the filters let changes of this entity through. */
export function watched(entityId: string, s: HomeAssistantSettings): boolean {
  if (!entityId || s.ignoreEntities.has(entityId)) return false;
  const domain = entityId.includes(".") ? entityId.slice(0, entityId.indexOf(".")) : "";
  if (s.watchDomains.size > 0 || s.watchEntities.size > 0) {
    return s.watchDomains.has(domain) || s.watchEntities.has(entityId);
  }
  return s.watchAll;
}

interface HaState {
  state?: unknown;
  attributes?: Record<string, unknown>;
}

const stateOf = (s: HaState | null | undefined): string =>
  s && s.state !== undefined && s.state !== null ? String(s.state) : "unknown";

/** One line describing a change, worded by domain; undefined when the state did not change. */
export function describeStateChange(
  entityId: string,
  oldState: HaState | null | undefined,
  newState: HaState | null | undefined,
): string | undefined {
  if (!newState) return undefined;
  const before = stateOf(oldState);
  const after = stateOf(newState);
  if (before === after) return undefined;
  const attrs = newState.attributes ?? {};
  const name = typeof attrs["friendly_name"] === "string" ? attrs["friendly_name"] : entityId;
  const domain = entityId.split(".")[0] ?? "";
  const unit = typeof attrs["unit_of_measurement"] === "string" ? attrs["unit_of_measurement"] : "";
  switch (domain) {
    case "climate":
      return `[Home Assistant] ${name}: HVAC mode changed from '${before}' to '${after}' (current: ${attrs["current_temperature"] ?? "?"}, target: ${attrs["temperature"] ?? "?"})`;
    case "sensor":
      return `[Home Assistant] ${name}: changed from ${before}${unit} to ${after}${unit}`;
    case "binary_sensor": {
      const word = (v: string) => (v === "on" ? "triggered" : "cleared");
      return `[Home Assistant] ${name}: ${word(after)} (was ${word(before)})`;
    }
    case "light":
    case "switch":
    case "fan":
      return `[Home Assistant] ${name}: turned ${after === "on" ? "on" : "off"}`;
    case "alarm_control_panel":
      return `[Home Assistant] ${name}: alarm state changed from '${before}' to '${after}'`;
    default:
      return `[Home Assistant] ${name} (${entityId}): changed from '${before}' to '${after}'`;
  }
}

/**
 * Per-entity cooldown: `admit` says whether a change at `now` (ms) may go through and, if so,
 * starts the entity's quiet period.
 */
export class EntityCooldown {
  private readonly last = new Map<string, number>();
  constructor(private readonly seconds: number) {}
  admit(entityId: string, now: number): boolean {
    const previous = this.last.get(entityId);
    if (previous !== undefined && now - previous < this.seconds * 1000) return false;
    this.last.set(entityId, now);
    return true;
  }
}

export type HaInbound =
  | { kind: "ignore" }
  | { kind: "state"; entityId: string; newState: string; text: string }
  | { kind: "conversation"; message: InboundMessage };

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * Reads one `event` object. A state change that the filters pass (the cooldown is the caller's)
 * becomes `state`; the conversation event with text becomes a message from the HA user who fired
 * it (its `context.user_id`, else `homeassistant`).
 */
export function homeAssistantInbound(event: unknown, s: HomeAssistantSettings): HaInbound {
  const e = record(event);
  const data = record(e["data"]);
  if (e["event_type"] === "state_changed") {
    const entityId = typeof data["entity_id"] === "string" ? data["entity_id"] : "";
    if (!watched(entityId, s)) return { kind: "ignore" };
    const next = data["new_state"] as HaState | null | undefined;
    const text = describeStateChange(entityId, data["old_state"] as HaState | null | undefined, next);
    return text ? { kind: "state", entityId, newState: stateOf(next), text } : { kind: "ignore" };
  }
  if (e["event_type"] === s.conversationEvent) {
    const text = typeof data["text"] === "string" ? data["text"].trim() : "";
    if (!text) return { kind: "ignore" };
    const context = record(e["context"]);
    const userId =
      typeof context["user_id"] === "string" && context["user_id"] ? context["user_id"] : HA_SYSTEM_USER;
    const conversation =
      typeof data["conversation_id"] === "string" && data["conversation_id"]
        ? data["conversation_id"]
        : "default";
    return {
      kind: "conversation",
      message: {
        source: {
          platform: "homeassistant",
          chatType: "dm",
          chatId: `${HA_CONVERSATION_PREFIX}${conversation}`,
          chatName: "Home Assistant conversation",
          userId,
          ...(typeof data["user_name"] === "string" ? { userName: data["user_name"] } : {}),
        },
        text,
        ...(typeof context["id"] === "string" ? { messageId: context["id"] } : {}),
      },
    };
  }
  return { kind: "ignore" };
}

/** A state change as the message the agent gets (upstream's source: channel `ha_events`). */
export function stateMessage(text: string, entityId: string, now: number): InboundMessage {
  return {
    source: {
      platform: "homeassistant",
      chatType: "channel",
      chatId: HA_EVENTS_CHAT,
      chatName: "Home Assistant Events",
      userId: HA_SYSTEM_USER,
      userName: "Home Assistant",
    },
    text,
    messageId: `ha_${entityId}_${Math.floor(now / 1000)}`,
    mentioned: true,
  };
}
