/**
 * Every store a surface (gateway runner, API server, cron, dashboard, CLI commands) reads or writes,
 * from one backend chosen by `state.backend` (state/backend-config.ts):
 *
 * - `sqlite` (the default): state.db through the write queue, `response_store.db`, and the JSON
 *   and Markdown files of the home (sessions.json, pairing/, webhook_subscriptions.json,
 *   cron/jobs.json, memories/, skills/.usage.json, config.yaml's `command_allowlist`), exactly the
 *   stores the surfaces opened themselves before, with the one-process coordinator;
 * - `postgres`: everything in one PostgreSQL database behind the same contracts, opened by
 *   knowledge/postgres-backend.ts, which is imported only then: nothing of `pg` loads for a
 *   SQLite home.
 *
 * Surfaces take a backend from their caller (the gateway runner hands its own to the API server)
 * or open one and close it when they stop.
 */
import type { HermesConfig } from "../config/defaults.js";
import { stateBackendChoice } from "../state/backend-config.js";
import { localCoordinator } from "../state/coordination.js";
import { configCommandAllowlist } from "../state/gateway/command-allowlist.js";
import { PairingStore, pairingRecords } from "../state/gateway/pairing.js";
import { ResponseStore, responseRecords } from "../state/gateway/response-store.js";
import { chatSessionIndex, SessionIndex } from "../state/gateway/session-index.js";
import { WebhookSubscriptionStore, webhookSubscriptions } from "../state/gateway/webhook-subscriptions.js";
import { durabilityOptions, openRecordingStore } from "../state/recording-store.js";
import type { CommandAllowlist, StateBackend, StateBackendOptions } from "./state-backend-types.js";
import { fileKnowledgeStores } from "./stores.js";

export type {
  CommandAllowlist,
  RecordingSessions,
  StateBackend,
  StateBackendOptions,
} from "./state-backend-types.js";

/**
 * Opens the backend `config.state` names for `home`. Throws `StateBackendConfigError` for a
 * backend that cannot be used as configured, and the PostgreSQL backend's error (URL masked) when
 * the database cannot be reached or migrated; never falls back to the files.
 */
export async function openStateBackend(
  home: string,
  config: HermesConfig,
  options: StateBackendOptions = {},
): Promise<StateBackend> {
  const choice = stateBackendChoice(config.state, { ...(options.env ?? process.env) });
  if (choice.kind === "sqlite") return sqliteStateBackend(home, config, options);
  const { openPostgresBackend } = await import("./postgres-backend.js");
  return openPostgresBackend(home, config, choice, options);
}

/** The SQLite and file stores of `home` (what every surface used before there was a choice). */
export function sqliteStateBackend(
  home: string,
  config: HermesConfig,
  options: StateBackendOptions = {},
): StateBackend {
  const coordinator = localCoordinator(options.instance ?? {});
  return {
    kind: "sqlite",
    label: home,
    coordinator,
    ...fileKnowledgeStores(home),
    openSessions: ({ notify } = {}) =>
      openRecordingStore(home, {
        open: durabilityOptions(config.state),
        notify: notify ?? (() => undefined),
      }),
    chatIndex: (onWarning) => chatSessionIndex(new SessionIndex(home, onWarning)),
    pairing: pairingRecords(new PairingStore({ home })),
    webhookSubscriptions: webhookSubscriptions(new WebhookSubscriptionStore({ home })),
    openResponses: ({ capacity = 100, onWarning } = {}) =>
      responseRecords(new ResponseStore(home, capacity, onWarning)),
    commandAllowlist: configAllowlist(home, config),
    close: () => coordinator.close(),
  };
}

/**
 * `command_allowlist` in config.yaml (comments kept), also updated in the running `config` so
 * every conversation of this process sees an "always" at once.
 */
function configAllowlist(home: string, config: HermesConfig): CommandAllowlist {
  // Entries are written literally (never with ${VAR} substituted); the running config learns them too.
  const file = configCommandAllowlist(home);
  return {
    list: () => file.list(),
    add: async (entry) => {
      const added = await file.add(entry);
      config.command_allowlist = [...new Set([...(config.command_allowlist ?? []), entry])];
      return added;
    },
    remove: async (entry) => {
      const removed = await file.remove(entry);
      config.command_allowlist = (config.command_allowlist ?? []).filter((e) => e !== entry);
      return removed;
    },
  };
}
