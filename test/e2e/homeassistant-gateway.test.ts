/**
 * Home Assistant through the whole gateway: `hermes gateway run` (the built CLI) against a
 * loopback fake of HA's WebSocket and REST APIs. A watched state change reaches the agent and the
 * answer comes back as a persistent notification; unwatched, ignored and cooling-down entities
 * and a conversation from an HA user not on the allowlist never reach it; conversation input is
 * answered with a notification and a response event; a dangerous command waits for a "yes" sent
 * as conversation input; a change made while the connection was down is forwarded once after the
 * reconnect.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeHomeAssistant, startFakeHomeAssistant } from "../support/fake-homeassistant.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const OWNER = "ha-owner-user-id";
const GUEST = "ha-guest-user-id";

let llm: FakeLlm;
let ha: FakeHomeAssistant;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  ha = await startFakeHomeAssistant();
  ha.setState("binary_sensor.front_door", "off", { friendly_name: "Front Door" }, true);
  ha.setState("light.kitchen", "off", { friendly_name: "Kitchen Light" }, true);
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      [
        'display:\n  tool_progress: "off"',
        "homeassistant:",
        "  watch_domains: [binary_sensor]",
        "  watch_entities: [light.kitchen]",
        "  ignore_entities: [binary_sensor.noisy]",
        "  cooldown_seconds: 600",
        "",
      ].join("\n"),
    ),
  );
  gateway = await startGatewayProcess(
    h,
    { HASS_URL: ha.url, HASS_TOKEN: ha.token, HOMEASSISTANT_ALLOWED_USERS: OWNER },
    /^Gateway running.*homeassistant/,
  );
  await ha.waitFor(() => (ha.subscriptions.length >= 2 ? true : undefined), "subscriptions");
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await ha?.stop();
  await llm?.close();
});

const asked = () => JSON.stringify(llm.chatRequests.at(-1)?.body ?? {});

describe("the Home Assistant gateway (WebSocket API + REST)", () => {
  it("subscribes to state changes and the conversation event", () => {
    expect(ha.subscriptions).toEqual(expect.arrayContaining(["state_changed", "hermes_conversation"]));
  });

  it("forwards a watched state change and answers with a persistent notification", async () => {
    llm.enqueue(reply().text("The **front door** opened."));
    ha.setState("binary_sensor.front_door", "on");
    const answer = await ha.waitForNotification((m) => m.includes("front door"));
    expect(answer).toBe("The **front door** opened.");
    expect([...ha.notifications.values()].find((n) => n.message === answer)?.title).toBe("Hermes Agent");
    expect(asked()).toContain("[Home Assistant] Front Door: triggered (was cleared)");
  }, 30_000);

  it("never forwards unwatched, ignored or cooling-down entities, nor an HA user not allowed", async () => {
    const before = llm.chatRequests.length;
    ha.setState("sensor.outside_temp", "21", { unit_of_measurement: "°C" });
    ha.setState("binary_sensor.noisy", "on");
    ha.setState("binary_sensor.front_door", "off"); // within the 600 s cooldown of the last change
    ha.fire("hermes_conversation", { text: "guest asks for secrets", conversation_id: "g1" }, GUEST);
    llm.enqueue(reply().text("Hello from Hermes."));
    ha.fire("hermes_conversation", { text: "hello hermes", conversation_id: "c1" }, OWNER);
    await ha.waitForNotification((m) => m === "Hello from Hermes.");
    expect(llm.chatRequests.length).toBe(before + 1);
    expect(asked()).toContain("hello hermes");
    const all = JSON.stringify(llm.chatRequests);
    for (const word of ["outside_temp", "noisy", "guest asks", "Front Door: cleared"])
      expect(all).not.toContain(word);
    const response = await ha.waitFor(
      () => ha.fired.find((f) => f.event_type === "hermes_conversation_response"),
      "the response event",
    );
    expect(response.data).toEqual({ conversation_id: "c1", text: "Hello from Hermes." });
  }, 30_000);

  it("waits for a yes, sent as conversation input, before a dangerous command", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    ha.fire("hermes_conversation", { text: "clear the cache", conversation_id: "c1" }, OWNER);
    const ask = await ha.waitForNotification((m) => m.includes("Approval needed"));
    expect(ask).toContain(`rm -rf ${victim}`);
    expect(existsSync(victim)).toBe(true);
    ha.fire("hermes_conversation", { text: "yes", conversation_id: "c1" }, OWNER);
    await ha.waitForNotification((m) => m === "Cache cleared.");
    expect(existsSync(victim)).toBe(false);
  }, 40_000);

  it("after a dropped connection, forwards a change made meanwhile exactly once", async () => {
    const connections = ha.authenticated;
    ha.dropSockets();
    await ha.waitFor(() => (ha.subscriptions.length === 0 ? true : undefined), "the drop");
    ha.setState("light.kitchen", "on"); // nobody is subscribed: HA keeps nothing for later
    llm.enqueue(reply().text("Kitchen light noticed."));
    await ha.waitFor(() => (ha.authenticated > connections ? true : undefined), "the reconnect", 30_000);
    await ha.waitForNotification((m) => m === "Kitchen light noticed.", 30_000);
    const turns = llm.chatRequests.filter((r) => JSON.stringify(r.body).includes("Kitchen Light: turned on"));
    expect(turns.length).toBe(1);
    expect(gateway.stderr()).toContain("Home Assistant WebSocket lost; reconnecting");
  }, 60_000);
});
