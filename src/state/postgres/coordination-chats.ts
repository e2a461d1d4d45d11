/**
 * Fenced chat claims over PostgreSQL (the `claimChat` half of the coordinator).
 *
 * A claim row (`coord_chat_claims`) names its holder and a token, and carries `seen_at`, the
 * database time its holder last confirmed it. The holder confirms every claim it holds with each
 * heartbeat, in one `UPDATE … WHERE key = h.key AND token = h.token AND holder = me RETURNING key`:
 * the statement takes each row's lock, so a take-over either committed first (the token changed,
 * the key does not come back: the claim is lost) or waits for the renewal and then sees the fresh
 * `seen_at`. Another instance takes a claim over only when the row's `seen_at` and its holder's
 * heartbeat are both older than the instance TTL; `INSERT … ON CONFLICT DO UPDATE … WHERE`
 * evaluates that condition on the row's newest version after locking it (READ COMMITTED), so
 * renewal and take-over are serialised by the row lock and never both win.
 *
 * Locally a claim is valid until its last confirmation's send time (a monotonic clock, taken
 * before the statement left) plus the TTL minus a safety margin. The database set `seen_at` no
 * earlier than that send time, and a take-over needs `seen_at` older than the TTL, so while the
 * claim is valid here no other instance can have it; the margin covers the time between a gate
 * passing and its effect landing, and clock rate differences. A holder that stalled (GC, a
 * blocking call, a paused VM) or lost the database finds its claims invalid when it wakes, before
 * any effect: `ensure()` then asks the database, and a claim another instance took fires `lost`.
 * Renewals that fail while a claim is past its expiry give it up too (another instance may take
 * it from then on), so a holder cut off from the database stops its turns by itself.
 *
 * The claim's `fence` (key and token) is the fencing token its turn's session writes carry: the
 * session store checks it against this table in each write's own statement or transaction
 * (sessions-sql.ts `holdFence`), so an effect that passed the local check just before a stall
 * cannot land after a take-over; a refusal there loses the claim here at once.
 */
import { randomBytes } from "node:crypto";
import { type ChatClaim, ChatClaimLostError, type ChatClaimResult } from "../coordination.js";
import type { PgDatabase } from "./database.js";

const ms = (param: string) => `(${param}::double precision * interval '1 millisecond')`;

export interface PgChatClaimsOptions {
  instanceId: string;
  instanceTtlMs: number;
  /** How long before the TTL runs out a claim stops being valid here. */
  marginMs: number;
  /** A monotonic clock in ms (default `performance.now`). */
  now?: () => number;
  log?: (line: string) => void;
}

interface Held {
  key: string;
  token: string;
  /** Local send time of the last statement that confirmed the claim. */
  confirmedAt: number;
  controller: AbortController;
  released: boolean;
}

export interface PgChatClaims {
  claim(key: string): Promise<ChatClaimResult>;
  /** Confirms every held claim (the heartbeat calls it); claims found taken fire `lost`. */
  verify(): Promise<void>;
  /** A heartbeat failed: claims past their expiry are given up. */
  failed(): void;
  /** The held claims' tokens, forgotten (closing: the caller deletes their rows). */
  takeTokens(): string[];
}

