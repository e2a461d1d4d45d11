/**
 * Messages between instances over LISTEN/NOTIFY on one channel (`hermes_coord`). One dedicated
 * connection listens; when it drops (the server restarted, the network blinked) it reconnects
 * with a growing pause and listens again. Directed messages carry their addressee and the others
 * ignore them. A payload whose envelope would pass NOTIFY's 8000-byte limit is stored in
 * `coord_messages` and the NOTIFY carries the row's id; rows are pruned after ten minutes.
 * Messages are handed to the handler in the order their notifications arrived.
 *
 * NOTIFY reaches the connections listening when it commits: a message published while this
 * instance's listener is reconnecting is not replayed.
 */
import type { PoolClient } from "pg";
import type { CoordinationMessage } from "../coordination.js";
import type { PgDatabase } from "./database.js";

export const COORD_CHANNEL = "hermes_coord";
/** Envelopes longer than this go through `coord_messages`. */
export const NOTIFY_INLINE_LIMIT = 7_900;

/** What travels in a NOTIFY payload. */
interface Envelope {
  to?: string;
  topic?: string;
  from?: string;
  payload?: unknown;
  /** `coord_messages.id` holding the whole envelope. */
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
    if (envelope.ref) {
      const rows = await db
        .query<{ body: string }>("SELECT body FROM coord_messages WHERE id = $1", [envelope.ref])
        .catch(() => []);
      if (!rows[0]) return;
      envelope = JSON.parse(rows[0].body) as Envelope;
    }
    if (typeof envelope.topic !== "string") return;
    options.onMessage({
      topic: envelope.topic,
      from: String(envelope.from ?? ""),
      payload: envelope.payload,
    });
  };

  const drop = (broken: PoolClient, error?: unknown) => {
    if (client !== broken) return;
    client = undefined;
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
    fresh.on("notification", (note) => {
      if (note.channel !== COORD_CHANNEL || note.payload === undefined) return;
      const payload = note.payload;
      queue = queue.then(() => deliver(payload)).catch(() => {});
    });
    try {
      await fresh.query(`LISTEN ${COORD_CHANNEL}`);
    } catch (error) {
      fresh.release(error as Error);
      throw error;
    }
    if (closed) {
      fresh.release();
      return;
    }
    client = fresh;
    attempt = 0;
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

  const notify = async (envelope: Envelope) => {
    let text = JSON.stringify(envelope);
    if (Buffer.byteLength(text) > NOTIFY_INLINE_LIMIT) {
      const rows = await db.query<{ id: string }>(
        "INSERT INTO coord_messages (body) VALUES ($1) RETURNING id",
        [text],
      );
      text = JSON.stringify({ ...(envelope.to ? { to: envelope.to } : {}), ref: String(rows[0]!.id) });
    }
    await db.query("SELECT pg_notify($1, $2)", [COORD_CHANNEL, text]);
  };

  return {
    start: connect,
    get connected() {
      return client !== undefined;
    },
    async post(to, topic, payload) {
      await notify({ ...(to ? { to } : {}), topic, from: options.instanceId, payload });
    },
    async signal(sys, name) {
      await notify({ sys, name });
    },
    async ping(timeoutMs) {
      const current = client;
      if (!current) return false;
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        current.query("SELECT 1").then(
          () => true,
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
