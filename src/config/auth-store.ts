/**
 * `<home>/auth.json`: OAuth state and credential pools, in the shape Python Hermes reads and writes
 * (`hermes_cli/auth.py`):
 *
 * ```json
 * {"version": 1, "providers": {"nous": {...}}, "active_provider": "nous",
 *  "credential_pool": {"openrouter": [{"id": "a1b2c3", "label": "work", ...}]},
 *  "suppressed_sources": {"openrouter": ["env:OPENROUTER_API_KEY"]}, "updated_at": "..."}
 * ```
 *
 * Fields this module does not know are kept as they are. Writes happen under the same `flock` that
 * Python takes (`<home>/auth.lock`), re-read the file inside the lock, replace it atomically with
 * mode 0600, and never replace a file that failed to parse.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";
import { withFileLock } from "../util/file-lock.js";
import { authPath } from "./home.js";

export const AUTH_STORE_VERSION = 1;

/** `last_status` values Python writes. `dead` never re-enters rotation on its own. */
export const STATUS_OK = "ok";
export const STATUS_EXHAUSTED = "exhausted";
export const STATUS_DEAD = "dead";

export const AUTH_TYPE_API_KEY = "api_key";
export const AUTH_TYPE_OAUTH = "oauth";
export const SOURCE_MANUAL = "manual";

/**
 * One credential-pool entry as stored (`PooledCredential.to_dict()` upstream). Timestamps are epoch
 * seconds (floats). Borrowed sources (`env:NAME`, `model_config`, `config:NAME`) are stored without
 * the secret, with a `secret_fingerprint` instead. Unknown fields are kept on write.
 */
export interface PoolEntryRecord {
  id: string;
  label: string;
  /** `api_key` or `oauth`. */
  auth_type: string;
  /** Lower first (fill_first order). */
  priority: number;
  /** `manual`, `manual:<flow>`, `env:<VAR>`, `device_code`, `claude_code`, `model_config`, ... */
  source: string;
  access_token?: string;
  refresh_token?: string | null;
  base_url?: string | null;
  last_status: string | null;
  last_status_at: number | null;
  last_error_code: number | null;
  last_error_reason: string | null;
  last_error_message: string | null;
  /** Epoch seconds (or an ISO string, as some providers report it) when the cooldown ends. */
  last_error_reset_at: number | string | null;
  request_count: number;
  /** `sha256:<16 hex>` of the secret, for borrowed sources. */
  secret_fingerprint?: string;
  [key: string]: unknown;
}

/** The whole file. Unknown top-level fields are kept on write. */
export interface AuthStoreData {
  version: number;
  providers: Record<string, unknown>;
  active_provider?: string | null;
  credential_pool?: Record<string, unknown>;
  suppressed_sources?: Record<string, unknown>;
  updated_at?: string;
  [key: string]: unknown;
}

/** auth.json exists but cannot be used: not JSON, not an object, or unreadable. Exit code 2. */
export class AuthStoreError extends Error {
  readonly file: string;
  constructor(file: string, detail: string) {
    super(
      `${file}: ${detail}. Hermes will not overwrite it; fix the file or move it aside ` +
        "(credentials in it stay unused until then).",
    );
    this.name = "AuthStoreError";
    this.file = file;
  }
}

export interface AuthStoreSnapshot {
  data: AuthStoreData;
  exists: boolean;
  /** Identity of the file version read (inode, mtime, size), or "" when missing. */
  stamp: string;
}

/** `<home>/auth.lock`, the lock Python Hermes takes around every auth.json read-modify-write. */
export const authLockPath = (home: string): string => join(home, "auth.lock");

/**
 * A cheap identity of the file's current version: inode, mtime (ns) and size. Atomic replacement
 * gives every write a new inode, so two writes within one mtime tick still differ. "" when missing.
 */
export function authStoreStamp(home: string): string {
  return fileStamp(authPath(home)) ?? "";
}

