/**
 * Messages between instances over LISTEN/NOTIFY on one channel (`hermes_coord`), with an outbox
 * so none is lost while a listener reconnects. One dedicated connection listens; when it drops
 * (the server restarted, the network blinked) it reconnects with a growing pause and listens again.
 *
 * Every message is a row of `coord_messages` (its addressee, or none for a broadcast, and the
 * whole envelope), written by the same statement that sends the NOTIFY; the notification carries
 * the row's id and, when it fits NOTIFY's 8000 bytes, the envelope itself (otherwise the listener
 * reads the row). NOTIFY reaches only the connections listening when it commits, so after each
 * reconnection the listener reads back the rows written since its old connection was last known to
 * work (its last answered ping, by the database's clock, minus a margin) and delivers those it has
 * not delivered yet: ids already delivered are remembered for as long as rows are kept (ten
 * minutes), so nothing arrives twice. A message delivered that way carries `ageMs`, how long ago it
 * was sent, for topics whose sender stops waiting (a forwarded chat message is re-routed after a
 * few seconds). Messages are handed to the handler in the order their notifications (or the
 * read-back) arrived. Internal signals (`lease-free`) travel by NOTIFY alone: a lost one only
 * delays a waiter to its next poll.
 */
import type { PoolClient } from "pg";
import type { CoordinationMessage } from "../coordination.js";
import type { PgDatabase } from "./database.js";

export const COORD_CHANNEL = "hermes_coord";
/** Envelopes longer than this are not repeated in the NOTIFY payload (the listener reads the row). */
export const NOTIFY_INLINE_LIMIT = 7_800;
/** The read-back after a reconnection starts this long before the old connection's last good ping. */
export const CATCH_UP_MARGIN_MS = 5_000;
/** How long delivered ids are remembered (rows are pruned after ten minutes). */
const REMEMBER_MS = 11 * 60_000;

/** What travels in a NOTIFY payload. */
interface Envelope {
  to?: string;
  topic?: string;
  from?: string;
  payload?: unknown;
  /** `coord_messages.id` of the message. */
  id?: string;
  /** The NOTIFY leaves the envelope out: read it from this row. */
  ref?: string;
  /** Internal signals between coordinators (`lease-free`). */
  sys?: string;
  name?: string;
}

export interface ChannelOptions {
  instanceId: string;
  onMessage(message: CoordinationMessage): void;
  /** Internal signals (a lease given back), to wake waiters early. */
  onSignal(sys: string, name: string): void;
  /** Longest pause between reconnection attempts (default 5 s). */
  maxReconnectMs?: number;
}

export interface Channel {
  start(): Promise<void>;
  post(to: string | undefined, topic: string, payload: unknown): Promise<void>;
  signal(sys: string, name: string): Promise<void>;
  /** Checks the listening connection answers; reconnects it when not. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Messages delivered by the read-back after a reconnection (for tests and status). */
  readonly caughtUp: number;
  readonly connected: boolean;
  close(): Promise<void>;
}

