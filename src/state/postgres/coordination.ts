/**
 * The `Coordinator` (state/coordination.ts) over PostgreSQL alone, for several Hermes instances
 * sharing one database:
 *
 * - **Instances**: a row per running instance, its `last_seen_at` refreshed every `heartbeatMs`;
 *   an instance whose heartbeat is older than `instanceTtlMs` is dead.
 * - **Leases**: a row per name with an expiry, taken with one `INSERT … ON CONFLICT DO UPDATE
 *   … WHERE expired` (the row lock makes the race single-winner) and renewed in the background
 *   (coordination-renewal.ts). A released lease is announced so waiters take it at once.
 * - **Chat claims**: a row per chat, confirmed by its holder with each heartbeat; one neither
 *   confirmed nor with a live holder for the TTL is taken over by the next claimant. Claims are
 *   fenced: valid locally only while no other instance can have taken them (coordination-chats.ts).
 * - **Cron slots**: a row per (job, slot), `running` under a lease the runner renews, then `done`
 *   with its outcome for good. An unfinished slot whose lease lapsed is claimed again
 *   (`reclaimCronSlots` finds them with `FOR UPDATE SKIP LOCKED`).
 * - **Messages**: LISTEN/NOTIFY with an outbox read back after a reconnection
 *   (coordination-channel.ts).
 * - **Update feeds**: Telegram's getUpdates position and taken ids (coordination-feeds.ts).
 * - **Handoffs**: each forwarded chat message taken by its receiver or withdrawn by its sender,
 *   exactly one of the two (coordination-handoffs.ts).
 *
 * Every expiry is computed by the database's clock, never by an instance's.
 */
import { randomBytes } from "node:crypto";
import type {
  CoordinationMessage,
  Coordinator,
  CronSlotClaim,
  InstanceInfo,
  Lease,
} from "../coordination.js";
import { turnCounter } from "../coordination.js";
import { openChannel } from "./coordination-channel.js";
import { pgChatClaims } from "./coordination-chats.js";
import { pgFeedLedger, pruneFeeds } from "./coordination-feeds.js";
import { pgHandoffs, pruneHandoffs } from "./coordination-handoffs.js";
import { listPgInstances } from "./coordination-instances.js";
import { keepRenewed, type Renewal } from "./coordination-renewal.js";
import type { PgDatabase } from "./database.js";

export { listPgInstances } from "./coordination-instances.js";

export interface PgCoordinatorInfo {
  host: string;
  pid: number;
  healthUrl?: string;
  /** Default `<host>-<pid>-<random>`. */
  instanceId?: string;
}

/** Timings; the defaults give a fail-over within about 9 s of a holder's death. */
export interface PgCoordinatorTiming {
  /** How often this instance says it is alive (default 2 000 ms). */
  heartbeatMs?: number;
  /** An instance not seen for this long is dead; its chats are free (default 8 000 ms). */
  instanceTtlMs?: number;
  /** Lease TTL when `tryLease`/`waitLease` are not given one (default 8 000 ms). */
  leaseTtlMs?: number;
  /**
   * A cron slot's lease when `claimCronSlot` is not given one (default 15 000 ms): renewed every
   * quarter of it while the job runs, however long that is, so it only bounds how soon another
   * instance runs the slot again after its runner died (and how long a database outage the
   * runner rides out before it stops the job).
   */
  cronLeaseMs?: number;
  /** How often `waitLease` tries again (default 1 000 ms; a release wakes it at once). */
  pollMs?: number;
  /** Longest pause between reconnections of the listening connection (default 5 000 ms). */
  maxReconnectMs?: number;
  /**
   * How long before `instanceTtlMs` runs out a chat claim stops being valid here (default 30 % of
   * it, at most 2 500 ms): see coordination-chats.ts.
   */
  claimMarginMs?: number;
  /** A monotonic clock in ms for claim validity (default `performance.now`; tests). */
  now?: () => number;
  /** Chat claims lost (taken over, expired), one line each. */
  log?: (line: string) => void;
}

const PRUNE_EVERY_MS = 60_000;
/** The default cron slot lease: a dead runner's slot runs again within the 15 s bound. */
export const CRON_SLOT_LEASE_MS = 15_000;
const ms = (param: string) => `(${param}::double precision * interval '1 millisecond')`;

function token(): string {
  return randomBytes(12).toString("base64url");
}

