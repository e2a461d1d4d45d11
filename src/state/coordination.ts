/**
 * Coordination between Hermes instances (issue 27 §3): what one gateway process must agree on with
 * the others when several share one PostgreSQL database. The gateway, cron and the API server code
 * against this contract; `localCoordinator()` is the one-process answer used with SQLite (every
 * claim succeeds at once, messages go to this process's own handlers), and the PostgreSQL one
 * (`state/postgres/coordination.ts`) answers the same questions across instances with advisory
 * locks, `FOR UPDATE SKIP LOCKED` rows and `LISTEN/NOTIFY`.
 *
 * - **Chat turns**: one turn per chat at a time across every instance. `claimChat` either hands
 *   this instance the chat (release it when the turn and its queued follow-ups are done) or names
 *   the instance running it, so the caller forwards the message there (`send`) to be queued or
 *   steered exactly as on one instance.
 * - **Leases**: one holder for a connection that allows one consumer (Telegram getUpdates, a
 *   Discord shard, Slack Socket Mode, Signal, IMAP). A lease is renewed in the background; when
 *   its holder dies another instance gets it within `ttlMs` plus one poll. `lost` fires if a lease
 *   could not be renewed in time: the holder must stop using the connection.
 * - **Cron slots**: each due slot of each job runs once. A claim carries a lease the runner renews
 *   while the job runs; a runner that dies lets the lease expire and another instance reclaims the
 *   unfinished slot.
 * - **Messages**: directed (`send` to one instance: approvals answered, `/stop`, forwarded chat
 *   input) and broadcast (`publish` to all: the webhook route tables reloaded).
 * - **Instances**: each live instance with what it holds, for `hermes gateway status`.
 */

/**
 * The position of a single-consumer update feed (Telegram's getUpdates offset) and the update ids
 * already handed to a gateway, kept where every instance sees them (the Telegram adapter's
 * `connect({ feed })`). A poller that takes over after another one died resumes after what that
 * one took, and an update fetched twice (the dead poller never confirmed it to the platform) is
 * handed on once.
 *
 * At least once across a hand-over: an id taken with a payload (`take`'s `payloads`, JSON) stays
 * undone until `done`; without one it is done when taken (at most once, as before). If its taker
 * dies first, the feed's next holder gets it back from `reclaim` and hands it on again, so a
 * message taken by an instance killed mid-turn is still answered, once. The optional members are
 * absent on ledgers that only dedupe.
 */
export interface FeedLedger {
  /** The feed position to resume from (the next update id), or undefined when none was kept. */
  resumeAt(): Promise<number | undefined>;
  /**
   * Records `ids` as taken by this instance and `next` (if any) as the feed's position; answers those of
   * `ids` no instance took before (the ones to hand on), in their order. Rejects when the record
   * could not be written: hand nothing on then, and fetch again.
   */
  take(
    ids: readonly number[],
    next: number | undefined,
    payloads?: ReadonlyMap<number, unknown>,
  ): Promise<number[]>;
  /** The gateway finished with these ids (answered, refused, forwarded): never handed on again. */
  done?(ids: readonly number[]): Promise<void>;
  /** Gives undone ids taken here back (this instance cannot hand them on): the holder reclaims them. */
  release?(ids: readonly number[]): Promise<void>;
  /**
   * Undone ids whose taker is dead (or released them), claimed for this instance to hand on again,
   * oldest first; each is claimed by exactly one instance. Ids handed on `FEED_MAX_ATTEMPTS` times
   * already (a message that kills every instance that takes it) are not handed on again.
   */
  reclaim?(): Promise<ReclaimedUpdate[]>;
}

/** An update handed on again after its taker died. */
export interface ReclaimedUpdate {
  id: number;
  /** What `take` kept with it. */
  payload: unknown;
  /** When it was first taken (the database's clock). */
  takenAt: Date;
  /** How many times it was handed on, this one included (2 for the first re-delivery). */
  attempts: number;
}

/**
 * Who took a chat message forwarded to another instance, decided once in the shared store. The
 * sender offers it under a fresh id before sending; the receiver takes it before handling it;
 * a sender that got no receipt in time withdraws it before routing it again. Exactly one of
 * `take` and `withdraw` wins, whatever the timing, so a message is never handled twice and never
 * dropped because a receipt was slow.
 */
export interface HandoffLedger {
  /** Records that `id` is being sent to instance `to` (before the send). */
  offer(id: string, to: string): Promise<void>;
  /**
   * The receiver: `taken` when this instance now owns it (handle it), `again` when it took it
   * before (a second copy: confirm, do not handle), `withdrawn` when the sender took it back or
   * it was never offered to this instance (drop it; the sender routes it itself).
   */
  take(id: string): Promise<"taken" | "again" | "withdrawn">;
  /** The sender, without a receipt: true when it was taken back (route it again), false when taken. */
  withdraw(id: string): Promise<boolean>;
}

