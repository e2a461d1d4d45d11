/**
 * The live instances sharing a database and what each holds, read without registering as one
 * (`hermes gateway status` and `hermes doctor` use this; a running gateway's coordinator too).
 */
import { API_SERVER_CLAIM, type InstanceInfo } from "../coordination.js";
import type { PgQueryable } from "./database.js";

interface InstanceRow {
  id: string;
  host: string;
  pid: number;
  health_url: string | null;
  started_at: Date;
  last_seen_at: Date;
  draining: boolean;
  leases: string[];
  slots: string[];
  chats: number;
  turns: number;
}

/** Instances whose heartbeat is fresher than `instanceTtlMs` (default 8 s), oldest first. */
export async function listPgInstances(
  db: PgQueryable,
  options: { instanceTtlMs?: number } = {},
): Promise<InstanceInfo[]> {
  const rows = await db.query<InstanceRow>(
    `SELECT i.id, i.host, i.pid, i.health_url, i.started_at, i.last_seen_at, i.draining,
       ARRAY(SELECT l.name FROM coord_leases l
             WHERE l.holder = i.id AND l.expires_at > clock_timestamp() ORDER BY l.name) AS leases,
       ARRAY(SELECT 'cron:' || s.job_id FROM coord_cron_slots s
             WHERE s.holder = i.id AND s.status = 'running' AND s.lease_until > clock_timestamp()
             ORDER BY s.job_id) AS slots,
       (SELECT count(*) FROM coord_chat_claims c
         WHERE c.holder = i.id AND left(c.key, length($2)) <> $2)::int AS chats,
       COALESCE((to_jsonb(i) ->> 'turns')::int, 0) AS turns
     FROM coord_instances i
     WHERE i.last_seen_at > clock_timestamp() - ($1::double precision * interval '1 millisecond')
     ORDER BY i.started_at, i.id`,
    [options.instanceTtlMs ?? 8_000, API_SERVER_CLAIM],
  );
  return rows.map((row) => ({
    id: row.id,
    host: row.host,
    pid: Number(row.pid),
    startedAt: new Date(row.started_at).toISOString(),
    lastSeenAt: new Date(row.last_seen_at).toISOString(),
    holds: [...row.leases, ...row.slots],
    chats: Number(row.chats),
    turns: Number(row.turns),
    ...(row.health_url ? { healthUrl: row.health_url } : {}),
    draining: row.draining,
  }));
}
