/**
 * Pending approvals of every instance and per-chat toggles in PostgreSQL (migration 520), the
 * stores of `state/gateway/shared-approvals.ts`. An answer is one conditional `UPDATE … WHERE
 * answer IS NULL`, so of two answers given at once through different instances exactly one is
 * recorded; the other is told the approval was answered already. Liveness is the coordinator's:
 * an approval of an instance whose heartbeat is older than the instance TTL is not listed and
 * cannot be answered (its turn died with it).
 */

import {
  ApprovalAnswerError,
  type ChatSettingsRecords,
  type PendingApprovalRecords,
  type RecordedAnswer,
  type SharedApprovalInfo,
  type StoredChatSettings,
} from "../gateway/shared-approvals.js";
import type { ApprovalAnswer, ApprovalInfo } from "../gateway-control.js";
import type { PgQueryable } from "./database.js";
import { keyDigest, storableText } from "./gateway-common.js";

const ANSWERS: readonly ApprovalAnswer[] = ["once", "session", "always", "deny"];

/** Text PostgreSQL can hold: a NUL (a model may put one in a command) is shown as `\0`. */
const shown = (value: string) => value.replaceAll("\u0000", "\\0");

/** A `gateway_pending_approvals` row: an approval with its instance as a column and its times as timestamps. */
type ApprovalRow = Omit<ApprovalInfo, "instance" | "created_at" | "expires_at"> & {
  instance_id: string;
  created_at: Date;
  expires_at: Date;
};

const LIVE = (ttl: string) =>
  `EXISTS (SELECT 1 FROM coord_instances i WHERE i.id = a.instance_id
     AND i.last_seen_at > clock_timestamp() - (${ttl}::double precision * interval '1 millisecond'))`;

/** The approvals of every instance sharing `db`; `instanceTtlMs` as the coordinator's (default 8 s). */
export function pgPendingApprovals(
  db: PgQueryable,
  options: { instanceTtlMs?: number } = {},
): PendingApprovalRecords {
  const ttl = options.instanceTtlMs ?? 8_000;
  return {
    async add(instance, approval: ApprovalInfo) {
      await db.query(
        `INSERT INTO gateway_pending_approvals (instance_id, id, session_key, platform, chat_id, user_id,
           command, reason, protected_path, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (instance_id, id) DO NOTHING`,
        [
          instance,
          approval.id,
          shown(approval.session_key),
          shown(approval.platform),
          shown(approval.chat_id),
          shown(approval.user_id),
          shown(approval.command),
          shown(approval.reason),
          approval.protected_path,
          approval.created_at,
          approval.expires_at,
        ],
      );
    },
    async remove(instance, id) {
      await db.query("DELETE FROM gateway_pending_approvals WHERE instance_id = $1 AND id = $2", [
        instance,
        id,
      ]);
    },
    async list() {
      const rows = await db.query<ApprovalRow>(
        `SELECT a.* FROM gateway_pending_approvals a
         WHERE a.answer IS NULL AND a.expires_at > clock_timestamp() AND ${LIVE("$1")}
         ORDER BY a.created_at, a.instance_id, a.id`,
        [ttl],
      );
      return rows.map(toInfo);
    },
    async answer(id, decision, by) {
      if (!ANSWERS.includes(decision))
        throw new ApprovalAnswerError(`decision must be one of ${ANSWERS.join(", ")}, got "${decision}"`);
      const rows = await db.query<{ instance_id: string }>(
        `UPDATE gateway_pending_approvals a
         SET answer = $2, answered_by = $3, answered_at = clock_timestamp()
         WHERE a.id = $1 AND a.answer IS NULL AND a.expires_at > clock_timestamp() AND ${LIVE("$4")}
           AND (NOT a.protected_path OR $2 = 'deny')
         RETURNING a.instance_id`,
        [id, decision, by, ttl],
      );
      if (rows[0]) return { instance: rows[0].instance_id };
      throw new ApprovalAnswerError(await whyRefused(db, id, ttl));
    },
    async answers(instance) {
      const rows = await db.query<{ id: string; answer: ApprovalAnswer; answered_by: string | null }>(
        `SELECT id, answer, answered_by FROM gateway_pending_approvals
         WHERE instance_id = $1 AND answer IS NOT NULL ORDER BY answered_at`,
        [instance],
      );
      return rows.map(
        (r): RecordedAnswer => ({ id: r.id, decision: r.answer, by: r.answered_by ?? "control" }),
      );
    },
    async clear(instance) {
      await db.query("DELETE FROM gateway_pending_approvals WHERE instance_id = $1", [instance]);
    },
  };
}