export function openChannel(db: PgDatabase, options: ChannelOptions): Channel {
  let client: PoolClient | undefined;
  let closed = false;
  let reconnecting: NodeJS.Timeout | undefined;
  let attempt = 0;
  let queue: Promise<void> = Promise.resolve();
  const maxPause = options.maxReconnectMs ?? 5_000;
  /** Ids delivered here, with when (this process's clock), so a read-back skips them. */
  const delivered = new Map<string, number>();
  /** The database's time when the listening connection last answered. */
  let healthyAt: string | undefined;
  /** Set while a lost connection's messages are still to be read back: from when. */
  let catchUpFrom: string | undefined;
  let caughtUp = 0;

  const hand = (envelope: Envelope, ageMs?: number) => {
    if (typeof envelope.topic !== "string") return;
    options.onMessage({
      topic: envelope.topic,
      from: String(envelope.from ?? ""),
      payload: envelope.payload,
      ...(ageMs !== undefined ? { ageMs } : {}),
    });
  };

  const deliver = async (raw: string) => {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(raw) as Envelope;
    } catch {
      return;
    }
    if (envelope.sys) {
      options.onSignal(envelope.sys, String(envelope.name ?? ""));
      return;
    }
    if (envelope.to && envelope.to !== options.instanceId) return;
    const id = envelope.id;
    if (id !== undefined) {
      if (delivered.has(id)) return;
      delivered.set(id, Date.now());
    }
    if (envelope.ref) {
      const rows = await db
        .query<{ body: string }>("SELECT body FROM coord_messages WHERE id = $1", [envelope.ref])
        .catch(() => []);
      if (!rows[0]) {
        // Unreadable now: a later read-back may still bring it.
        if (id !== undefined) delivered.delete(id);
        return;
      }
      envelope = JSON.parse(rows[0].body) as Envelope;
    }
    hand(envelope);
  };

  /** Delivers the rows written since `since` (database time) that were not delivered here. */
  const catchUp = async (since: string) => {
    const rows = await db.query<{ id: string; body: string; age_ms: number }>(
      `SELECT id::text AS id, body,
         (extract(epoch FROM clock_timestamp() - created_at) * 1000)::float8 AS age_ms
       FROM coord_messages
       WHERE created_at > $1::timestamptz - ($2::double precision * interval '1 millisecond')
         AND (recipient IS NULL OR recipient = $3)
       ORDER BY id`,
      [since, CATCH_UP_MARGIN_MS, options.instanceId],
    );
    for (const row of rows) {
      if (delivered.has(row.id)) continue;
      delivered.set(row.id, Date.now());
      let envelope: Envelope;
      try {
        envelope = JSON.parse(row.body) as Envelope;
      } catch {
        continue;
      }
      caughtUp++;
      hand(envelope, Math.max(0, Number(row.age_ms)));
    }
  };

  const forget = () => {
    const before = Date.now() - REMEMBER_MS;
    for (const [id, at] of delivered) {
      if (at >= before) break;
      delivered.delete(id);
    }
  };

  const drop = (broken: PoolClient, error?: unknown) => {
    if (client !== broken) return;
    client = undefined;
    // What this connection may have missed is read back once another one listens.
    catchUpFrom ??= healthyAt;
    broken.removeAllListeners("notification");
    try {
      broken.release(error instanceof Error ? error : new Error("listener connection lost"));
    } catch {
      // Already released.
    }
    scheduleReconnect();
  };

  const connect = async () => {
    const fresh = await db.connect();
    fresh.on("error", (error) => drop(fresh, error));
    fresh.on("end", () => drop(fresh));
    // The read-back goes first in the queue, before anything the new connection hears.
    const from = catchUpFrom;
    let listened: (ok: boolean) => void = () => undefined;
    if (from !== undefined) {
      const ready = new Promise<boolean>((resolve) => {
        listened = resolve;
      });
      queue = queue.then(async () => {
        if (!(await ready)) return;
        try {
          await catchUp(from);
          if (catchUpFrom === from) catchUpFrom = undefined;
        } catch {
          // Not read back: listen anew and read back from the same point.
          if (client === fresh) drop(fresh, new Error("could not read back missed messages"));
        }
      });
    }
    fresh.on("notification", (note) => {
      if (note.channel !== COORD_CHANNEL || note.payload === undefined) return;
      const payload = note.payload;
      queue = queue.then(() => deliver(payload)).catch(() => {});
    });
    try {
      await fresh.query(`LISTEN ${COORD_CHANNEL}`);
      const [now] = (await fresh.query<{ now: string }>("SELECT clock_timestamp()::text AS now")).rows;
      healthyAt = now?.now;
    } catch (error) {
      listened(false);
      fresh.release(error as Error);
      throw error;
    }
    if (closed) {
      listened(false);
      fresh.release();
      return;
    }
    client = fresh;
    attempt = 0;
    listened(true);
  };

  function scheduleReconnect() {
    if (closed || reconnecting) return;
    const pause = Math.min(maxPause, 100 * 2 ** attempt++);
    reconnecting = setTimeout(async () => {
      reconnecting = undefined;
      if (closed || client) return;
      try {
        await connect();
      } catch {
        scheduleReconnect();
      }
    }, pause);
    reconnecting.unref();
  }

  const post = async (to: string | undefined, envelope: Envelope) => {
    const text = JSON.stringify(envelope);
    const inline = Buffer.byteLength(text) <= NOTIFY_INLINE_LIMIT;
    // The NOTIFY payload is `{"id":"<row id>", …}` with the envelope's own fields, or with only
    // its addressee and `ref` (the row id again, as instances before the outbox read it).
    const tail = inline ? text.slice(1) : `${to ? `,"to":${JSON.stringify(to)}` : ""}}`;
    const head = inline
      ? `'{"id":"' || id::text || '",'`
      : `'{"id":"' || id::text || '","ref":"' || id::text || '"'`;
    await db.query(
      `WITH message AS (INSERT INTO coord_messages (recipient, body) VALUES ($1, $2) RETURNING id)
       SELECT pg_notify($3, ${head} || $4) FROM message`,
      [to ?? null, text, COORD_CHANNEL, tail],
    );
  };

  return {
    start: connect,
    get connected() {
      return client !== undefined;
    },
    get caughtUp() {
      return caughtUp;
    },
    async post(to, topic, payload) {
      await post(to, { ...(to ? { to } : {}), topic, from: options.instanceId, payload });
    },
    async signal(sys, name) {
      await db.query("SELECT pg_notify($1, $2)", [COORD_CHANNEL, JSON.stringify({ sys, name })]);
    },
    async ping(timeoutMs) {
      const current = client;
      if (!current) return false;
      forget();
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        current.query<{ now: string }>("SELECT clock_timestamp()::text AS now").then(
          (result) => {
            if (client === current && result.rows[0]) healthyAt = result.rows[0].now;
            return true;
          },
          () => false,
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (!ok) drop(current, new Error("listener connection did not answer"));
      return ok;
    },
    async close() {
      closed = true;
      clearTimeout(reconnecting);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners("notification");
        await current.query(`UNLISTEN ${COORD_CHANNEL}`).catch(() => {});
        current.release();
      }
      await queue;
    },
  };
}
