/**
 * The message router's test bench (test/unit/gateway/router*.test.ts): an in-memory platform the
 * test plays the user on, a transport whose replies the test scripts and may hold on a gate, and
 * `setup`, a router over both with a real session store in a temporary home.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { ChatSession } from "../../src/agent/chat-session.js";
import { defaultConfig, type HermesConfig } from "../../src/config/defaults.js";
import { MessageRouter, type OpenConversation } from "../../src/gateway/messaging/router.js";
import { PairingStore, pairingRecords } from "../../src/state/gateway/pairing.js";
import { openSessionStore, type SqliteSessionStore } from "../../src/state/sqlite-store.js";
import { GatedTransport, MemoryAdapter, openSessionFor } from "./memory-gateway.js";

export { GatedTransport, MemoryAdapter, until } from "./memory-gateway.js";

const DEFAULT_CONFIG = defaultConfig();

export const stores: SqliteSessionStore[] = [];
export const routers: MessageRouter[] = [];

/** Stops the routers and closes the stores `setup` made, after each test of the calling file. */
export function stopRoutersAfterEach(): void {
  afterEach(async () => {
    for (const r of routers.splice(0)) await r.stop();
    for (const s of stores.splice(0)) s.close();
  });
}

export function setup(
  options: {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
    now?: () => Date;
    maxCachedAgents?: number;
  } = {},
) {
  const root = mkdtempSync(join(tmpdir(), "hermes-router-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const store = openSessionStore(join(home, "state.db"));
  stores.push(store);
  const transport = new GatedTransport();
  const adapter = new MemoryAdapter();
  const config = { ...DEFAULT_CONFIG, ...(options.config ?? {}) } as HermesConfig;
  const env: Record<string, string | undefined> = { TELEGRAM_ALLOWED_USERS: "100", ...(options.env ?? {}) };
  const pairing = new PairingStore({ home });
  const opened: OpenConversation[] = [];
  const chats: ChatSession[] = [];
  const logs: string[] = [];
  const router = new MessageRouter({
    home,
    config,
    env,
    adapters: new Map([["telegram", adapter]]),
    pairing: pairingRecords(pairing),
    log: (line) => logs.push(line),
    ...(options.now ? { now: options.now } : {}),
    ...(options.maxCachedAgents ? { maxCachedAgents: options.maxCachedAgents } : {}),
    openSession: (request) => {
      opened.push(request);
      const chat = openSessionFor(request, {
        transport,
        config,
        home,
        cwd,
        store,
        toolsets: ["terminal", "todo"],
      });
      void chat.then((c) => chats.push(c));
      return chat;
    },
  });
  routers.push(router);
  void adapter.connect(router.handlersFor(adapter));
  return { home, cwd, store, transport, adapter, router, env, pairing, opened, chats, logs };
}
