/**
 * What the PostgreSQL session store's parts share: the context (pool, clock, redaction), text
 * made storable (PostgreSQL `text` cannot hold NUL), transactions retried on serialization
 * failures and deadlocks, and PostgreSQL errors mapped to the `SessionStoreError` codes the SQLite
 * store throws for the same situations.
 */
import type { Message } from "../../ai/types.js";
import { encodeContent, type Row } from "../codec.js";
import { ChatClaimLostError, type ClaimFence } from "../coordination.js";
import { SessionStoreError } from "../types.js";
import type { PgDatabase, PgQueryable } from "./database.js";

export interface PgStoreContext {
  readonly db: PgDatabase;
  readonly now: () => number;
  readonly redact: (text: string) => string;
  /** Writes land only while this chat claim is current (`holdFence`); absent: unfenced. */
  readonly fence?: ClaimFence | undefined;
}

/**
 * The row lock a fenced write takes on its claim: `FOR SHARE` conflicts with the take-over's
 * `INSERT … ON CONFLICT DO UPDATE` and the release's `DELETE`, so either the take-over committed
 * first (the token no longer matches on the row's newest version: no row) or it waits until the
 * write's transaction ended. Fenced writes of one claim do not block each other.
 */
export function fenceRowSql(keyParam = 1): string {
  return `SELECT 1 FROM coord_chat_claims WHERE key = $${keyParam} AND token = $${keyParam + 1} FOR SHARE`;
}

/**
 * What a refused fenced write (a session write, or `what` names another) throws; the claim is told
 * first, so its turn stops as on a lost claim.
 */
export function fenceRefused(fence: ClaimFence, what = "session write"): ChatClaimLostError {
  const why = `the database refused a ${what} made under it (another instance holds the chat now)`;
  fence.refused?.(why);
  return new ChatClaimLostError(fence.key, why);
}

/** Takes `fence`'s claim row for the rest of the transaction, or throws `ChatClaimLostError`. */
export async function holdFence(q: PgQueryable, fence: ClaimFence, what?: string): Promise<void> {
  const rows = await q.query(fenceRowSql(), [fence.key, fence.token]);
  if (rows.length === 0) throw fenceRefused(fence, what);
}

/** `"\u0001json:"`: the content prefix Python Hermes also writes; `"\u0000json:"` cannot be stored in PostgreSQL. */
export const PG_CONTENT_JSON_PREFIX = "\u0001json:";

/**
 * Message content as stored in PostgreSQL: as in state.db, except that parts arrays take the
 * `\u0001json:` prefix and a text holding NUL characters is stored JSON-encoded behind that prefix
 * (the codec decodes both back to exactly what was written).
 */
export function pgContent(content: Message["content"] | undefined): string | null {
  const encoded = encodeContent(content);
  if (encoded === null) return null;
  if (typeof content === "string") {
    return content.includes("\u0000") ? PG_CONTENT_JSON_PREFIX + JSON.stringify(content) : content;
  }
  return PG_CONTENT_JSON_PREFIX + JSON.stringify(content);
}

/** NUL characters in other text columns become U+FFFD (PostgreSQL rejects them outright). */
function storable(params: readonly unknown[]): unknown[] {
  return params.map((p) =>
    typeof p === "string" && p.includes("\u0000") ? p.replaceAll("\u0000", "\ufffd") : p,
  );
}

