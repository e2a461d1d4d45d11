/**
 * Keeps one instance's skills mirror current: a dedicated connection LISTENs on the skills
 * channel (`pg_notify` is sent in the same transaction as every skill, hub-lock or archive change,
 * whoever made it: a gateway instance, a CLI command, a migration) and each notification runs the
 * refresh. Refreshes never overlap; notifications that arrive while one runs make exactly one more
 * run afterwards.
 *
 * A notification sent while the connection is down is not replayed by PostgreSQL, so after every
 * (re)connection the refresh runs once: the refresh compares the whole database with the mirror,
 * so whatever changed meanwhile is caught up. The pause between attempts grows to `maxPauseMs`.
 */
import type { PoolClient } from "pg";
import type { PgDatabase } from "../../state/postgres/database.js";

export interface SkillWatchOptions {
  /** Told about a refresh or connection failure (the watch goes on). */
  onError?: (message: string) => void;
  /** Longest pause between reconnection attempts (default 5 s). */
  maxPauseMs?: number;
}

export interface SkillWatch {
  /** Resolves when no refresh runs or is asked for (tests, shutdown). */
  settled(): Promise<void>;
  /** Whether the listening connection is up. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** Starts watching `channel`; resolves once the first LISTEN is in place (or failed and retries). */
export async function watchSkills(
  db: PgDatabase,
  channel: string,
  refresh: () => Promise<unknown>,
  options: SkillWatchOptions = {},
): Promise<SkillWatch> {
  const onError = options.onError ?? (() => undefined);
  const maxPause = options.maxPauseMs ?? 5_000;
  let client: PoolClient | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let attempt = 0;
  let running: Promise<void> | undefined;
  let again = false;
  const listeners = new Map<PoolClient, { note: (n: { channel: string }) => void; lost: () => void }>();

  const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

  const run = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await refresh();
        } catch (error) {
          onError(`skills refresh: ${message(error)}`);
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const detach = (held: PoolClient) => {
    const own = listeners.get(held);
    if (!own) return;
    listeners.delete(held);
    held.off("notification", own.note);
    held.off("error", own.lost);
    held.off("end", own.lost);
  };

  const drop = (held: PoolClient) => {
    if (client !== held) return;
    client = undefined;
    detach(held);
    held.release(true);
    schedule();
  };

  const schedule = () => {
    if (closed || timer) return;
    const pause = Math.min(maxPause, 250 * 2 ** Math.min(attempt, 8));
    attempt++;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, pause);
    timer.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    let held: PoolClient;
    try {
      held = await db.connect();
    } catch (error) {
      onError(`skills watch: ${message(error)}`);
      schedule();
      return;
    }
    const own = {
      note: (note: { channel: string }) => {
        if (note.channel === channel) void run();
      },
      // A connection lost later (server restart, network) is replaced; errors never escape.
      lost: () => drop(held),
    };
    listeners.set(held, own);
    held.on("notification", own.note);
    held.on("error", own.lost);
    held.on("end", own.lost);
    try {
      await held.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
    } catch (error) {
      onError(`skills watch: ${message(error)}`);
      client = held;
      drop(held);
      return;
    }
    if (closed) {
      detach(held);
      held.release(true);
      return;
    }
    client = held;
    // The caller refreshed just before watching; after any failed attempt or lost connection,
    // catch up on whatever changed while no connection listened.
    const catchUp = attempt > 0;
    attempt = 0;
    if (catchUp) void run();
  };

  await connect();
  return {
    get listening() {
      return client !== undefined;
    },
    async settled() {
      while (running) await running;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const held = client;
      client = undefined;
      if (held) {
        detach(held);
        await held.query("UNLISTEN *").catch(() => undefined);
        held.release();
      }
      while (running) await running;
    },
  };
}