/**
 * A chat claim this instance no longer holds: another instance took the chat over (this one's
 * heartbeat was stale: a stalled event loop, a paused machine, a lost database), or it could not
 * be confirmed before it expired. The turn running under it must stop without another effect.
 */
export class ChatClaimLostError extends Error {
  readonly code = "chat_claim_lost";
  constructor(
    readonly key: string,
    readonly why: string,
  ) {
    super(`this instance no longer holds chat ${key}: ${why}`);
    this.name = "ChatClaimLostError";
  }
}

/**
 * One chat held by this instance. With several instances a claim is fenced: it is valid here only
 * until a safety margin before the moment another instance could take it over (the instance TTL
 * after the last confirmation in the database), so a turn checks `valid()` (synchronous, cheap)
 * before each effect another instance could duplicate, and when it is not valid waits for
 * `ensure()`, which confirms the claim in the database or rejects with `ChatClaimLostError`.
 * The one-process coordinator's claims are always valid.
 */
export interface ChatClaim {
  readonly key: string;
  /** True while this instance surely holds the chat (no database round trip). */
  valid(): boolean;
  /**
   * Resolves at once when `valid()`; otherwise confirms the claim in the database (waiting while
   * it cannot be reached) and resolves, or rejects with `ChatClaimLostError` once it is lost.
   */
  ensure(): Promise<void>;
  /** Fires once when the claim is lost (its reason a `ChatClaimLostError`); never after `release`. */
  readonly lost: AbortSignal;
  /** Gives the chat back; the next message for it may run on any instance. Idempotent. */
  release(): Promise<void>;
  /**
   * The claim as the database knows it, when the database can check writes against it (the
   * PostgreSQL coordinator; absent for one process): a session write made under it carries it.
   */
  readonly fence?: ClaimFence;
}

/**
 * A fencing token: one chat claim (`coord_chat_claims` key and token). A store write that carries
 * it lands only while it is still the chat's current claim, checked by the database inside the
 * write's own transaction, so a write delayed past a take-over (a stall after its gate passed) is
 * refused with `ChatClaimLostError` and leaves nothing behind.
 */
export interface ClaimFence {
  readonly key: string;
  readonly token: string;
  /** The database refused a write made under this claim: the claim is lost (fires its `lost`). */
  refused?(why: string): void;
}

/** A store that can hand out a view of itself whose writes carry a fencing token (PostgreSQL). */
export interface ClaimFencedStore<S> {
  fencedBy(fence: ClaimFence): S;
}

export type ChatClaimResult = { claimed: ChatClaim } | { heldBy: string };

export interface Lease {
  readonly name: string;
  /** Fires once if the lease could not be renewed before it expired (stop using the resource). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export interface CronSlotClaim {
  readonly jobId: string;
  /** The slot's due time (ISO 8601, UTC). */
  readonly slot: string;
  /** 1 for the slot's first run; more when a runner died and this instance took the slot over. */
  readonly attempt: number;
  /** Marks the slot run (its outcome kept with it); the lease ends. */
  finish(outcome: { ok: boolean; summary?: string }): Promise<void>;
  /** Gives the slot back unfinished (it was never started): any instance may claim it at once. */
  release(): Promise<void>;
  /** Fires if the lease lapsed while the job ran (another instance may now run the slot). */
  readonly lost: AbortSignal;
}

export interface CoordinationMessage {
  /** What it is about: `chat.input`, `approval.answer`, `turn.stop`, `reload.webhooks`, … */
  topic: string;
  /** The sending instance. */
  from: string;
  /** JSON-serialisable payload (NOTIFY payloads stay under 8000 bytes; larger ones go by row). */
  payload: unknown;
  /**
   * Set only on a message delivered late, read back after this instance's listening connection
   * was re-established: how long ago (ms) it was sent. A topic whose sender stops waiting after a
   * while (a forwarded chat message) can tell it is stale.
   */
  ageMs?: number;
}

export interface InstanceInfo {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  lastSeenAt: string;
  /** Leases and other things it holds (`telegram`, `discord:shard0`, …). */
  holds: string[];
  /** How many messaging chats it is running a turn for now (claims; API-server sessions are in `turns`). */
  chats?: number;
  /**
   * How many API-server requests and webhook runs it is running a turn for now (as of its last
   * heartbeat with PostgreSQL).
   */
  turns?: number;
  /** Where its health endpoint answers, when it has one. */
  healthUrl?: string;
  draining: boolean;
}