export async function openPgCoordinator(
  db: PgDatabase,
  info: PgCoordinatorInfo,
  timing: PgCoordinatorTiming = {},
): Promise<Coordinator> {
  const instanceId = info.instanceId ?? `${info.host}-${info.pid}-${randomBytes(3).toString("hex")}`;
  const heartbeatMs = timing.heartbeatMs ?? 2_000;
  const instanceTtlMs = timing.instanceTtlMs ?? 8_000;
  const leaseTtlMs = timing.leaseTtlMs ?? 8_000;
  const cronLeaseMs = timing.cronLeaseMs ?? CRON_SLOT_LEASE_MS;
  const pollMs = timing.pollMs ?? 1_000;

  const handlers = new Set<(message: CoordinationMessage) => void>();
  const leaseWaiters = new Map<string, Set<() => void>>();
  const held = {
    leases: new Map<string, { token: string; renewal: Renewal }>(),
    slots: new Map<string, { jobId: string; slot: string; token: string; renewal: Renewal }>(),
  };
  // API-server and webhook turns running here, written with each heartbeat for `gateway status`.
  const turns = turnCounter();
  let draining = false;
  let closed = false;

  const channel = openChannel(db, {
    instanceId,
    ...(timing.maxReconnectMs ? { maxReconnectMs: timing.maxReconnectMs } : {}),
    onMessage(message) {
      for (const handler of handlers) {
        try {
          handler(message);
        } catch {
          // One handler's failure is its own; the others still get the message.
        }
      }
    },
    onSignal(sys, name) {
      if (sys !== "lease-free") return;
      for (const wake of leaseWaiters.get(name) ?? []) wake();
    },
  });

  const beat = () =>
    db.query(
      `INSERT INTO coord_instances (id, host, pid, health_url, draining, turns) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET last_seen_at = clock_timestamp(), draining = EXCLUDED.draining,
         turns = EXCLUDED.turns`,
      [instanceId, info.host, info.pid, info.healthUrl ?? null, draining, turns.count()],
    );
  await beat();
  await channel.start();
  const chats = pgChatClaims(db, {
    instanceId,
    instanceTtlMs,
    marginMs: timing.claimMarginMs ?? Math.min(2_500, Math.round(instanceTtlMs * 0.3)),
    ...(timing.now ? { now: timing.now } : {}),
    ...(timing.log ? { log: timing.log } : {}),
  });

  let lastPrune = Date.now();
  const prune = async () => {
    await db.query("DELETE FROM coord_messages WHERE created_at < clock_timestamp() - interval '10 minutes'");
    await db.query("DELETE FROM coord_instances WHERE last_seen_at < clock_timestamp() - interval '1 hour'");
    await db.query(
      "DELETE FROM coord_chat_claims c WHERE NOT EXISTS (SELECT 1 FROM coord_instances i WHERE i.id = c.holder)",
    );
    await db.query("DELETE FROM coord_leases WHERE expires_at < clock_timestamp() - interval '1 hour'");
    await db.query(
      "DELETE FROM coord_cron_slots WHERE status = 'done' AND finished_at < clock_timestamp() - interval '30 days'",
    );
    await pruneFeeds(db);
    await pruneHandoffs(db);
  };
  let heartbeat: NodeJS.Timeout | undefined;
  const scheduleBeat = () => {
    heartbeat = setTimeout(async () => {
      try {
        await beat();
        // Every held chat claim confirmed (or found taken over) with each heartbeat.
        await chats.verify();
        // A listening connection that stopped answering is dropped and reconnected.
        if (channel.connected) await channel.ping(instanceTtlMs);
        if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
          lastPrune = Date.now();
          await prune();
        }
      } catch {
        // The database is unreachable: leases give themselves up by their own deadlines, chat
        // claims once past their expiry.
        chats.failed();
      }
      if (!closed) scheduleBeat();
    }, heartbeatMs);
    heartbeat.unref();
  };
  scheduleBeat();

  const makeLease = (name: string, leaseToken: string, ttlMs: number, since: number): Lease => {
    const renewal = keepRenewed({
      ttlMs,
      since,
      what: `lease "${name}"`,
      renew: async () =>
        (
          await db.query(
            `UPDATE coord_leases SET expires_at = clock_timestamp() + ${ms("$3")}
             WHERE name = $1 AND token = $2 AND expires_at > clock_timestamp() RETURNING name`,
            [name, leaseToken, ttlMs],
          )
        ).length === 1,
    });
    held.leases.set(name, { token: leaseToken, renewal });
    renewal.lost.addEventListener("abort", () => {
      if (held.leases.get(name)?.token === leaseToken) held.leases.delete(name);
    });
    let released = false;
    return {
      name,
      lost: renewal.lost,
      async release() {
        if (released) return;
        released = true;
        renewal.stop();
        if (held.leases.get(name)?.token === leaseToken) held.leases.delete(name);
        await db.query("DELETE FROM coord_leases WHERE name = $1 AND token = $2", [name, leaseToken]);
        await channel.signal("lease-free", name).catch(() => {});
      },
    };
  };

  const tryLease = async (name: string, ttlMs: number): Promise<Lease | null> => {
    if (draining || closed) return null;
    const leaseToken = token();
    const since = Date.now();
    const rows = await db.query(
      `INSERT INTO coord_leases (name, holder, token, acquired_at, expires_at)
       VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp() + ${ms("$4")})
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token,
         acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
       WHERE coord_leases.expires_at <= clock_timestamp()
       RETURNING name`,
      [name, instanceId, leaseToken, ttlMs],
    );
    return rows.length === 1 ? makeLease(name, leaseToken, ttlMs, since) : null;
  };

  const makeSlot = (
    jobId: string,
    slot: string,
    slotToken: string,
    leaseMs: number,
    since: number,
    attempt: number,
  ): CronSlotClaim => {
    const key = `${jobId}\u0000${slot}`;
    const renewal = keepRenewed({
      ttlMs: leaseMs,
      since,
      what: `cron slot ${jobId} @ ${slot}`,
      renew: async () =>
        (
          await db.query(
            `UPDATE coord_cron_slots SET lease_until = clock_timestamp() + ${ms("$4")}
             WHERE job_id = $1 AND slot = $2 AND token = $3 AND status = 'running'
               AND lease_until > clock_timestamp() RETURNING slot`,
            [jobId, slot, slotToken, leaseMs],
          )
        ).length === 1,
    });
    held.slots.set(key, { jobId, slot, token: slotToken, renewal });
    renewal.lost.addEventListener("abort", () => {
      if (held.slots.get(key)?.token === slotToken) held.slots.delete(key);
    });
    let finished = false;
    return {
      jobId,
      slot,
      attempt,
      lost: renewal.lost,
      async release() {
        if (finished) return;
        finished = true;
        renewal.stop();
        held.slots.delete(key);
        await db.query(
          `UPDATE coord_cron_slots SET lease_until = clock_timestamp()
           WHERE job_id = $1 AND slot = $2 AND token = $3 AND status = 'running'`,
          [jobId, slot, slotToken],
        );
      },
      async finish(outcome) {
        if (finished) return;
        finished = true;
        renewal.stop();
        held.slots.delete(key);
        await db.query(
          `UPDATE coord_cron_slots SET status = 'done', finished_at = clock_timestamp(), ok = $4, summary = $5
           WHERE job_id = $1 AND slot = $2 AND token = $3 AND status = 'running'`,
          [jobId, slot, slotToken, outcome.ok, outcome.summary?.slice(0, 2_000) ?? null],
        );
      },
    };
  };

  const coordinator: Coordinator = {
    instanceId,
    shared: true,
    trackTurn: turns.track,

    claimChat(key) {
      return chats.claim(key);
    },

    tryLease(name, options = {}) {
      return tryLease(name, options.ttlMs ?? leaseTtlMs);
    },

    async waitLease(name, options = {}) {
      const ttlMs = options.ttlMs ?? leaseTtlMs;
      for (;;) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (draining || closed) throw new Error(`not waiting for lease "${name}": this instance is draining`);
        try {
          const lease = await tryLease(name, ttlMs);
          if (lease) return lease;
        } catch {
          // The database is unreachable for now: keep waiting.
        }
        await new Promise<void>((resolve) => {
          const waiters = leaseWaiters.get(name) ?? new Set();
          leaseWaiters.set(name, waiters);
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            options.signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, pollMs);
          waiters.add(done);
          options.signal?.addEventListener("abort", done, { once: true });
        });
      }
    },

    async claimCronSlot(jobId, slot, options = {}) {
      if (draining || closed) return null;
      const leaseMs = options.leaseMs ?? cronLeaseMs;
      const slotToken = token();
      const since = Date.now();
      const rows = await db.query<{ attempts: number }>(
        `INSERT INTO coord_cron_slots (job_id, slot, status, holder, token, claimed_at, lease_until)
         VALUES ($1, $2, 'running', $3, $4, clock_timestamp(), clock_timestamp() + ${ms("$5")})
         ON CONFLICT (job_id, slot) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token,
           claimed_at = EXCLUDED.claimed_at, lease_until = EXCLUDED.lease_until,
           attempts = coord_cron_slots.attempts + 1
         WHERE coord_cron_slots.status = 'running' AND coord_cron_slots.lease_until <= clock_timestamp()
         RETURNING attempts`,
        [jobId, slot, instanceId, slotToken, leaseMs],
      );
      if (!rows[0]) return null;
      return makeSlot(jobId, slot, slotToken, leaseMs, since, Number(rows[0].attempts));
    },

    async reclaimCronSlots(options = {}) {
      if (draining || closed) return [];
      const leaseMs = options.leaseMs ?? cronLeaseMs;
      const since = Date.now();
      const claimed = await db.tx(async (client) => {
        const orphans = await client.query<{ job_id: string; slot: string }>(
          `SELECT job_id, slot FROM coord_cron_slots
           WHERE status = 'running' AND lease_until <= clock_timestamp()
             AND ($1::text[] IS NULL OR job_id = ANY($1::text[]))
           ORDER BY slot LIMIT 100 FOR UPDATE SKIP LOCKED`,
          [options.jobIds ? [...options.jobIds] : null],
        );
        const out: { jobId: string; slot: string; token: string; attempts: number }[] = [];
        for (const orphan of orphans) {
          const slotToken = token();
          const rows = await client.query<{ attempts: number }>(
            `UPDATE coord_cron_slots SET holder = $3, token = $4, claimed_at = clock_timestamp(),
               lease_until = clock_timestamp() + ${ms("$5")}, attempts = attempts + 1
             WHERE job_id = $1 AND slot = $2 RETURNING attempts`,
            [orphan.job_id, orphan.slot, instanceId, slotToken, leaseMs],
          );
          out.push({
            jobId: orphan.job_id,
            slot: orphan.slot,
            token: slotToken,
            attempts: Number(rows[0]!.attempts),
          });
        }
        return out;
      });
      return claimed.map((c) => makeSlot(c.jobId, c.slot, c.token, leaseMs, since, c.attempts));
    },

    async send(to, topic, payload) {
      await channel.post(to, topic, payload);
    },
    async publish(topic, payload) {
      await channel.post(undefined, topic, payload);
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => {
        handlers.delete(handler);
      };
    },

    async instances(): Promise<InstanceInfo[]> {
      return listPgInstances(db, { instanceTtlMs });
    },

    feedLedger(name) {
      return pgFeedLedger(db, name, instanceId, { instanceTtlMs });
    },
    handoffs: pgHandoffs(db, instanceId),

    async drain() {
      draining = true;
      await db.query("UPDATE coord_instances SET draining = true WHERE id = $1", [instanceId]);
    },

    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(heartbeat);
      handlers.clear();
      for (const { renewal } of held.leases.values()) renewal.stop();
      for (const { renewal } of held.slots.values()) renewal.stop();
      const leaseNames = [...held.leases.keys()];
      const leaseTokens = [...held.leases.values()].map((l) => l.token);
      const slotTokens = [...held.slots.values()].map((s) => s.token);
      const chatTokens = chats.takeTokens();
      held.leases.clear();
      held.slots.clear();
      const quietly = (p: Promise<unknown>) => p.catch(() => {});
      await quietly(
        db.query("DELETE FROM coord_leases WHERE holder = $1 AND token = ANY($2::text[])", [
          instanceId,
          leaseTokens,
        ]),
      );
      // An unfinished slot becomes claimable at once by another instance.
      await quietly(
        db.query(
          "UPDATE coord_cron_slots SET lease_until = clock_timestamp() WHERE status = 'running' AND token = ANY($1::text[])",
          [slotTokens],
        ),
      );
      await quietly(
        db.query("DELETE FROM coord_chat_claims WHERE holder = $1 AND token = ANY($2::text[])", [
          instanceId,
          chatTokens,
        ]),
      );
      await quietly(db.query("DELETE FROM coord_instances WHERE id = $1", [instanceId]));
      for (const name of leaseNames) await quietly(channel.signal("lease-free", name));
      await channel.close();
    },
  };
  return coordinator;
}
