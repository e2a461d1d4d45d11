/**
 * `hermes send` to a personal WhatsApp account while the gateway holds its link: the built CLI
 * hands the message to the gateway's control socket (`messages.send`) instead of opening a second
 * connection, which would take the linked device over from the gateway. The gateway side here is
 * the real control server, router delivery and WhatsApp adapter, run in this process with baileys
 * faked at its socket/event seam (WhatsApp's wire protocol cannot be faked faithfully). Without a
 * gateway the CLI connects itself, as before; a gateway that runs WhatsApp but lost its link
 * refuses with a clear message rather than the CLI taking the account over.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/defaults.js";
import { startControlServer } from "../../src/gateway/control/server.js";
import { GatewayControlState } from "../../src/gateway/control/state.js";
import { MessageRouter } from "../../src/gateway/messaging/router.js";
import type { PlatformAdapter } from "../../src/gateway/platforms/types.js";
import { createWhatsAppAdapter } from "../../src/gateway/platforms/whatsapp.js";
import { PairingStore, pairingRecords } from "../../src/state/gateway/pairing.js";
import type { JsonRpcServer } from "../../src/util/json-rpc-socket.js";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeBaileys, fakeBaileys } from "../support/fake-baileys.js";

const FRIEND = "15551230001@s.whatsapp.net";
const ENV = { WHATSAPP_ENABLED: "true", WHATSAPP_MODE: "bot" };

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => undefined);
  cleanup = [];
});

/** A gateway's control side over a WhatsApp adapter on fake baileys; `linked` false: its link is down. */
async function gatewayWithWhatsApp(home: string, linked = true) {
  const fake: FakeBaileys = fakeBaileys();
  const config = defaultConfig();
  const adapter: PlatformAdapter = createWhatsAppAdapter(
    { home, env: ENV, settings: {}, mediaDir: join(home, "cache", "media"), maxInboundMediaBytes: 1_000_000 },
    { load: async () => fake, reconnectDelayMs: () => 5, openTimeoutMs: 5000 },
  );
  await adapter.connect({ onMessage: () => undefined, onAction: () => undefined, onError: () => undefined });
  cleanup.push(() => adapter.disconnect());
  const state = new GatewayControlState();
  if (linked) state.platformUp("whatsapp");
  else state.platformDown("whatsapp");
  const router = new MessageRouter({
    home,
    config,
    env: ENV,
    adapters: new Map([["whatsapp", adapter]]),
    pairing: pairingRecords(new PairingStore({ home })),
    openSession: () => Promise.reject(new Error("no agent in this test")),
    observer: state,
  });
  const agent = spawn("sleep", ["600"], { stdio: "ignore" });
  cleanup.push(async () => {
    agent.kill();
  });
  const server: JsonRpcServer = await startControlServer({
    home,
    config,
    env: ENV,
    state,
    services: ["whatsapp"],
    router: () => router,
    connected: () => (linked ? ["whatsapp"] : []),
    // The agent would run here; `hermes send` below, a child of this test, plays the user outside it.
    agentPid: agent.pid as number,
  });
  cleanup.push(() => server.close());
  return { fake, state };
}

describe("hermes send to a personal WhatsApp account", () => {
  it("goes through the running gateway's control socket, not a second connection", async () => {
    const h = tempHome("");
    const { fake, state } = await gatewayWithWhatsApp(h.home);
    const sent = await runHermes(["send", "-t", `whatsapp:${FRIEND}`, "Deploy **done**."], {
      ...h,
      env: ENV,
    });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain(`Sent to whatsapp:${FRIEND} (through the running gateway).`);
    expect(fake.sent.map((m) => [m.jid, m.content["text"]])).toEqual([[FRIEND, "Deploy *done*."]]);
    // One socket: the gateway's. The CLI never linked a device of its own.
    expect(fake.sockets).toHaveLength(1);
    const logged = state.events.poll(0, { limit: 50 }).events.map((e) => e.type);
    expect(logged).toContain("message");
  }, 30_000);

  it("a gateway that runs WhatsApp but lost its link refuses, and the CLI does not take the account over", async () => {
    const h = tempHome("");
    const { fake } = await gatewayWithWhatsApp(h.home, false);
    const sent = await runHermes(["send", "-t", `whatsapp:${FRIEND}`, "hello?"], { ...h, env: ENV });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("whatsapp is not connected to this gateway");
    expect(sent.stderr).toContain("does not open a second one");
    expect(fake.sent).toEqual([]);
  }, 30_000);

  it("without a running gateway the CLI connects itself, as before", async () => {
    const h = tempHome("");
    mkdirSync(join(h.home, "whatsapp"), { recursive: true });
    const sent = await runHermes(["send", "-t", `whatsapp:${FRIEND}`, "hello"], { ...h, env: ENV });
    expect(sent.code).toBe(1);
    // The adapter's own check: proof the CLI went to WhatsApp itself.
    expect(sent.stderr).toContain("WhatsApp is not paired yet");
  }, 30_000);
});
