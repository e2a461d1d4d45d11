import { describe, expect, it } from "vitest";
import {
  describeStateChange,
  EntityCooldown,
  homeAssistantInbound,
  homeAssistantSettings,
  watched,
} from "../../../src/gateway/platforms/homeassistant-events.js";

const change = (entity_id: string, from: string, to: string, attributes: Record<string, unknown> = {}) => ({
  event_type: "state_changed",
  data: { entity_id, old_state: { state: from }, new_state: { state: to, attributes } },
});

describe("homeAssistantSettings and watched", () => {
  it("is closed by default: nothing is watched without a filter or watch_all", () => {
    const s = homeAssistantSettings({});
    expect(watched("light.kitchen", s)).toBe(false);
    expect(s.cooldownSeconds).toBe(30);
    expect(s.conversationEvent).toBe("hermes_conversation");
    expect(watched("light.kitchen", homeAssistantSettings({ watch_all: true }))).toBe(true);
  });

  it("domains and entities let in; ignore_entities always wins; look-alikes stay out", () => {
    const s = homeAssistantSettings({
      watch_domains: ["binary_sensor"],
      watch_entities: "light.kitchen, switch.fan",
      ignore_entities: ["binary_sensor.noisy"],
      watch_all: true,
    });
    expect(watched("binary_sensor.door", s)).toBe(true);
    expect(watched("light.kitchen", s)).toBe(true);
    expect(watched("switch.fan", s)).toBe(true);
    expect(watched("binary_sensor.noisy", s)).toBe(false);
    // watch_all does not widen explicit filters (upstream's order)
    for (const id of ["light.kitchen_2", "sensor.binary_sensor", "binary_sensorx.door", "", "light"]) {
      expect(watched(id, s), id).toBe(false);
    }
  });

  it("bad numbers fall back to the default cooldown", () => {
    expect(homeAssistantSettings({ cooldown_seconds: "soon" }).cooldownSeconds).toBe(30);
    expect(homeAssistantSettings({ cooldown_seconds: -1 }).cooldownSeconds).toBe(30);
    expect(homeAssistantSettings({ cooldown_seconds: 0 }).cooldownSeconds).toBe(0);
  });
});

describe("describeStateChange", () => {
  it.each([
    [
      "binary_sensor.door",
      "off",
      "on",
      { friendly_name: "Door" },
      "[Home Assistant] Door: triggered (was cleared)",
    ],
    ["light.k", "off", "on", {}, "[Home Assistant] light.k: turned on"],
    [
      "sensor.t",
      "20",
      "21",
      { unit_of_measurement: "°C", friendly_name: "T" },
      "[Home Assistant] T: changed from 20°C to 21°C",
    ],
    [
      "climate.hall",
      "off",
      "heat",
      { friendly_name: "Hall", current_temperature: 19, temperature: 21 },
      "[Home Assistant] Hall: HVAC mode changed from 'off' to 'heat' (current: 19, target: 21)",
    ],
    [
      "lock.front",
      "locked",
      "unlocked",
      {},
      "[Home Assistant] lock.front (lock.front): changed from 'locked' to 'unlocked'",
    ],
  ])("%s %s → %s", (id, from, to, attrs, text) => {
    expect(describeStateChange(id, { state: from }, { state: to, attributes: attrs })).toBe(text);
  });

  it("says nothing when the state did not change or the entity was removed", () => {
    expect(
      describeStateChange("light.k", { state: "on" }, { state: "on", attributes: { brightness: 3 } }),
    ).toBeUndefined();
    expect(describeStateChange("light.k", { state: "on" }, null)).toBeUndefined();
    expect(describeStateChange("light.k", null, { state: "on" })).toBe("[Home Assistant] light.k: turned on");
  });
});

describe("homeAssistantInbound", () => {
  const s = homeAssistantSettings({ watch_domains: ["light"] });

  it("state changes that pass the filters; others are ignored", () => {
    expect(homeAssistantInbound(change("light.k", "off", "on"), s)).toMatchObject({
      kind: "state",
      entityId: "light.k",
      newState: "on",
    });
    expect(homeAssistantInbound(change("switch.k", "off", "on"), s).kind).toBe("ignore");
    expect(homeAssistantInbound({ event_type: "state_changed", data: {} }, s).kind).toBe("ignore");
    expect(homeAssistantInbound("garbage", s).kind).toBe("ignore");
  });

  it("conversation input from the HA user who fired it, in its conversation", () => {
    const r = homeAssistantInbound(
      {
        event_type: "hermes_conversation",
        data: { text: " hi ", conversation_id: "c9" },
        context: { id: "ctx", user_id: "u1" },
      },
      s,
    );
    expect(r).toMatchObject({
      kind: "conversation",
      message: {
        text: "hi",
        messageId: "ctx",
        source: { chatId: "conversation:c9", userId: "u1", chatType: "dm" },
      },
    });
    const automation = homeAssistantInbound(
      { event_type: "hermes_conversation", data: { text: "hi" }, context: { user_id: null } },
      s,
    );
    expect(automation).toMatchObject({
      message: { source: { userId: "homeassistant", chatId: "conversation:default" } },
    });
    expect(homeAssistantInbound({ event_type: "hermes_conversation", data: { text: "  " } }, s).kind).toBe(
      "ignore",
    );
    expect(homeAssistantInbound({ event_type: "other_event", data: { text: "hi" } }, s).kind).toBe("ignore");
  });
});

describe("EntityCooldown", () => {
  it("lets one change per entity through per period", () => {
    const c = new EntityCooldown(30);
    expect(c.admit("a", 0)).toBe(true);
    expect(c.admit("a", 29_999)).toBe(false);
    expect(c.admit("b", 29_999)).toBe(true);
    expect(c.admit("a", 30_000)).toBe(true);
    const none = new EntityCooldown(0);
    expect(none.admit("a", 1)).toBe(true);
    expect(none.admit("a", 1)).toBe(true);
  });
});