export function pgChatClaims(db: PgDatabase, options: PgChatClaimsOptions): PgChatClaims {
  const { instanceId, instanceTtlMs: ttl, marginMs } = options;
  const now = options.now ?? (() => performance.now());
  const held = new Map<string, Held>();
  let inflight: Promise<void> | undefined;

  const lose = (entry: Held, why: string) => {
    if (held.get(entry.key) === entry) held.delete(entry.key);
    if (entry.released || entry.controller.signal.aborted) return;
    entry.controller.abort(new ChatClaimLostError(entry.key, why));
    options.log?.(`coordination: lost chat ${entry.key}: ${why}`);
    // Still ours in the database when nobody took it yet: free it for whoever asks next.
    void db
      .query("DELETE FROM coord_chat_claims WHERE key = $1 AND token = $2", [entry.key, entry.token])
      .catch(() => undefined);
  };

  const overdue = () => {
    const at = now();
    for (const entry of [...held.values()])
      if (at >= entry.confirmedAt + ttl) lose(entry, "it could not be confirmed before it expired");
  };

  const verify = (): Promise<void> => {
    inflight ??= (async () => {
      const entries = [...held.values()];
      if (entries.length === 0) return;
      const sentAt = now();
      try {
        const rows = await db.query<{ key: string }>(
          `UPDATE coord_chat_claims c SET seen_at = clock_timestamp()
           FROM unnest($2::text[], $3::text[]) AS h(key, token)
           WHERE c.key = h.key AND c.token = h.token AND c.holder = $1 RETURNING c.key`,
          [instanceId, entries.map((e) => e.key), entries.map((e) => e.token)],
        );
        const confirmed = new Set(rows.map((r) => r.key));
        for (const entry of entries) {
          if (held.get(entry.key) !== entry) continue; // released meanwhile
          if (confirmed.has(entry.key)) entry.confirmedAt = Math.max(entry.confirmedAt, sentAt);
          else lose(entry, "another instance took it over while this one was not seen");
        }
      } catch (error) {
        overdue();
        throw error;
      }
    })().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };

  const makeClaim = (entry: Held): ChatClaim => {
    const valid = () =>
      !entry.released && !entry.controller.signal.aborted && now() < entry.confirmedAt + ttl - marginMs;
    return {
      key: entry.key,
      lost: entry.controller.signal,
      fence: {
        key: entry.key,
        token: entry.token,
        refused: (why) => lose(entry, why),
      },
      valid,
      async ensure() {
        for (;;) {
          if (entry.controller.signal.aborted) throw entry.controller.signal.reason;
          if (entry.released) throw new ChatClaimLostError(entry.key, "it was released");
          if (valid()) return;
          try {
            await verify();
          } catch {
            // The database is unreachable for now: try again until confirmed or given up.
            if (!entry.controller.signal.aborted) await new Promise((r) => setTimeout(r, 200));
          }
        }
      },
      async release() {
        if (entry.released) return;
        entry.released = true;
        if (held.get(entry.key) === entry) held.delete(entry.key);
        await db.query("DELETE FROM coord_chat_claims WHERE key = $1 AND token = $2", [
          entry.key,
          entry.token,
        ]);
      },
    };
  };

  return {
    async claim(key) {
      for (let tries = 0; ; tries++) {
        const token = randomBytes(12).toString("base64url");
        const sentAt = now();
        const taken = await db.query(
          `INSERT INTO coord_chat_claims (key, holder, token, claimed_at, seen_at)
           VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp())
           ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token,
             claimed_at = EXCLUDED.claimed_at, seen_at = EXCLUDED.seen_at
           WHERE coord_chat_claims.seen_at <= clock_timestamp() - ${ms("$4")}
             AND NOT EXISTS (SELECT 1 FROM coord_instances i WHERE i.id = coord_chat_claims.holder
               AND i.last_seen_at > clock_timestamp() - ${ms("$4")})
           RETURNING key`,
          [key, instanceId, token, ttl],
        );
        if (taken.length === 1) {
          const before = held.get(key);
          if (before) lose(before, "it was claimed again");
          const entry: Held = {
            key,
            token,
            confirmedAt: sentAt,
            controller: new AbortController(),
            released: false,
          };
          held.set(key, entry);
          return { claimed: makeClaim(entry) };
        }
        const holder = await db.query<{ holder: string }>(
          "SELECT holder FROM coord_chat_claims WHERE key = $1",
          [key],
        );
        if (holder[0]) return { heldBy: holder[0].holder };
        // Released between the two statements: try again.
        if (tries > 20) throw new Error(`could not claim chat ${key}: it changes hands too fast`);
      }
    },
    verify,
    failed: overdue,
    takeTokens() {
      const tokens = [...held.values()].map((e) => {
        e.released = true;
        return e.token;
      });
      held.clear();
      return tokens;
    },
  };
}
