/**
 * The Home Assistant adapter in-process against the loopback fake: the errors a user sees for a
 * wrong token or address, what a send and an edit do to notifications and response events, and
 * that files are refused with a reason.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHomeAssistantAdapter } from "../../../src/gateway/platforms/homeassistant.js";
import type { AdapterContext } from "../../../src/gateway/platforms/types.js";
import { type FakeHomeAssistant, startFakeHomeAssistant } from "../../support/fake-homeassistant.js";

let ha: FakeHomeAssistant;
const dir = mkdtempSync(join(tmpdir(), "hermes-ha-"));
const errors: string[] = [];
const handlers = {
  onMessage: () => undefined,
  onAction: () => undefined,
  onError: (m: string) => void errors.push(m),
};
const ctx = (env: Record<string, string>, settings: Record<string, unknown> = {}): AdapterContext => ({
  home: dir,
  env,
  settings,
  mediaDir: join(dir, "media"),
  maxInboundMediaBytes: 1024,
});

beforeAll(async () => {
  ha = await startFakeHomeAssistant();
});
afterAll(async () => {
  await ha.stop();
});

describe("Home Assistant adapter", () => {
  it("says what to do when the token is refused, missing or the server is not there", async () => {
    const wrong = createHomeAssistantAdapter(ctx({ HASS_URL: ha.url, HASS_TOKEN: "not-the-token-123456" }));
    await expect(wrong.connect(handlers)).rejects.toThrow(
      /refused HASS_TOKEN \(401\).*long-lived access token/,
    );
    const missing = createHomeAssistantAdapter(ctx({ HASS_URL: ha.url }));
    await expect(missing.connect(handlers)).rejects.toThrow(/HASS_TOKEN is not set/);
    const away = createHomeAssistantAdapter(ctx({ HASS_TOKEN: ha.token }, { url: "http://127.0.0.1:9/" }));
    await expect(away.connect(handlers)).rejects.toThrow(
      /could not reach Home Assistant at http:\/\/127.0.0.1:9 .*HASS_URL/,
    );
  });

  it("warns when no filter lets state changes through, and subscribes anyway for conversations", async () => {
    const adapter = createHomeAssistantAdapter(ctx({ HASS_URL: ha.url, HASS_TOKEN: ha.token }));
    await adapter.connect(handlers);
    expect(errors.some((e) => e.includes("watch_domains"))).toBe(true);
    await ha.waitFor(
      () => (ha.subscriptions.includes("hermes_conversation") ? true : undefined),
      "subscription",
    );
    await adapter.disconnect();
  });

  it("answers a conversation with a notification and one response event; an edit replaces the notification", async () => {
    const adapter = createHomeAssistantAdapter(
      ctx({ HASS_URL: ha.url, HASS_TOKEN: ha.token }, { notification_title: "Jarvis" }),
    );
    await adapter.connect(handlers, { receive: false });
    const sent = await adapter.send({ chatId: "conversation:kitchen" }, "Working on it");
    await adapter.edit({ chatId: "conversation:kitchen" }, sent.messageId, "Done: lights off");
    expect(ha.notifications.get(sent.messageId)).toEqual({
      title: "Jarvis",
      message: "Done: lights off",
      updates: 1,
    });
    expect(ha.fired.filter((f) => f.event_type === "hermes_conversation_response")).toEqual([
      {
        event_type: "hermes_conversation_response",
        data: { conversation_id: "kitchen", text: "Working on it" },
      },
    ]);
    await adapter.send({ chatId: "ha_events" }, "x".repeat(5000));
    expect([...ha.notifications.values()].at(-1)?.message.length).toBe(4096);
    await expect(adapter.send({ chatId: "ha_events" }, " ")).rejects.toThrow(/empty/);
    await expect(
      adapter.sendMedia({ chatId: "ha_events" }, { kind: "photo", path: "/tmp/a.png" }),
    ).rejects.toThrow(/cannot carry files/);
  });
});
