/**
 * Home Assistant as a gateway platform, over HA's WebSocket API (`/api/websocket`: `auth` with a
 * long-lived access token, `subscribe_events` for `state_changed` and the conversation event) and
 * its REST API (`/api/services/persistent_notification/create` for answers, `/api/events/<type>`
 * for conversation responses, `/api/states` after a reconnect).
 *
 * State changes that pass the watch filters and the per-entity cooldown reach the agent as one
 * line each from chat `ha_events` (upstream's shape); the answer becomes a persistent
 * notification. An automation can talk to the agent by firing the conversation event
 * (`hermes_conversation` with `text` and `conversation_id`); the answer is a notification and a
 * `hermes_conversation_response` event (`conversation_id`, `text`) the automation can wait for.
 *
 * HA does not replay events a client missed. After a dropped connection the adapter reads
 * `/api/states` and forwards each watched entity whose state moved meanwhile (once: against the
 * last state it saw), so a change during the outage is not lost. A fired conversation event
 * during an outage is gone, as it is for every HA client.
 */
import { createRequire } from "node:module";
import type WsSocket from "ws";
import { handOver } from "./adapter-kit.js";
import {
  EntityCooldown,
  HA_CONVERSATION_PREFIX,
  type HomeAssistantSettings,
  homeAssistantInbound,
  homeAssistantSettings,
  stateMessage,
  watched,
} from "./homeassistant-events.js";
import { errorText } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
} from "./types.js";

export const HASS_DEFAULT_URL = "http://homeassistant.local:8123";
const MAX_MESSAGE_LENGTH = 4096;
const RETRY_STEPS_MS = [5000, 10_000, 30_000, 60_000];
const describe = errorText;

export interface HomeAssistantAdapterOptions {
  /** Reconnect delays in ms (default upstream's 5, 10, 30, 60 s). */
  retryStepsMs?: readonly number[];
}

