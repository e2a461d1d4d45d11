/**
 * The backend-neutral half of writing sessions: what a new session row holds, the values its
 * insert binds (in `SESSION_INSERT_COLUMNS` order) and the numbers one usage report adds. SQLite
 * (history.ts, sqlite-store.ts) and PostgreSQL (postgres/sessions-write.ts) bind these to their own
 * SQL, so both store the same row for the same input.
 */
import { newSessionId } from "../util/session-id.js";
import { sanitizeTitle } from "./titles.js";
import {
  type NewSession,
  type SessionCostStatus,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
  type UsageDelta,
} from "./types.js";

export interface SessionRow {
  id: string;
  source: string;
  userId: string | null;
  model: string | null;
  modelConfig: string | null;
  systemPrompt: string | null;
  parentSessionId: string | null;
  startedAt: number;
  cwd: string | null;
  gitBranch: string | null;
  gitRepoRoot: string | null;
  billingProvider: string | null;
  billingBaseUrl: string | null;
  title: string | null;
}

/**
 * The insert's column list: the 14 bound values of `sessionInsertValues`, then every counter
 * Python reads as a number, which the insert sets to 0.
 */
export const SESSION_INSERT_COLUMNS = `id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
       cwd, git_branch, git_repo_root, billing_provider, billing_base_url, title,
       message_count, tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, api_call_count, rewind_count, archived`;

/** The counters' values after the 14 bound ones. */
export const SESSION_INSERT_ZEROES = "0, 0, 0, 0, 0, 0, 0, 0, 0, 0";

/** The 14 values bound in `SESSION_INSERT_COLUMNS` order; the system prompt is redacted. */
export function sessionInsertValues(s: SessionRow, redact: (text: string) => string): unknown[] {
  return [
    s.id,
    s.source,
    s.userId,
    s.model,
    s.modelConfig,
    s.systemPrompt === null ? null : redact(s.systemPrompt),
    s.parentSessionId,
    s.startedAt,
    s.cwd,
    s.gitBranch,
    s.gitRepoRoot,
    s.billingProvider,
    s.billingBaseUrl,
    s.title,
  ];
}

/** The title `createSession` stores for what was asked: redacted, then cleaned (null: none). */
export function wantedTitle(
  redact: (text: string) => string,
  title: string | null | undefined,
): string | null {
  return sanitizeTitle(title == null ? title : redact(title));
}

/**
 * The row `createSession` inserts for `input` (its id and title still to be checked against the
 * database by the caller). Throws `invalid` for an input without a source.
 */
export function newSessionRow(input: NewSession, now: number, redact: (text: string) => string): SessionRow {
  const startedAt = input.startedAt ?? now;
  const id = input.id ?? newSessionId(new Date(startedAt * 1000));
  const title = wantedTitle(redact, input.title);
  if (!input.source) throw new SessionStoreError("invalid", "A session needs a source (cli, telegram, …).");
  const config = input.modelConfig && Object.keys(input.modelConfig).length > 0 ? input.modelConfig : null;
  return {
    id,
    source: input.source,
    userId: input.userId ?? null,
    model: input.model ?? null,
    modelConfig: config ? JSON.stringify(config) : null,
    systemPrompt: input.systemPrompt ?? null,
    parentSessionId: input.parentSessionId ?? null,
    startedAt,
    cwd: input.cwd ?? null,
    gitBranch: input.gitBranch ?? null,
    gitRepoRoot: input.gitRepoRoot ?? null,
    billingProvider: input.billingProvider ?? null,
    billingBaseUrl: input.billingBaseUrl ?? null,
    title,
  };
}

/**
 * The row of a /branch child of `parent`: its model, prompt (stored redacted already; redacting
 * again leaves it as it is), working directory and billing, `parent_session_id` set, and the
 * parent's `model_config` (an unreadable one dropped) with `_branched_from`, the marker Python
 * Hermes uses to list the child as a conversation of its own.
 */
export function branchSessionRow(
  parent: SessionRecord,
  child: { id: string; startedAt: number; source: string | undefined; title: string | null },
): SessionRow {
  let config: Record<string, unknown> = {};
  try {
    const parsed: unknown = parent.modelConfig ? JSON.parse(parent.modelConfig) : {};
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      config = parsed as Record<string, unknown>;
  } catch {
    // An unreadable config is not copied; the marker is still written.
  }
  config["_branched_from"] = parent.id;
  return {
    id: child.id,
    source: child.source ?? parent.source,
    userId: parent.userId,
    model: parent.model,
    modelConfig: JSON.stringify(config),
    systemPrompt: parent.systemPrompt,
    parentSessionId: parent.id,
    startedAt: child.startedAt,
    cwd: parent.cwd,
    gitBranch: parent.gitBranch,
    gitRepoRoot: parent.gitRepoRoot,
    billingProvider: parent.billingProvider,
    billingBaseUrl: parent.billingBaseUrl,
    title: child.title,
  };
}

/** `n` as a whole number; 0 for a missing or non-finite count. */
export const whole = (v: number | undefined): number =>
  typeof v === "number" && Number.isFinite(v) ? Math.round(v) : 0;

/**
 * The counters one usage report adds, `[input, output, cache read, cache write, reasoning, api
 * calls]`: whole numbers, 0 for a missing or non-finite count, one API call unless told.
 */
export function usageVector(delta: UsageDelta): number[] {
  return [
    whole(delta.inputTokens),
    whole(delta.outputTokens),
    whole(delta.cacheReadTokens),
    whole(delta.cacheWriteTokens),
    whole(delta.reasoningTokens),
    delta.apiCalls === undefined ? 1 : whole(delta.apiCalls),
  ];
}

/** The report's cost when it is a finite number, else null (the stored cost stays as it is). */
export function finiteCost(delta: UsageDelta): number | null {
  return typeof delta.costUsd === "number" && Number.isFinite(delta.costUsd) ? delta.costUsd : null;
}

/** The columns `updateSession`'s patch fields set, in both backends. */
export const PATCH_COLUMNS: Record<keyof Parameters<SessionStore["updateSession"]>[1], string> = {
  model: "model",
  systemPrompt: "system_prompt",
  endedAt: "ended_at",
  endReason: "end_reason",
  archived: "archived",
  cwd: "cwd",
  gitBranch: "git_branch",
};

const COST_STATUS_RANK: Record<SessionCostStatus, number> = {
  included: 0,
  actual: 1,
  estimated: 2,
  unknown: 3,
};

/**
 * A session's cost status after one more usage report: the worst of the two, so one unpriced call
 * marks the total as incomplete (`unknown`) and one estimated call makes an invoiced total an
 * estimate. Text another writer left that is not a known status gives way to the new one.
 */
export function mergeCostStatus(stored: string | null, next: SessionCostStatus | undefined): string | null {
  if (next === undefined) return stored;
  if (stored === null || !Object.hasOwn(COST_STATUS_RANK, stored)) return next;
  return COST_STATUS_RANK[stored as SessionCostStatus] >= COST_STATUS_RANK[next] ? stored : next;
}