function toInfo(row: ApprovalRow): SharedApprovalInfo {
  return {
    id: row.id,
    instance: row.instance_id,
    session_key: row.session_key,
    platform: row.platform,
    chat_id: row.chat_id,
    user_id: row.user_id,
    command: row.command,
    reason: row.reason,
    protected_path: row.protected_path,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
  };
}

/** The reason an answer for `id` was not recorded, for the one who gave it. */
async function whyRefused(db: PgQueryable, id: string, ttl: number): Promise<string> {
  const rows = await db.query<{
    answer: string | null;
    expired: boolean;
    live: boolean;
    protected_path: boolean;
  }>(
    `SELECT a.answer, a.expires_at <= clock_timestamp() AS expired, ${LIVE("$2")} AS live, a.protected_path
     FROM gateway_pending_approvals a WHERE a.id = $1`,
    [id, ttl],
  );
  const row = rows.find((r) => r.live && !r.expired && r.answer === null) ?? rows[0];
  if (!row) return `No pending approval with id "${id}" (answered, timed out or never asked).`;
  if (row.answer !== null) return `Approval ${id} was answered already (${row.answer}).`;
  if (!row.live) return `Approval ${id} belongs to an instance that is no longer running.`;
  if (row.expired) return `Approval ${id} timed out: it was denied.`;
  return `Approval ${id} touches a protected path: only the chat's user can approve it, in the chat. It can be denied here.`;
}

const TOOL_PROGRESS = ["off", "new", "all", "verbose"];

/** What `/verbose`, `/yolo` and `/voice` chose per chat, shared by every instance on `db`. */
export function pgChatSettings(db: PgQueryable): ChatSettingsRecords {
  return {
    async get(sessionKey, voiceChat) {
      const rows = await db.query<{ settings: string | null; voice: string | null }>(
        `SELECT (SELECT settings FROM gateway_chat_settings WHERE key_digest = $1) AS settings,
                (SELECT mode FROM gateway_voice_modes WHERE chat_digest = $2) AS voice`,
        [keyDigest(sessionKey), voiceChat === undefined ? null : keyDigest(voiceChat)],
      );
      const row = rows[0];
      if (!row || (row.settings === null && row.voice === null)) return undefined;
      const out: StoredChatSettings = row.voice === null ? {} : { voice: row.voice };
      let parsed: Record<string, unknown> = {};
      try {
        const value = row.settings === null ? {} : (JSON.parse(row.settings) as unknown);
        if (value && typeof value === "object") parsed = value as Record<string, unknown>;
      } catch {
        return row.voice === null ? undefined : out;
      }
      if (typeof parsed["toolProgress"] === "string" && TOOL_PROGRESS.includes(parsed["toolProgress"]))
        out.toolProgress = parsed["toolProgress"];
      if (typeof parsed["yolo"] === "boolean") out.yolo = parsed["yolo"];
      return out;
    },
    async set(sessionKey, settings) {
      const stored: StoredChatSettings = {
        ...(settings.toolProgress !== undefined ? { toolProgress: settings.toolProgress } : {}),
        ...(settings.yolo !== undefined ? { yolo: settings.yolo } : {}),
      };
      await db.query(
        `INSERT INTO gateway_chat_settings (key_digest, session_key, settings) VALUES ($1, $2, $3)
         ON CONFLICT (key_digest) DO UPDATE
         SET settings = EXCLUDED.settings, updated_at = clock_timestamp()`,
        [keyDigest(sessionKey), storableText("session key", sessionKey), JSON.stringify(stored)],
      );
    },
    async voiceMode(chat) {
      const rows = await db.query<{ mode: string }>(
        "SELECT mode FROM gateway_voice_modes WHERE chat_digest = $1",
        [keyDigest(chat)],
      );
      return rows[0]?.mode;
    },
    async setVoiceMode(chat, mode) {
      await db.query(
        `INSERT INTO gateway_voice_modes (chat_digest, chat, mode) VALUES ($1, $2, $3)
         ON CONFLICT (chat_digest) DO UPDATE SET mode = EXCLUDED.mode, updated_at = clock_timestamp()`,
        [keyDigest(chat), storableText("chat", chat), storableText("voice mode", mode)],
      );
    },
  };
}
