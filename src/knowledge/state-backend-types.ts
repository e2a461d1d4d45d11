/** The types of knowledge/state-backend.ts (apart, so the PostgreSQL backend can name them). */

import type { Coordinator } from "../state/coordination.js";
import type { CommandAllowlist } from "../state/gateway/command-allowlist.js";
import type { PairingRecords } from "../state/gateway/pairing.js";
import type { ResponseRecords } from "../state/gateway/response-records.js";
import type { ChatSessionIndex } from "../state/gateway/session-index.js";
import type { ChatSettingsRecords, PendingApprovalRecords } from "../state/gateway/shared-approvals.js";
import type { WebhookDeliveries } from "../state/gateway/webhook-deliveries.js";
import type { WebhookSubscriptions } from "../state/gateway/webhook-subscriptions.js";
import type { SessionStore } from "../state/types.js";
import type { KnowledgeStores } from "./stores.js";

/** A session store one surface records into; `drain` waits (bounded) for writes still queued. */
export type RecordingSessions = SessionStore & { drain(timeoutMs: number): Promise<boolean> };

/** The approvals "always allow" patterns (`command_allowlist`). */
export type { CommandAllowlist } from "../state/gateway/command-allowlist.js";

export interface StateBackend extends KnowledgeStores {
  readonly kind: "sqlite" | "postgres";
  /** Where the state lives, for messages (the home, or the database URL with its password masked). */
  readonly label: string;
  /** Chat claims, leases, cron slots and messages between instances (one process for SQLite). */
  readonly coordinator: Coordinator;
  /** A session store for one surface; the surface drains and closes it when it stops. */
  openSessions(options?: { notify?: (message: string) => void }): RecordingSessions;
  /** The chat → session index of the messaging gateway. */
  chatIndex(onWarning?: (message: string) => void): ChatSessionIndex;
  /** Pairing codes and the users approved through them. */
  readonly pairing: PairingRecords;
  /** Webhook routes added with `hermes webhook subscribe`. */
  readonly webhookSubscriptions: WebhookSubscriptions;
  /** The API server's Responses store; the surface closes it when it stops. */
  openResponses(options?: { capacity?: number; onWarning?: (message: string) => void }): ResponseRecords;
  /** The approvals "always allow" patterns. */
  readonly commandAllowlist: CommandAllowlist;
  /**
   * What the webhook server must share with the other instances (PostgreSQL): the subscriptions it
   * serves and the delivery ids it accepted. Absent for SQLite (the file and this process's memory).
   */
  readonly sharedWebhooks?: { subscriptions: WebhookSubscriptions; deliveries: WebhookDeliveries };
  /**
   * The approvals every instance waits on, and each chat's `/verbose` and `/yolo`, shared by the
   * instances (PostgreSQL). Absent for SQLite: one gateway keeps both in its own memory.
   */
  readonly pendingApprovals?: PendingApprovalRecords;
  readonly chatSettings?: ChatSettingsRecords;
  /** Releases what the backend holds (the pool, the coordinator); stores opened from it stop working. */
  close(): Promise<void>;
}

export interface StateBackendOptions {
  /** Environment with `.env` applied (`HERMES_DATABASE_URL`); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** What the coordinator tells other instances about this one. */
  instance?: { host?: string; healthUrl?: string };
  /** Told about background trouble (the skills watch losing its connection); default stderr. */
  onWarning?: (line: string) => void;
  /**
   * False for a process that reads and writes the state but is not a gateway instance (the
   * dashboard): it gets the one-process coordinator and does not show among the live instances.
   */
  joinInstances?: boolean;
}