/** Creates the Home Assistant adapter; nothing is contacted until `connect` or a send. */
export function createHomeAssistantAdapter(
  ctx: AdapterContext,
  options: HomeAssistantAdapterOptions = {},
): PlatformAdapter {
  const url = String(ctx.settings["url"] ?? "").trim() || ctx.env.HASS_URL?.trim() || HASS_DEFAULT_URL;
  const baseUrl = url.replace(/\/+$/, "");
  const token = ctx.env.HASS_TOKEN?.trim() || String(ctx.settings["token"] ?? "").trim();
  const settings: HomeAssistantSettings = homeAssistantSettings(ctx.settings);
  const steps = options.retryStepsMs ?? RETRY_STEPS_MS;
  const cooldown = new EntityCooldown(settings.cooldownSeconds);
  /** Last state seen per watched entity, to find what changed during an outage. */
  const lastState = new Map<string, string>();
  let handlers: AdapterHandlers | undefined;
  let socket: WsSocket | undefined;
  let stopped = true;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // never let a failing handler stop the socket
    }
  };

  async function rest(method: string, path: string, body?: unknown): Promise<unknown> {
    if (!token) {
      throw new PlatformError(
        "HASS_TOKEN is not set: create a long-lived access token (your HA profile → Security) and put HASS_TOKEN=<it> in .env",
      );
    }
    let res: Response;
    try {
      res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new PlatformError(
        `could not reach Home Assistant at ${baseUrl} (${describe(err)}): check HASS_URL`,
      );
    }
    if (res.status === 401) {
      throw new PlatformError(
        "Home Assistant refused HASS_TOKEN (401): create a new long-lived access token",
      );
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => "")).slice(0, 200);
      throw new PlatformError(`Home Assistant answered ${method} ${path} with HTTP ${res.status}: ${text}`);
    }
    return res.json().catch(() => undefined);
  }

  function deliver(message: Parameters<AdapterHandlers["onMessage"]>[0]): void {
    handOver(handlers, message, report, "Home Assistant event");
  }

  function onState(entityId: string, state: string, text: string): void {
    lastState.set(entityId, state);
    const now = Date.now();
    if (!cooldown.admit(entityId, now)) return;
    deliver(stateMessage(text, entityId, now));
  }

  function onFrame(raw: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      report(`Home Assistant sent a frame that is not JSON: ${raw.slice(0, 80)}`);
      return;
    }
    if (msg["type"] === "result" && msg["success"] === false) {
      report(`Home Assistant refused a subscription: ${JSON.stringify(msg["error"] ?? {})}`);
      return;
    }
    if (msg["type"] !== "event") return;
    const inbound = homeAssistantInbound(msg["event"], settings);
    if (inbound.kind === "state") onState(inbound.entityId, inbound.newState, inbound.text);
    else if (inbound.kind === "conversation") deliver(inbound.message);
  }

  /** After a reconnect: forward each watched entity whose state moved while we were away. */
  async function catchUp(): Promise<void> {
    const states = (await rest("GET", "/api/states")) as Array<Record<string, unknown>> | undefined;
    for (const s of Array.isArray(states) ? states : []) {
      const entityId = typeof s["entity_id"] === "string" ? s["entity_id"] : "";
      if (!watched(entityId, settings)) continue;
      const before = lastState.get(entityId);
      const now = String(s["state"] ?? "unknown");
      if (before === undefined) {
        lastState.set(entityId, now); // first sight: nothing to compare with
        continue;
      }
      const inbound = homeAssistantInbound(
        {
          event_type: "state_changed",
          data: { entity_id: entityId, old_state: { state: before }, new_state: s },
        },
        settings,
      );
      if (inbound.kind === "state") onState(entityId, inbound.newState, inbound.text);
    }
  }

  /** One connection: resolves once subscribed; rejects when auth or the socket fails first. */
  function open(): Promise<void> {
    const require = createRequire(import.meta.url);
    const WebSocket = require("ws") as typeof WsSocket;
    const wsUrl = `${baseUrl.replace(/^http/, "ws")}/api/websocket`;
    return new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(wsUrl);
      socket = ws;
      let ready = false;
      let nextId = 1;
      const send = (payload: Record<string, unknown>) => ws.send(JSON.stringify(payload));
      ws.on("message", (data) => {
        const text = data.toString();
        if (ready) return onFrame(text);
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(text) as Record<string, unknown>;
        } catch {
          return;
        }
        if (msg["type"] === "auth_required") send({ type: "auth", access_token: token });
        else if (msg["type"] === "auth_invalid") {
          ws.close();
          reject(
            new PlatformError(
              `Home Assistant refused HASS_TOKEN (${String(msg["message"] ?? "auth_invalid")}): create a new long-lived access token (your HA profile → Security)`,
            ),
          );
        } else if (msg["type"] === "auth_ok") {
          send({ id: nextId++, type: "subscribe_events", event_type: "state_changed" });
          send({ id: nextId++, type: "subscribe_events", event_type: settings.conversationEvent });
          ready = true;
          resolve();
        }
      });
      ws.on("error", (err) => {
        if (!ready)
          reject(new PlatformError(`could not connect to Home Assistant at ${wsUrl}: ${describe(err)}`));
      });
      ws.on("close", () => {
        if (socket === ws) socket = undefined;
        if (!ready)
          reject(new PlatformError(`Home Assistant at ${wsUrl} closed the connection before auth_ok`));
        else if (!stopped) {
          report("Home Assistant WebSocket lost; reconnecting");
          schedule(0);
        }
      });
    });
  }

  function schedule(attempt: number): void {
    if (stopped) return;
    const delay = steps[Math.min(attempt, steps.length - 1)] ?? 5000;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      open()
        .then(() => catchUp())
        .catch((err: unknown) => {
          report(`Home Assistant reconnect failed: ${describe(err)}`);
          schedule(attempt + 1);
        });
    }, delay);
    retryTimer.unref?.();
  }

  async function notify(target: OutboundTarget, text: string, notificationId?: string): Promise<string> {
    const replacing = notificationId !== undefined;
    const id = notificationId ?? `hermes_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    await rest("POST", "/api/services/persistent_notification/create", {
      title: settings.notificationTitle,
      message: text.slice(0, MAX_MESSAGE_LENGTH),
      notification_id: id,
    });
    if (!replacing && target.chatId.startsWith(HA_CONVERSATION_PREFIX)) {
      await rest("POST", `/api/events/${settings.conversationEvent}_response`, {
        conversation_id: target.chatId.slice(HA_CONVERSATION_PREFIX.length),
        text,
      });
    }
    return id;
  }

  return {
    platform: "homeassistant",
    capabilities: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      // A notification created again with its id replaces the old one.
      edit: true,
      buttons: false,
      typing: false,
      media: false,
      maxMediaBytes: 0,
    },

    async connect(h, connectOptions) {
      if (handlers) return;
      await rest("GET", "/api/");
      handlers = h;
      if (connectOptions?.receive === false) return;
      stopped = false;
      if (settings.watchDomains.size === 0 && settings.watchEntities.size === 0 && !settings.watchAll) {
        report(
          "no homeassistant.watch_domains, watch_entities or watch_all in config.yaml: state changes are not forwarded (conversation events are)",
        );
      }
      try {
        await open();
        await catchUp().catch((err: unknown) =>
          report(`could not read Home Assistant states: ${describe(err)}`),
        );
      } catch (err) {
        handlers = undefined;
        stopped = true;
        throw err;
      }
    },

    async disconnect() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      socket?.terminate();
      socket = undefined;
      handlers = undefined;
    },

    async send(target, text) {
      if (text.trim() === "") throw new PlatformError("cannot send an empty notification to Home Assistant");
      return { messageId: await notify(target, text) };
    },

    async edit(target, messageId, text) {
      // Only the notification is replaced: the conversation response fired once, with the send.
      await notify(target, text, messageId);
    },

    async typing() {
      // Home Assistant has no typing indicator.
    },

    async sendMedia(_target, media) {
      throw new PlatformError(
        `Home Assistant notifications cannot carry files (${media.path}); put the file where HA serves it and link it`,
      );
    },
  };
}