/** Runs one statement with NUL-safe parameters. */
export function run<R extends Row = Row>(
  q: PgQueryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<R[]> {
  return q.query<R>(sql, storable(params));
}

/** The first row of a statement, or undefined. */
export async function one<R extends Row = Row>(
  q: PgQueryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<R | undefined> {
  return (await run<R>(q, sql, params))[0];
}

interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

const RETRYABLE = new Set(["40001", "40P01"]);

/**
 * Runs `fn` in one transaction, again (up to 5 times) when PostgreSQL aborts it for a deadlock or
 * serialization failure. With `ctx.fence`, the transaction first holds the claim (`holdFence`).
 */
export async function inTx<T>(ctx: PgStoreContext, fn: (q: PgQueryable) => Promise<T>): Promise<T> {
  const { fence } = ctx;
  const body = fence
    ? async (q: PgQueryable) => {
        await holdFence(q, fence);
        return fn(q);
      }
    : fn;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.db.tx(body);
    } catch (error) {
      const code = (error as PgError).code;
      if (attempt >= 5 || code === undefined || !RETRYABLE.has(code)) throw error;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}

export function notFound(id: string): SessionStoreError {
  return new SessionStoreError("not_found", `No session with id "${id}". Try \`hermes sessions list\`.`);
}

export function titleTakenError(title: string, owner: string | undefined): SessionStoreError {
  return new SessionStoreError(
    "title_taken",
    owner
      ? `The title "${title}" is already used by session ${owner}; choose another one.`
      : `The title "${title}" is already used by another session; choose another one.`,
  );
}

/**
 * Maps what PostgreSQL threw to the store's error codes: a title another session took meanwhile is
 * `title_taken` (naming the holder when `title` is known), an id taken meanwhile `invalid`, lost
 * or refused connections `locked` with the database's label (password masked). Anything else is
 * passed on unchanged.
 */
export async function mapPgError(ctx: PgStoreContext, error: unknown, title?: string | null): Promise<never> {
  if (error instanceof SessionStoreError) throw error;
  const e = error as PgError;
  if (e.code === "23505" && e.constraint === "idx_sessions_title_unique") {
    const owner =
      title == null
        ? undefined
        : await one(ctx.db, "SELECT id FROM sessions WHERE title = $1", [title]).catch(() => undefined);
    throw titleTakenError(title ?? "", owner ? String(owner["id"]) : undefined);
  }
  if (e.code === "23505" && e.constraint === "sessions_pkey") {
    throw new SessionStoreError(
      "invalid",
      `A session with that id already exists (${e.message ?? "duplicate id"}).`,
    );
  }
  if (e.code === "23505" && e.constraint === "messages_pkey") {
    throw new SessionStoreError(
      "invalid",
      `A message id being imported already belongs to another session in ${ctx.db.label}; import into an empty database (${e.message ?? "duplicate message id"}).`,
    );
  }
  if (e.code === "23503") {
    throw new SessionStoreError(
      "not_found",
      `The session was deleted meanwhile (${e.message ?? "missing session"}).`,
    );
  }
  if (e.code === "42P01" || e.code === "42703" || e.code === "42883") {
    throw new SessionStoreError(
      "invalid",
      `${ctx.db.label} is missing part of the Hermes schema (${e.message ?? e.code}); run the migrations (open the postgres backend once, or \`hermes state migrate\`).`,
    );
  }
  if (
    e.code?.startsWith("08") ||
    e.code === "57P01" ||
    e.code === "57P03" ||
    e.code === "ECONNREFUSED" ||
    e.code === "ECONNRESET" ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(e.message ?? "")
  ) {
    throw new SessionStoreError(
      "locked",
      `PostgreSQL at ${ctx.db.label} cannot be reached (${e.message ?? e.code}). Nothing was written by this call.`,
    );
  }
  // Refused at sign-in (password, role, database name, host name): say where and what to check.
  if (e.code?.startsWith("28") || e.code === "3D000" || e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") {
    throw new SessionStoreError(
      "locked",
      `PostgreSQL at ${ctx.db.label} refused the connection (${e.message ?? e.code}): check the URL, user and password in HERMES_DATABASE_URL (or state.url). Nothing was written by this call.`,
    );
  }
  throw error;
}

/** Numeric cell (`count(*)`, bigint columns arrive as text) as a number. */
export function num(value: unknown): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** `LIKE` pattern for a literal prefix (wildcards escaped; pair with `ESCAPE '\'`). */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
