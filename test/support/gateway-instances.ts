/**
 * Two or three messaging gateways in one process, as separate instances over one shared state
 * (one home, one state.db) and an in-memory coordinator hub: each has its own router, chat relay,
 * platform adapter (an in-memory Telegram stand-in) and scripted model, so a test sees on which
 * instance a turn ran and what each instance's adapter sent.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatSession } from "../../src/agent/chat-session.js";
import { defaultConfig, type HermesConfig } from "../../src/config/defaults.js";
import { ChatRelay } from "../../src/gateway/coordination/chat-relay.js";
import { MessageRouter } from "../../src/gateway/messaging/router.js";
import type { Coordinator } from "../../src/state/coordination.js";
import { PairingStore, pairingRecords } from "../../src/state/gateway/pairing.js";
import {
  type ChatSessionIndex,
  chatSessionIndex,
  SessionIndex,
} from "../../src/state/gateway/session-index.js";
import { openSessionStore, type SqliteSessionStore } from "../../src/state/sqlite-store.js";
import type { SessionStore } from "../../src/state/types.js";
import { createBuiltinRegistry } from "../../src/tools/builtin.js";
import { type CoordinatorHub, coordinatorHub } from "./coordinator-hub.js";
import { GatedTransport, MemoryAdapter, type Overlap, sessionFor } from "./memory-gateway.js";

export { MemoryAdapter, until } from "./memory-gateway.js";

/** A model whose replies the test scripts; a reply may wait on a gate. Counts overlapping calls. */
export class ScriptedModel extends GatedTransport {
  constructor(overlap: Overlap) {
    super({ overlap, halfFirst: false });
  }
}

export interface Instance {
  id: string;
  coordinator: Coordinator;
  relay: ChatRelay;
  router: MessageRouter;
  adapter: MemoryAdapter;
  model: ScriptedModel;
}

export interface Instances {
  hub: CoordinatorHub;
  home: string;
  cwd: string;
  store: SqliteSessionStore;
  /** Model calls of one chat that ran at the same time, at most (across every instance). */
  overlap: Overlap;
  list: Instance[];
  stop(): Promise<void>;
}

export function startInstances(
  ids: readonly string[],
  options: {
    config?: Record<string, unknown>;
    leaseTtlMs?: number;
    /** Real coordinators (PostgreSQL) instead of the hub's, one per id. */
    coordinators?: readonly Coordinator[];
    /** One chat → session index object for every instance (default one each over the same file). */
    sharedIndex?: boolean;
    /** The session store each instance writes through, one per id (default the shared state.db). */
    stores?: readonly SessionStore[];
    /** The chat → session index each instance writes through, one per id (PostgreSQL's, say). */
    indexes?: readonly ChatSessionIndex[];
  } = {},
): Instances {
  const root = mkdtempSync(join(tmpdir(), "hermes-instances-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const store = openSessionStore(join(home, "state.db"));
  const hub = coordinatorHub({ leaseTtlMs: options.leaseTtlMs ?? 300 });
  const config = { ...defaultConfig(), ...(options.config ?? {}) } as HermesConfig;
  const overlap = { now: 0, max: 0 };
  // One chat → session index for all when asked, as PostgreSQL's is shared.
  const index = options.sharedIndex ? chatSessionIndex(new SessionIndex(home)) : undefined;
  const list = ids.map((id, i): Instance => {
    const coordinator = options.coordinators?.[i] ?? hub.join(id);
    const relay = new ChatRelay(coordinator, { home, receiptWaitMs: 400 });
    const adapter = new MemoryAdapter({ maxMessageLength: 4000, userNames: false });
    const model = new ScriptedModel(overlap);
    const own = options.stores?.[i] ?? store;
    const router = new MessageRouter({
      home,
      config,
      env: { TELEGRAM_ALLOWED_USERS: "100,200" },
      adapters: new Map([["telegram", adapter]]),
      pairing: pairingRecords(new PairingStore({ home })),
      relay,
      index: relay.fenceIndex(options.indexes?.[i] ?? index ?? chatSessionIndex(new SessionIndex(home))),
      openSession: (request) =>
        ChatSession.open({
          ...sessionFor(request, {
            transport: model,
            config,
            home,
            cwd,
            store: own,
            toolsets: ["terminal", "todo"],
          }),
          // Fenced as the runner does: writes, tool runs and prompts only while the chat is held.
          ...relay.fenceSession(request.key, {
            store: own,
            registry: createBuiltinRegistry(),
            onApproval: request.onApproval,
          }),
        }),
    });
    void adapter.connect(router.handlersFor(adapter));
    relay.attach((platform) => (platform === "telegram" ? router.handlersFor(adapter) : undefined), router);
    return { id, coordinator, relay, router, adapter, model };
  });
  return {
    hub,
    home,
    cwd,
    store,
    overlap,
    list,
    async stop() {
      for (const instance of list) {
        instance.relay.close();
        await instance.router.stop({ drainMs: 0 });
      }
      store.close();
    },
  };
}

export { coordinatorHub };
