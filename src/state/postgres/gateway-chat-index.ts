/**
 * The chat → session index (`sessions/sessions.json` in a file home) in PostgreSQL: one row per
 * session key holding the whole entry as JSON text, so keys a newer Hermes or Python adds to an
 * entry are kept as the file keeps them. Changes lock the key's row (`SELECT … FOR UPDATE`), so
 * two instances touching one chat apply their changes one after the other and a restart mark is
 * taken by exactly one of them.
 *
 * Fencing: `fencedBy(fence)` is a view whose writes land only while a chat claim is current: each
 * write's transaction takes the claim row (`holdFence`, the lock the session writes take) once it
 * holds the entry's row and before it writes,
 * so a write delayed past a take-over cannot point the chat at a stale session; it is refused with
 * `ChatClaimLostError` and changes nothing. The plain index (CLI, commands) is unfenced.
 */
import type { ClaimFence, ClaimFencedStore } from "../coordination.js";
import type { IndexedSource, SessionIndexEntry } from "../gateway/session-index.js";
import { type ChatSessionIndex, indexEntryFor } from "../gateway/session-index.js";
import type { PgDatabase, PgQueryable } from "./database.js";
import { keyDigest, parseObject, storableText } from "./gateway-common.js";
import { holdFence } from "./sessions-sql.js";

/** The chat → session index on PostgreSQL, and views of it fenced by a chat claim. */
export type PgChatSessionIndex = ChatSessionIndex & ClaimFencedStore<ChatSessionIndex>;

const WHAT = "chat index write";

function asEntry(text: string): SessionIndexEntry | undefined {
  const value = parseObject(text);
  return value && typeof value["session_id"] === "string" ? (value as SessionIndexEntry) : undefined;
}

async function lockedEntry(c: PgQueryable, digest: Buffer): Promise<SessionIndexEntry | undefined> {
  const rows = await c.query<{ entry: string }>(
    "SELECT entry FROM gateway_chat_index WHERE key_digest = $1 FOR UPDATE",
    [digest],
  );
  return rows[0] ? asEntry(rows[0].entry) : undefined;
}

async function write(c: PgQueryable, digest: Buffer, key: string, entry: SessionIndexEntry): Promise<void> {
  await c.query(
    `INSERT INTO gateway_chat_index (key_digest, session_key, session_id, entry, updated_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (key_digest) DO UPDATE
       SET session_id = EXCLUDED.session_id, entry = EXCLUDED.entry, updated_at = now()`,
    [digest, key, entry.session_id, JSON.stringify(entry)],
  );
}

/** The chat → session index of every instance sharing `db` (migration 300). */
export function pgChatSessionIndex(db: PgDatabase): PgChatSessionIndex {
  return indexOn(db);
}

/** The index on `db`; with `fence`, each write's transaction first holds that claim's row. */
function indexOn(db: PgDatabase, fence?: ClaimFence): PgChatSessionIndex {
  // Taken once the write holds the entry's row (or its fresh insert), so the writers of one chat,
  // serialised on that row, never hold the claim row together: a take-over waiting for it is not
  // starved by share locks that keep overlapping.
  const hold = (c: PgQueryable): Promise<void> => (fence ? holdFence(c, fence, WHAT) : Promise.resolve());

  /** Runs `change` on the key's entry under its row lock; writes what it returns (nothing for undefined). */
  async function update<T>(
    key: string,
    change: (entry: SessionIndexEntry | undefined) => { entry?: SessionIndexEntry; result: T },
  ): Promise<T> {
    const digest = keyDigest(storableText("The session key", key));
    return db.tx(async (c) => {
      const current = await lockedEntry(c, digest);
      await hold(c);
      const { entry, result } = change(current);
      if (entry) await write(c, digest, key, entry);
      return result;
    });
  }

  return {
    fencedBy: (claim) => indexOn(db, claim),
    async get(key) {
      const rows = await db.query<{ entry: string }>(
        "SELECT entry FROM gateway_chat_index WHERE key_digest = $1",
        [keyDigest(key)],
      );
      return rows[0] ? asEntry(rows[0].entry) : undefined;
    },
    async set(key: string, sessionId: string, source: IndexedSource, now: Date) {
      storableText("The session id", sessionId);
      // A first entry for the key may race another instance's: a fresh entry is inserted unless
      // the row exists (waiting for a concurrent creator to commit); otherwise the row is locked
      // and updated, so the second writer builds on the first's entry.
      const digest = keyDigest(storableText("The session key", key));
      return db.tx(async (c) => {
        const fresh = indexEntryFor(undefined, key, sessionId, source, now);
        const inserted = await c.query(
          `INSERT INTO gateway_chat_index (key_digest, session_key, session_id, entry)
           VALUES ($1, $2, $3, $4) ON CONFLICT (key_digest) DO NOTHING RETURNING 1 AS x`,
          [digest, key, sessionId, JSON.stringify(fresh)],
        );
        if (inserted.length > 0) {
          await hold(c);
          return fresh;
        }
        const current = await lockedEntry(c, digest);
        await hold(c);
        const entry = indexEntryFor(current, key, sessionId, source, now);
        await write(c, digest, key, entry);
        return entry;
      });
    },
    async markInterrupted(key, reason, now) {
      await update(key, (entry) =>
        entry
          ? {
              entry: {
                ...entry,
                resume_pending: true,
                resume_reason: reason,
                resume_marked_at: now.toISOString(),
              },
              result: undefined,
            }
          : { result: undefined },
      );
    },
    async takeInterrupted(key) {
      return update(key, (entry) => {
        if (!entry?.resume_pending) return { result: undefined };
        const mark = {
          reason: entry.resume_reason ?? "restart_interrupted",
          at: new Date(entry.resume_marked_at ?? 0),
        };
        const { resume_pending: _p, resume_reason: _r, resume_marked_at: _m, ...rest } = entry;
        return { entry: rest as SessionIndexEntry, result: mark };
      });
    },
    async touch(key, now) {
      await update(key, (entry) =>
        entry
          ? { entry: { ...entry, updated_at: now.toISOString() }, result: undefined }
          : { result: undefined },
      );
    },
  };
}