export interface Coordinator {
  /** This instance's id (stable for the process's life). */
  readonly instanceId: string;
  /** False for the one-process coordinator: nothing is shared with other processes. */
  readonly shared: boolean;
  claimChat(key: string): Promise<ChatClaimResult>;
  /**
   * Counts a turn this instance runs for the API server or a webhook until the returned function is
   * called (once); `instances()` shows the count as `turns`.
   */
  trackTurn(): () => void;
  /** Tries once; null when another live instance holds it. */
  tryLease(name: string, options?: { ttlMs?: number }): Promise<Lease | null>;
  /** Waits (polling) until this instance holds the lease or `signal` aborts or it drains (then rejects). */
  waitLease(name: string, options?: { ttlMs?: number; signal?: AbortSignal }): Promise<Lease>;
  /** Null when the slot already ran or another live runner holds it (or this instance drains). */
  claimCronSlot(jobId: string, slot: string, options?: { leaseMs?: number }): Promise<CronSlotClaim | null>;
  /**
   * Slots claimed but never finished whose lease lapsed (their runner died), claimed anew for
   * this instance to run: the other half of "exactly once". Empty for the one-process coordinator,
   * where a run cut off by a crash is the scheduler's own business.
   */
  reclaimCronSlots(options?: { leaseMs?: number; jobIds?: readonly string[] }): Promise<CronSlotClaim[]>;
  send(instanceId: string, topic: string, payload: unknown): Promise<void>;
  publish(topic: string, payload: unknown): Promise<void>;
  /** Handles messages sent to this instance and broadcasts (its own included). Returns unsubscribe. */
  subscribe(handler: (message: CoordinationMessage) => void): () => void;
  instances(): Promise<InstanceInfo[]>;
  /**
   * The shared ledger of a single-consumer update feed, by the name of the lease guarding it
   * (`telegram:<bot id>`): see `FeedLedger`. Absent on the one-process coordinator.
   */
  feedLedger?(name: string): FeedLedger;
  /** The ledger of forwarded chat messages: see `HandoffLedger`. Absent on the one-process coordinator. */
  readonly handoffs?: HandoffLedger;
  /**
   * Marks this instance as draining: status shows it, and it takes no new lease or cron slot
   * (`tryLease` answers null, `waitLease` rejects, `claimCronSlot` answers null). Chat claims
   * still succeed: a message that reaches a draining instance is still answered.
   */
  drain(): Promise<void>;
  close(): Promise<void>;
}

const LOCAL_ID = `local-${process.pid}`;
/** The `lost` signal of a claim nobody can take away. */
const NEVER = new AbortController().signal;

/** Chat claims the API server takes for a continued session (counted in `turns`, not `chats`). */
export const API_SERVER_CLAIM = "api_server:";

/** The running-turn count behind `Coordinator.trackTurn`: each returned function ends one turn, once. */
export function turnCounter(): { track: () => () => void; count: () => number } {
  let running = 0;
  return {
    track: () => {
      running++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        running--;
      };
    },
    count: () => running,
  };
}

/** The single-process coordinator (SQLite homes): everything is claimed here, messages stay here. */
export function localCoordinator(info: { host?: string; healthUrl?: string } = {}): Coordinator {
  const chats = new Set<string>();
  const turns = turnCounter();
  const leases = new Set<string>();
  const slots = new Set<string>();
  const handlers = new Set<(message: CoordinationMessage) => void>();
  const startedAt = new Date().toISOString();
  let draining = false;
  const deliver = (topic: string, payload: unknown) => {
    const message = { topic, from: LOCAL_ID, payload };
    queueMicrotask(() => {
      for (const handler of handlers) handler(message);
    });
  };
  const lease = (name: string): Lease => {
    leases.add(name);
    return {
      name,
      lost: new AbortController().signal,
      release: async () => {
        leases.delete(name);
      },
    };
  };
  return {
    instanceId: LOCAL_ID,
    shared: false,
    async claimChat(key) {
      if (chats.has(key)) return { heldBy: LOCAL_ID };
      chats.add(key);
      return {
        claimed: {
          key,
          valid: () => true,
          ensure: async () => {},
          lost: NEVER,
          release: async () => {
            chats.delete(key);
          },
        },
      };
    },
    trackTurn: turns.track,
    async tryLease(name) {
      return leases.has(name) || draining ? null : lease(name);
    },
    async waitLease(name, options = {}) {
      while (leases.has(name) || draining) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (draining) throw new Error(`not waiting for lease "${name}": this instance is draining`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return lease(name);
    },
    async claimCronSlot(jobId, slot) {
      const key = `${jobId}\u0000${slot}`;
      if (slots.has(key) || draining) return null;
      slots.add(key);
      return {
        jobId,
        slot,
        attempt: 1,
        lost: new AbortController().signal,
        finish: async () => {},
        release: async () => {
          slots.delete(key);
        },
      };
    },
    async reclaimCronSlots() {
      return [];
    },
    async send(_instanceId, topic, payload) {
      deliver(topic, payload);
    },
    async publish(topic, payload) {
      deliver(topic, payload);
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async instances() {
      return [
        {
          id: LOCAL_ID,
          host: info.host ?? "localhost",
          pid: process.pid,
          startedAt,
          lastSeenAt: new Date().toISOString(),
          holds: [...leases],
          chats: [...chats].filter((key) => !key.startsWith(API_SERVER_CLAIM)).length,
          turns: turns.count(),
          ...(info.healthUrl ? { healthUrl: info.healthUrl } : {}),
          draining,
        },
      ];
    },
    async drain() {
      draining = true;
    },
    async close() {
      handlers.clear();
    },
  };
}