/** The stamp; undefined when the file does not exist, "" when it cannot be examined. */
function fileStamp(file: string): string | undefined {
  try {
    // Read per session by the credential pool: a missing file must not cost a thrown error each time.
    const st = statSync(file, { bigint: true, throwIfNoEntry: false });
    return st ? `${st.ino}:${st.mtimeNs}:${st.size}` : undefined;
  } catch {
    return "";
  }
}

/**
 * Reads auth.json. A missing file gives an empty store (`exists: false`). Throws
 * {@link AuthStoreError} when the file is unreadable, not JSON, or not a JSON object.
 */
export function readAuthStore(home: string): AuthStoreSnapshot {
  const file = authPath(home);
  const stamp = fileStamp(file);
  if (stamp === undefined) return { data: emptyStore(), exists: false, stamp: "" };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { data: emptyStore(), exists: false, stamp: "" };
    throw new AuthStoreError(file, `cannot read the file (${code ?? String(error)})`);
  }
  return { data: parseAuthStore(text, file), exists: true, stamp };
}

/** Parses auth.json text (a UTF-8 BOM is allowed, as Python reads with utf-8-sig). */
export function parseAuthStore(text: string, file: string): AuthStoreData {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === "") return emptyStore();
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    throw new AuthStoreError(file, `not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(raw)) throw new AuthStoreError(file, `expected a JSON object, got ${describe(raw)}`);
  for (const section of ["providers", "credential_pool", "suppressed_sources"]) {
    const value = raw[section];
    if (value !== undefined && value !== null && !isObject(value)) {
      throw new AuthStoreError(file, `"${section}" should be an object, got ${describe(value)}`);
    }
  }
  const data = raw as AuthStoreData;
  if (!isObject(data.providers)) data.providers = {};
  return data;
}

/**
 * Runs `mutate` on the current auth.json under the auth lock and writes the result back when it
 * changed anything (a no-op leaves the file, and its mtime, alone). Creates the home and the file
 * when missing. Throws {@link AuthStoreError} without writing when the file does not parse, and
 * `FileLockTimeoutError` when another process holds the lock too long.
 */
export async function updateAuthStore<T>(
  home: string,
  mutate: (data: AuthStoreData) => T,
  options: { timeoutMs?: number; now?: () => number } = {},
): Promise<T> {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = authPath(home);
  return withFileLock(
    file,
    async () => {
      const { data } = readAuthStore(home);
      const before = JSON.stringify(data);
      const result = mutate(data);
      if (JSON.stringify(data) === before) return result;
      data.version = AUTH_STORE_VERSION;
      const seconds = options.now?.() ?? Date.now() / 1000;
      data.updated_at = new Date(seconds * 1000).toISOString();
      await atomicWriteFile(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      return result;
    },
    {
      lockPath: authLockPath(home),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    },
  );
}

/**
 * Like {@link updateAuthStore}, for a change that must wait on something (an OAuth refresh, whose
 * single-use refresh token must not be spent twice by two processes): `mutate` runs under the auth
 * lock on a fresh read and may await. Writes only when the data changed.
 */
export async function updateAuthStoreAsync<T>(
  home: string,
  mutate: (data: AuthStoreData) => Promise<T>,
  options: { timeoutMs?: number; now?: () => number } = {},
): Promise<T> {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = authPath(home);
  return withFileLock(
    file,
    async () => {
      const { data } = readAuthStore(home);
      const before = JSON.stringify(data);
      const result = await mutate(data);
      if (JSON.stringify(data) === before) return result;
      data.version = AUTH_STORE_VERSION;
      const seconds = options.now?.() ?? Date.now() / 1000;
      data.updated_at = new Date(seconds * 1000).toISOString();
      await atomicWriteFile(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      return result;
    },
    {
      lockPath: authLockPath(home),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    },
  );
}

/**
 * `providers[id]`, the OAuth login state Python Hermes keeps per provider (`nous`: portal tokens;
 * `openai-codex`: `{tokens, last_refresh, auth_mode}`), or undefined when there is none.
 */
export function providerState(data: AuthStoreData, id: string): Record<string, unknown> | undefined {
  const state = data.providers[id];
  return isObject(state) ? state : undefined;
}

/** Stores `state` as `providers[id]` and, with `active`, makes `id` the `active_provider`. */
export function setProviderState(
  data: AuthStoreData,
  id: string,
  state: Record<string, unknown>,
  options: { active?: boolean } = {},
): void {
  data.providers[id] = state;
  if (options.active) data.active_provider = id;
}

/** Removes `providers[id]` (and `active_provider` when it names `id`); true when there was one. */
export function removeProviderState(data: AuthStoreData, id: string): boolean {
  const had = id in data.providers;
  delete data.providers[id];
  if (data.active_provider === id) data.active_provider = null;
  return had;
}

/**
 * The raw list for `provider` (`credential_pool[provider]`), created when `create` is set. Items
 * that are not objects stay in the list untouched but are never returned by {@link poolRecords}.
 */
export function poolList(data: AuthStoreData, provider: string, create: true): unknown[];
export function poolList(data: AuthStoreData, provider: string, create?: boolean): unknown[] | undefined;
export function poolList(data: AuthStoreData, provider: string, create = false): unknown[] | undefined {
  let pool = data.credential_pool;
  if (!isObject(pool)) {
    if (!create) return undefined;
    pool = {};
    data.credential_pool = pool;
  }
  const list = pool[provider];
  if (Array.isArray(list)) return list;
  if (!create) return undefined;
  const fresh: unknown[] = [];
  pool[provider] = fresh;
  return fresh;
}

/** The entries of `provider`'s pool, normalised (defaults for missing fields), in file order. */
export function poolRecords(data: AuthStoreData, provider: string): PoolEntryRecord[] {
  return (poolList(data, provider) ?? []).filter(isObject).map((raw) => normalizeRecord(raw, provider));
}

/** Providers that have a non-empty pool in the file. */
export function poolProviders(data: AuthStoreData): string[] {
  const pool = data.credential_pool;
  if (!isObject(pool)) return [];
  return Object.keys(pool).filter((key) => {
    const list = pool[key];
    return Array.isArray(list) && list.some(isObject);
  });
}

/** Sources the user removed on purpose (`suppressed_sources[provider]`); never re-seeded. */
export function suppressedSources(data: AuthStoreData, provider: string): string[] {
  const raw = isObject(data.suppressed_sources) ? data.suppressed_sources[provider] : undefined;
  // Older files hold a mapping whose keys are the sources.
  if (isObject(raw)) return Object.keys(raw);
  return Array.isArray(raw) ? raw.filter((s): s is string => typeof s === "string") : [];
}

export function suppressSource(data: AuthStoreData, provider: string, source: string): void {
  const current = suppressedSources(data, provider);
  if (current.includes(source)) return;
  if (!isObject(data.suppressed_sources)) data.suppressed_sources = {};
  data.suppressed_sources[provider] = [...current, source];
}

/** Clears every suppression for `provider` (re-adding a credential re-enables its sources). */
export function clearSuppressedSources(data: AuthStoreData, provider: string): boolean {
  if (!isObject(data.suppressed_sources) || !(provider in data.suppressed_sources)) return false;
  delete data.suppressed_sources[provider];
  if (Object.keys(data.suppressed_sources).length === 0) delete data.suppressed_sources;
  return true;
}

/** The status fields of an entry with nothing recorded (`hermes auth reset`, a success). */
export const CLEARED_STATUS = {
  last_status: null,
  last_status_at: null,
  last_error_code: null,
  last_error_reason: null,
  last_error_message: null,
  last_error_reset_at: null,
} satisfies Partial<PoolEntryRecord>;

/** True when a stored entry has any status field set. */
export function hasPoolStatus(item: Record<string, unknown>): boolean {
  return Object.keys(CLEARED_STATUS).some((k) => item[k] !== null && item[k] !== undefined);
}

/**
 * Sources whose secret lives elsewhere (the environment, config.yaml): auth.json keeps their status
 * and a fingerprint, never the secret. Python treats every non-manual source this way except its
 * own OAuth logins, which we only read.
 */
export function isBorrowedSource(source: string): boolean {
  return source.startsWith("env:") || source === "model_config" || source.startsWith("config:");
}

/** `sha256:<first 16 hex>` of a secret, the `secret_fingerprint` Python stores for borrowed sources. */
export function fingerprint(secret: string): string {
  return `sha256:${createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16)}`;
}

/** Moves entry `id` to 0-based position `position` (clamped) and renumbers priorities 0..n-1. */
export function movePoolEntry(list: unknown[], id: string, position: number): void {
  const item = list.find((i) => isObject(i) && i["id"] === id);
  if (!isObject(item)) return;
  const ordered = sortedRecords(list).filter((i) => i !== item);
  ordered.splice(Math.max(0, Math.min(position, ordered.length)), 0, item);
  ordered.forEach((i, n) => {
    i["priority"] = n;
  });
}

/** Renumbers priorities 0..n-1 in their current order (after a removal, as Python does). */
export function renumberPool(list: unknown[]): void {
  sortedRecords(list).forEach((i, n) => {
    i["priority"] = n;
  });
}

function sortedRecords(list: unknown[]): Record<string, unknown>[] {
  const prio = (i: Record<string, unknown>) => (typeof i["priority"] === "number" ? i["priority"] : 0);
  return list.filter(isObject).sort((a, b) => prio(a) - prio(b));
}

/** A stored entry for a borrowed key: everything but the secret, for which a fingerprint stands. */
export function borrowedRecord(entry: {
  id: string;
  label: string;
  authType?: string | undefined;
  priority: number;
  source: string;
  key: string;
  baseUrl?: string | undefined;
  requestCount?: number | undefined;
}): PoolEntryRecord {
  return {
    id: entry.id,
    label: entry.label,
    auth_type: entry.authType ?? AUTH_TYPE_API_KEY,
    priority: entry.priority,
    source: entry.source,
    ...CLEARED_STATUS,
    ...(entry.baseUrl ? { base_url: entry.baseUrl } : {}),
    request_count: entry.requestCount ?? 0,
    secret_fingerprint: fingerprint(entry.key),
  };
}

/** Clears status and cooldown of every entry of `provider` (`hermes auth reset`); returns how many. */
export function resetPoolStatuses(home: string, provider: string, now?: () => number): Promise<number> {
  return updateAuthStore(
    home,
    (data) => {
      let n = 0;
      for (const item of poolList(data, provider) ?? []) {
        if (!isObject(item) || !hasPoolStatus(item)) continue;
        Object.assign(item, CLEARED_STATUS);
        n++;
      }
      return n;
    },
    now ? { now } : {},
  );
}

export interface AddPoolRecordResult {
  /** An entry already holding the same `access_token`; nothing was written then. */
  duplicate?: PoolEntryRecord;
  /** The suppressed sources adding cleared (Python re-enables them on every add). */
  unsuppressed: string[];
}

/**
 * Appends `record` to `provider`'s pool, after `first` (borrowed entries to store before it, unless
 * already stored under their source), at 0-based `position` when given (the others move down, all
 * priorities renumbered), else last. Clears the provider's suppressed sources, as Python does.
 */
export function addPoolRecord(
  home: string,
  provider: string,
  record: PoolEntryRecord,
  options: { first?: PoolEntryRecord[]; position?: number | undefined; now?: () => number } = {},
): Promise<AddPoolRecordResult> {
  return updateAuthStore(
    home,
    (data): AddPoolRecordResult => {
      const records = poolRecords(data, provider);
      const duplicate = records.find(
        (r) => r.access_token !== undefined && r.access_token === record.access_token,
      );
      if (duplicate) return { duplicate, unsuppressed: [] };
      const list = poolList(data, provider, true);
      let next = Math.max(-1, ...records.map((r) => r.priority)) + 1;
      for (const extra of options.first ?? []) {
        if (list.some((i) => isObject(i) && (i["id"] === extra.id || i["source"] === extra.source))) continue;
        list.push({ ...extra, priority: next++ });
      }
      list.push({ ...record, priority: next });
      if (options.position !== undefined) movePoolEntry(list, record.id, options.position);
      const unsuppressed = suppressedSources(data, provider);
      clearSuppressedSources(data, provider);
      return { unsuppressed };
    },
    options.now ? { now: options.now } : {},
  );
}

/**
 * Removes an entry of `provider` (by id, or by source for a borrowed one), renumbering the
 * priorities, and suppresses `suppress` so that source is not seeded again. Returns whether an
 * entry was stored.
 */
export function removePoolRecord(
  home: string,
  provider: string,
  entry: { id: string; source: string; borrowed: boolean },
  options: { suppress?: boolean; now?: () => number } = {},
): Promise<boolean> {
  return updateAuthStore(
    home,
    (data) => {
      const list = poolList(data, provider) ?? [];
      const before = list.length;
      for (let i = list.length - 1; i >= 0; i--) {
        const item = list[i];
        if (!isObject(item)) continue;
        if (item["id"] === entry.id || (entry.borrowed && item["source"] === entry.source)) list.splice(i, 1);
      }
      if (list.length !== before) renumberPool(list);
      if (options.suppress) suppressSource(data, provider, entry.source);
      return list.length !== before;
    },
    options.now ? { now: options.now } : {},
  );
}

/** A fresh random entry id, 6 hex characters like Python's `uuid4().hex[:6]`. */
export function newEntryId(random: () => number = Math.random): string {
  return Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, "0");
}

/**
 * A record with Python's defaults filled in. The returned object is a copy: mutate the raw list
 * item (found with its id) to change the file.
 */
export function normalizeRecord(raw: Record<string, unknown>, provider: string): PoolEntryRecord {
  const source = str(raw["source"]) ?? SOURCE_MANUAL;
  return {
    ...raw,
    id: str(raw["id"]) ?? "",
    label: str(raw["label"]) ?? (source || provider),
    auth_type: str(raw["auth_type"]) ?? AUTH_TYPE_API_KEY,
    priority: num(raw["priority"]) ?? 0,
    source,
    last_status: str(raw["last_status"]) ?? null,
    last_status_at: timestamp(raw["last_status_at"]) ?? null,
    last_error_code: num(raw["last_error_code"]) ?? null,
    last_error_reason: str(raw["last_error_reason"]) ?? null,
    last_error_message: str(raw["last_error_message"]) ?? null,
    last_error_reset_at: timestamp(raw["last_error_reset_at"]) ?? null,
    request_count: num(raw["request_count"]) ?? 0,
  };
}

/**
 * Epoch seconds from what Python may store: seconds, milliseconds (> 1e12), a numeric string or an
 * ISO-8601 string. Undefined for anything else, and for values <= 0.
 */
export function timestamp(value: unknown): number | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return value > 1e12 ? value / 1000 : value;
  }
  if (typeof value === "string" && value.trim() !== "") {
    const raw = value.trim();
    if (/^\d+(\.\d+)?$/.test(raw)) return timestamp(Number(raw));
    const ms = Date.parse(raw);
    return Number.isNaN(ms) ? undefined : ms / 1000;
  }
  return undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function emptyStore(): AuthStoreData {
  return { version: AUTH_STORE_VERSION, providers: {} };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
