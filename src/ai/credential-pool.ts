/**
 * Credential pools: several keys (or OAuth logins) for one provider, one chosen per request, a key
 * that fails with 401/403/402/429 benched for a while and the next one used. Entries come from auth.json
 * (`credential_pool[<provider>]`, shared with Python Hermes and other Hermes processes) plus the
 * keys the environment and config.yaml already provide (`env:OPENROUTER_API_KEY`, `model_config`).
 *
 * A pool never logs or prints a key: `PoolEntry.apiKey` is non-enumerable, so `JSON.stringify` and
 * `console.log` of an entry leave it out; show keys with {@link maskKey}.
 */
import {
  AUTH_TYPE_API_KEY,
  AUTH_TYPE_OAUTH,
  type AuthStoreData,
  AuthStoreError,
  authStoreStamp,
  borrowedRecord,
  CLEARED_STATUS,
  fingerprint,
  isBorrowedSource,
  isObject,
  newEntryId,
  type PoolEntryRecord,
  poolList,
  poolRecords,
  readAuthStore,
  STATUS_DEAD,
  STATUS_EXHAUSTED,
  suppressedSources,
  timestamp,
  updateAuthStore,
} from "../config/auth-store.js";
import { POOL_REFRESH_PROVIDERS } from "./oauth/types.js";
import { findProvider } from "./providers.js";

export type PoolStrategy = "fill_first" | "round_robin" | "random" | "least_used";
export const POOL_STRATEGIES: readonly PoolStrategy[] = ["fill_first", "round_robin", "random", "least_used"];

/** Cooldown after a 401 or 403: the key may be fixed or re-enabled soon. */
export const AUTH_COOLDOWN_S = 5 * 60;
/** Cooldown after a 429 or 402 and anything else, unless the provider says when it resets. */
export const LIMIT_COOLDOWN_S = 60 * 60;

type Env = Readonly<Record<string, string | undefined>>;

/** A pool entry as the caller sees it: a snapshot, passed back to `markExhausted`/`markSuccess`. */
export interface PoolEntry {
  readonly id: string;
  readonly provider: string;
  readonly label: string;
  /**
   * `api_key` or `oauth`. An `oauth` entry (a second login of the same provider) rotates like a
   * key; its bearer is renewed by `refreshPoolEntry` (oauth/pool-refresh.ts) after a 401.
   */
  readonly authType: string;
  readonly priority: number;
  /** `manual`, `env:NAME`, `model_config`, `config:NAME`, or a Python OAuth source. */
  readonly source: string;
  /** The secret; non-enumerable. Empty when this process cannot see it (an env var not set here). */
  readonly apiKey: string;
  readonly baseUrl: string | undefined;
  /** `exhausted`, `dead`, `ok`, or undefined when nothing was recorded. */
  readonly status: string | undefined;
  readonly statusAt: number | undefined;
  readonly errorCode: number | undefined;
  readonly errorReason: string | undefined;
  /** Epoch seconds when an `exhausted` entry's cooldown ends (it may already have passed). */
  readonly cooldownUntil: number | undefined;
  readonly requestCount: number;
  /** True when auth.json holds the entry (an env key with no recorded status is not stored). */
  readonly persisted: boolean;
  /** Has a key this pool may send (api_key or oauth, key present, not dead). */
  readonly usable: boolean;
}

export interface ExhaustedInfo {
  /** HTTP status of the failure: 401/403 bench for 5 min, 402/429 and others for 1 h. */
  status?: number | undefined;
  /** When the provider says the limit resets: epoch seconds or ms, ISO string, or Date. */
  resetAt?: number | string | Date | undefined;
  /** Retry-After in seconds, used when `resetAt` is absent. */
  retryAfterSeconds?: number | undefined;
  /** Retry-After in milliseconds (the error classifier's `retryAfterMs`), same use. */
  retryAfterMs?: number | undefined;
  /**
   * Classified reason (`rate_limit`, `billing`, ...), stored as `last_error_reason`. `billing`
   * benches for an hour whatever the status.
   */
  reason?: string | undefined;
  /** Short error text, stored as `last_error_message` (must not contain the key). */
  message?: string | undefined;
}

export interface CredentialPoolOptions {
  home: string;
  /** Provider id or alias, or `custom:<name>`. */
  provider: string;
  /** Environment (with `.env` merged) the provider's key variables are read from. */
  env?: Env | undefined;
  /** Effective config: `credential_pool_strategies`, `model.provider`/`api_key`, `custom_providers`. */
  config?: Readonly<Record<string, unknown>> | undefined;
  /** Overrides the configured strategy. */
  strategy?: PoolStrategy | undefined;
  /** Clock in epoch seconds (default `Date.now() / 1000`). */
  now?: (() => number) | undefined;
  /** Uniform [0, 1) source for the `random` strategy. */
  random?: (() => number) | undefined;
  /** Request counts are written at most this often (default 60 s); status changes at once. */
  countFlushSeconds?: number | undefined;
  /** Non-fatal problems (corrupt auth.json, a write that failed, an unknown strategy). */
  onWarning?: ((message: string) => void) | undefined;
}

interface Slot {
  id: string;
  label: string;
  authType: string;
  priority: number;
  source: string;
  key: string;
  baseUrl: string | undefined;
  status: string | undefined;
  statusAt: number | undefined;
  errorCode: number | undefined;
  errorReason: string | undefined;
  resetAt: number | undefined;
  requestCount: number;
  persisted: boolean;
  /** A secret auth.json must not hold (env, config); stored as a fingerprint. */
  borrowed: boolean;
  /** An api_key, or an OAuth login this process can renew (see `sendable`). */
  sendable: boolean;
  order: number;
}

interface Seed {
  source: string;
  key: string;
  label: string;
  baseUrl: string | undefined;
}

/** Opens the pool for one provider, reading auth.json now. Never throws for a corrupt auth.json. */
export function openCredentialPool(options: CredentialPoolOptions): CredentialPool {
  return new CredentialPool(options);
}

export class CredentialPool {
  readonly provider: string;
  readonly strategy: PoolStrategy;
  private readonly home: string;
  private readonly seeds: Seed[];
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly flushEvery: number;
  private readonly warn: (message: string) => void;
  private slots: Slot[] = [];
  private stamp: string | undefined;
  /** Set while auth.json does not parse: the pool runs on seeds only and never writes. */
  private broken: AuthStoreError | undefined;
  private readonly seedIds = new Map<string, string>();
  private readonly pendingCounts = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private lastFlushAt: number;
  private lastSelectedId: string | undefined;

  constructor(options: CredentialPoolOptions) {
    this.home = options.home;
    this.provider = poolKey(options.provider);
    this.now = options.now ?? (() => Date.now() / 1000);
    this.random = options.random ?? Math.random;
    this.flushEvery = options.countFlushSeconds ?? 60;
    this.warn = options.onWarning ?? (() => {});
    const configured = configuredStrategy(options.config, this.provider);
    if (configured.warning) this.warn(configured.warning);
    this.strategy = options.strategy ?? configured.strategy;
    this.seeds = seedsFor(this.provider, options.env ?? {}, options.config);
    this.lastFlushAt = this.now();
    this.reload();
  }

  /** All entries in priority order (the `#` of `hermes auth list`), re-reading auth.json if it changed. */
  entries(): PoolEntry[] {
    this.refresh();
    return this.slots.map((slot) => this.view(slot));
  }

  /** True when auth.json could not be parsed; the message names the file. */
  get storeError(): string | undefined {
    return this.broken?.message;
  }

  /**
   * The entry to use for the next request, by strategy, skipping entries cooling down. When every
   * entry is cooling down, a pool with exactly one usable key still returns it (the caller decides
   * to fall back, see {@link hasAlternative}); a larger pool returns undefined.
   */
  select(): PoolEntry | undefined {
    this.refresh();
    const chosen = this.pick(undefined, true);
    return chosen ? this.view(chosen) : undefined;
  }

  /** What {@link select} would return now, without advancing round-robin or usage counters. */
  peek(): PoolEntry | undefined {
    this.refresh();
    const chosen = this.pick(undefined, false);
    return chosen ? this.view(chosen) : undefined;
  }

  /**
   * Another entry usable now, other than `entry` (normally the one that just failed), or undefined
   * when there is none: fall back to another provider then, do not wait.
   */
  nextAfterFailure(entry: PoolEntry | string): PoolEntry | undefined {
    this.refresh();
    const chosen = this.pick(idOf(entry), true);
    return chosen ? this.view(chosen) : undefined;
  }

  /**
   * True when an entry other than `entry` (default: the last one selected, else the one
   * {@link select} would pick) is usable now. False for a pool of one key.
   */
  hasAlternative(entry?: PoolEntry | string): boolean {
    this.refresh();
    const now = this.now();
    const ref = entry !== undefined ? idOf(entry) : (this.lastSelectedId ?? this.pick(undefined, false)?.id);
    return this.slots.some((s) => s.id !== ref && this.available(s, now));
  }

  /** True when at least one entry is usable and not cooling down. */
  hasAvailable(): boolean {
    this.refresh();
    const now = this.now();
    return this.slots.some((s) => this.available(s, now));
  }

  /** Earliest end of a cooldown when no entry is available now; undefined when one is, or none will be. */
  nextAvailableAt(): number | undefined {
    if (this.hasAvailable()) return undefined;
    const ends = this.slots.filter((s) => usable(s)).map((s) => cooldownEnd(s));
    const times = ends.filter((t): t is number => t !== undefined);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /**
   * Benches `entry`: 401/403 for 5 minutes, 402/429 (and anything else) for an hour, or until the
   * provider's reset time. Written to auth.json at once so other processes skip the key too. A
   * failed write is reported through `onWarning`, never thrown.
   */
  async markExhausted(entry: PoolEntry | string, info: ExhaustedInfo = {}): Promise<void> {
    const slot = this.find(entry);
    if (!slot) return;
    const now = this.now();
    const until = resetTime(info, now) ?? now + cooldownSeconds(info.status, info.reason);
    slot.status = STATUS_EXHAUSTED;
    slot.statusAt = now;
    slot.errorCode = info.status;
    slot.errorReason = info.reason;
    slot.resetAt = until;
    this.settle(slot.id);
    const fields: Partial<PoolEntryRecord> = {
      last_status: STATUS_EXHAUSTED,
      last_status_at: now,
      last_error_code: info.status ?? null,
      last_error_reason: info.reason ?? null,
      last_error_message: info.message ?? null,
      last_error_reset_at: until,
    };
    await this.write((data) => this.patchRecord(data, slot, fields, true), "record the exhausted key");
  }

  /**
   * Counts a successful request. A status left from an earlier failure is cleared and written at
   * once; otherwise counts are written at most every `countFlushSeconds`.
   */
  async markSuccess(entry: PoolEntry | string): Promise<void> {
    const slot = this.find(entry);
    if (!slot) return;
    slot.requestCount++;
    this.pendingCounts.set(slot.id, (this.pendingCounts.get(slot.id) ?? 0) + 1);
    this.settle(slot.id);
    if (slot.status === STATUS_EXHAUSTED || slot.status === STATUS_DEAD) {
      clearStatus(slot);
      await this.write(
        (data) => this.patchRecord(data, slot, CLEARED_STATUS, false),
        "clear the key's status",
      );
    } else if (this.now() - this.lastFlushAt >= this.flushEvery) {
      await this.flush();
    }
  }

  /** Writes request counts not yet written (call before exit). */
  async flush(): Promise<void> {
    if (![...this.pendingCounts.keys()].some((id) => this.slots.find((s) => s.id === id)?.persisted)) {
      this.lastFlushAt = this.now();
      return;
    }
    await this.write(() => {}, "save request counts");
  }

  // ---- internals ----

  /** Re-reads auth.json when its inode, mtime or size changed since the last read. */
  private refresh(): void {
    if (authStoreStamp(this.home) !== this.stamp) this.reload();
  }

  private reload(): void {
    this.stamp = authStoreStamp(this.home);
    let data: AuthStoreData | undefined;
    try {
      data = readAuthStore(this.home).data;
      this.broken = undefined;
    } catch (error) {
      if (!(error instanceof AuthStoreError)) throw error;
      if (this.broken?.message !== error.message) this.warn(error.message);
      this.broken = error;
    }
    const records = data ? poolRecords(data, this.provider) : [];
    const suppressed = new Set(data ? suppressedSources(data, this.provider) : []);
    const slots: Slot[] = [];
    const keys = new Set<string>();
    const sources = new Set<string>();
    // Owned entries first so a borrowed copy of the same key is the one dropped.
    for (const r of records) {
      if (isBorrowedSource(r.source)) continue;
      const slot = slotFromRecord(r, r.access_token ?? "", false, slots.length);
      if (slot.key) keys.add(slot.key);
      slots.push(slot);
    }
    for (const r of records) {
      if (!isBorrowedSource(r.source) || suppressed.has(r.source) || sources.has(r.source)) continue;
      const seed = this.seeds.find((s) => s.source === r.source);
      if (seed && keys.has(seed.key)) continue;
      sources.add(r.source);
      const slot = slotFromRecord(r, seed?.key ?? "", true, slots.length);
      // The variable now holds a different key than the one this status was recorded for.
      if (seed && r.secret_fingerprint && r.secret_fingerprint !== fingerprint(seed.key)) clearStatus(slot);
      if (seed) keys.add(seed.key);
      slots.push(slot);
    }
    let next = Math.max(-1, ...slots.map((s) => s.priority)) + 1;
    for (const seed of this.seeds) {
      if (suppressed.has(seed.source) || sources.has(seed.source) || keys.has(seed.key)) continue;
      keys.add(seed.key);
      let id = this.seedIds.get(seed.source);
      if (!id) {
        id = newEntryId(this.random);
        this.seedIds.set(seed.source, id);
      }
      slots.push({
        id,
        label: seed.label,
        authType: AUTH_TYPE_API_KEY,
        priority: next++,
        source: seed.source,
        key: seed.key,
        baseUrl: seed.baseUrl,
        status: undefined,
        statusAt: undefined,
        errorCode: undefined,
        errorReason: undefined,
        resetAt: undefined,
        requestCount: 0,
        persisted: false,
        borrowed: true,
        sendable: true,
        order: slots.length,
      });
    }
    for (const slot of slots) {
      slot.requestCount += this.pendingCounts.get(slot.id) ?? 0;
      slot.sendable = sendable(slot.authType, this.provider);
    }
    this.slots = slots.sort((a, b) => a.priority - b.priority || a.order - b.order);
  }

  private available(slot: Slot, now: number): boolean {
    if (!usable(slot)) return false;
    const end = cooldownEnd(slot);
    return end === undefined || now >= end;
  }

  /** Chooses by strategy among available entries other than `exclude`; `commit` records the choice. */
  private pick(exclude: string | undefined, commit: boolean): Slot | undefined {
    const now = this.now();
    const candidates = this.slots.filter((s) => s.id !== exclude && this.available(s, now));
    let chosen: Slot | undefined;
    if (candidates.length > 0) {
      chosen = this.byStrategy(candidates, exclude ?? this.lastSelectedId, commit);
    } else if (exclude === undefined) {
      const all = this.slots.filter(usable);
      if (all.length === 1) chosen = all[0];
    }
    if (chosen && commit) {
      this.lastSelectedId = chosen.id;
      if (this.strategy === "least_used")
        this.inFlight.set(chosen.id, (this.inFlight.get(chosen.id) ?? 0) + 1);
    }
    return chosen;
  }

  private byStrategy(candidates: Slot[], after: string | undefined, commit: boolean): Slot | undefined {
    switch (this.strategy) {
      case "round_robin": {
        const position = this.slots.findIndex((s) => s.id === after);
        if (position < 0) return candidates[0];
        const order = (s: Slot) => this.slots.indexOf(s);
        return candidates.find((s) => order(s) > position) ?? candidates[0];
      }
      case "random": {
        // peek() must not consume randomness the next select() would have used.
        const r = commit ? this.random() : 0;
        return candidates[Math.min(candidates.length - 1, Math.floor(r * candidates.length))];
      }
      case "least_used": {
        const load = (s: Slot) => s.requestCount + (this.inFlight.get(s.id) ?? 0);
        return candidates.reduce((best, s) => (load(s) < load(best) ? s : best));
      }
      default:
        return candidates[0];
    }
  }

  private find(entry: PoolEntry | string): Slot | undefined {
    this.refresh();
    const id = idOf(entry);
    const byId = this.slots.find((s) => s.id === id);
    if (byId || typeof entry === "string") return byId;
    return this.slots.find((s) => s.source === entry.source && s.key === entry.apiKey && s.key !== "");
  }

  private matches(item: unknown, slot: Slot): boolean {
    if (!isObject(item)) return false;
    if (item["id"] === slot.id) return true;
    if (slot.borrowed) return item["source"] === slot.source;
    return item["source"] === slot.source && item["access_token"] === slot.key && slot.key !== "";
  }

  /** Applies `fields` to the slot's record; a borrowed slot not stored yet is added when `create`. */
  private patchRecord(
    data: AuthStoreData,
    slot: Slot,
    fields: Partial<PoolEntryRecord>,
    create: boolean,
  ): void {
    const list = poolList(data, this.provider, create);
    if (!list) return;
    const item = list.find((i) => this.matches(i, slot));
    if (isObject(item)) {
      Object.assign(item, fields);
      if (slot.borrowed && slot.key) item["secret_fingerprint"] = fingerprint(slot.key);
      return;
    }
    if (!create || !slot.borrowed || suppressedSources(data, this.provider).includes(slot.source)) return;
    // A manual entry missing from the file was removed by another process: never bring it back.
    // The pending count is added by write() with the others.
    const requestCount = slot.requestCount - (this.pendingCounts.get(slot.id) ?? 0);
    list.push({ ...borrowedRecord({ ...slot, requestCount }), ...fields });
  }

  /** One locked read-modify-write that also adds the pending request counts. */
  private async write(mutate: (data: AuthStoreData) => void, what: string): Promise<void> {
    if (this.broken) {
      this.warn(`could not ${what}: ${this.broken.message}`);
      return;
    }
    const counts = new Map<string, number>();
    try {
      await updateAuthStore(
        this.home,
        (data) => {
          counts.clear();
          mutate(data);
          const list = poolList(data, this.provider) ?? [];
          for (const [id, n] of this.pendingCounts) {
            const slot = this.slots.find((s) => s.id === id);
            const item = slot ? list.find((i) => this.matches(i, slot)) : undefined;
            if (!isObject(item)) continue;
            const before = typeof item["request_count"] === "number" ? item["request_count"] : 0;
            item["request_count"] = before + n;
            counts.set(id, n);
          }
        },
        { now: this.now },
      );
    } catch (error) {
      this.warn(`could not ${what} in auth.json: ${(error as Error).message}`);
      return;
    }
    for (const [id, n] of counts) {
      const left = (this.pendingCounts.get(id) ?? 0) - n;
      if (left > 0) this.pendingCounts.set(id, left);
      else this.pendingCounts.delete(id);
    }
    this.lastFlushAt = this.now();
    this.reload();
  }

  /** One request on `id` finished (least_used counts requests in flight). */
  private settle(id: string): void {
    const n = (this.inFlight.get(id) ?? 0) - 1;
    if (n > 0) this.inFlight.set(id, n);
    else this.inFlight.delete(id);
  }

  private view(slot: Slot): PoolEntry {
    const entry = {
      id: slot.id,
      provider: this.provider,
      label: slot.label,
      authType: slot.authType,
      priority: slot.priority,
      source: slot.source,
      baseUrl: slot.baseUrl,
      status: slot.status,
      statusAt: slot.statusAt,
      errorCode: slot.errorCode,
      errorReason: slot.errorReason,
      cooldownUntil: cooldownEnd(slot),
      requestCount: slot.requestCount,
      persisted: slot.persisted,
      usable: usable(slot),
    };
    Object.defineProperty(entry, "apiKey", { value: slot.key, enumerable: false });
    return Object.freeze(entry) as PoolEntry;
  }
}

/**
 * Cooldown for a failure: 401/403 five minutes, everything else an hour. A `billing` failure (a
 * spent key often answers 403) keeps the hour, as in Python: retrying it in minutes cannot help.
 */
export function cooldownSeconds(status: number | undefined, reason?: string | undefined): number {
  if (reason === "billing") return LIMIT_COOLDOWN_S;
  return status === 401 || status === 403 ? AUTH_COOLDOWN_S : LIMIT_COOLDOWN_S;
}

/** `sk-or-…a1b2`: the first 6 and last 4 characters; shorter keys show less, never all. */
export function maskKey(key: string): string {
  if (key.length === 0) return "";
  if (key.length >= 16) return `${key.slice(0, 6)}…${key.slice(-4)}`;
  if (key.length >= 8) return `${key.slice(0, 2)}…${key.slice(-2)}`;
  return "…";
}

/** The pool key for a provider name: catalog id for an alias, `custom:<name>` normalised. */
export function poolKey(provider: string): string {
  const raw = provider.trim().toLowerCase();
  if (raw.startsWith("custom:")) return `custom:${raw.slice(7).trim().replace(/\s+/g, "-")}`;
  return findProvider(raw)?.id ?? raw;
}

/** The strategy `credential_pool_strategies.<provider>` names; fill_first when unset or unknown. */
export function configuredStrategy(
  config: Readonly<Record<string, unknown>> | undefined,
  provider: string,
): { strategy: PoolStrategy; warning?: string } {
  const table = config?.["credential_pool_strategies"];
  const raw = isObject(table) ? table[provider] : undefined;
  if (typeof raw !== "string" || raw.trim() === "") return { strategy: "fill_first" };
  const name = raw.trim().toLowerCase();
  if ((POOL_STRATEGIES as readonly string[]).includes(name)) return { strategy: name as PoolStrategy };
  return {
    strategy: "fill_first",
    warning:
      `credential_pool_strategies.${provider}: unknown strategy "${raw}"; ` +
      `using fill_first (choose ${POOL_STRATEGIES.join(", ")}).`,
  };
}

function usable(slot: Slot): boolean {
  return slot.key !== "" && slot.sendable && slot.status !== STATUS_DEAD;
}

/**
 * Whether this process can send an entry of `authType` for `provider`: any key; an OAuth login
 * only where it can also renew it after a 401 (pool-refresh.ts), else a dead token would be sent.
 */
function sendable(authType: string, provider: string): boolean {
  if (authType === AUTH_TYPE_API_KEY) return true;
  return authType === AUTH_TYPE_OAUTH && POOL_REFRESH_PROVIDERS.includes(provider);
}

function cooldownEnd(slot: Slot): number | undefined {
  if (slot.status !== STATUS_EXHAUSTED) return undefined;
  if (slot.resetAt !== undefined) return slot.resetAt;
  return slot.statusAt !== undefined
    ? slot.statusAt + cooldownSeconds(slot.errorCode, slot.errorReason)
    : undefined;
}

function clearStatus(slot: Slot): void {
  slot.status = undefined;
  slot.statusAt = undefined;
  slot.errorCode = undefined;
  slot.errorReason = undefined;
  slot.resetAt = undefined;
}

function idOf(entry: PoolEntry | string): string {
  return typeof entry === "string" ? entry : entry.id;
}

function slotFromRecord(r: PoolEntryRecord, key: string, borrowed: boolean, order: number): Slot {
  return {
    id: r.id,
    label: r.label,
    authType: r.auth_type,
    priority: r.priority,
    source: r.source,
    key,
    baseUrl: typeof r.base_url === "string" && r.base_url ? r.base_url : undefined,
    status: r.last_status ?? undefined,
    statusAt: r.last_status_at ?? undefined,
    errorCode: r.last_error_code ?? undefined,
    errorReason: r.last_error_reason ?? undefined,
    resetAt: timestamp(r.last_error_reset_at),
    requestCount: r.request_count,
    persisted: true,
    borrowed,
    sendable: true,
    order,
  };
}

/** Epoch seconds from the provider's reset time or Retry-After, when in the future. */
function resetTime(info: ExhaustedInfo, now: number): number | undefined {
  const raw = info.resetAt instanceof Date ? info.resetAt.getTime() : info.resetAt;
  const at = timestamp(raw);
  if (at !== undefined && at > now) return at;
  const after =
    info.retryAfterSeconds ?? (info.retryAfterMs !== undefined ? info.retryAfterMs / 1000 : undefined);
  if (after !== undefined && Number.isFinite(after) && after > 0) return now + after;
  return undefined;
}

/**
 * Keys this process already has for the provider, in resolve.ts's precedence: config.yaml's
 * `model.api_key` when `model.provider` names this provider, a `custom_providers` entry's key for
 * `custom:<name>`, then the provider's env variables. The same key twice counts once.
 */
function seedsFor(provider: string, env: Env, config: Readonly<Record<string, unknown>> | undefined): Seed[] {
  const seeds: Seed[] = [];
  const profile = provider.startsWith("custom:") ? undefined : findProvider(provider);
  const add = (source: string, key: unknown, label: string, baseUrl: unknown) => {
    if (typeof key !== "string" || key.trim() === "") return;
    const trimmed = key.trim();
    if (seeds.some((s) => s.key === trimmed)) return;
    const url = typeof baseUrl === "string" && baseUrl.trim() ? baseUrl.trim() : undefined;
    seeds.push({ source, key: trimmed, label, baseUrl: url });
  };
  const model = config?.["model"];
  if (isObject(model) && typeof model["provider"] === "string" && poolKey(model["provider"]) === provider) {
    add("model_config", model["api_key"], "model_config", model["base_url"] ?? profile?.baseUrl);
  }
  const customs = config?.["custom_providers"];
  if (provider.startsWith("custom:") && Array.isArray(customs)) {
    for (const entry of customs) {
      if (!isObject(entry) || typeof entry["name"] !== "string") continue;
      if (poolKey(`custom:${entry["name"]}`) !== provider) continue;
      add(`config:${entry["name"].trim()}`, entry["api_key"], entry["name"].trim(), entry["base_url"]);
    }
  }
  for (const name of profile?.apiKeyEnv ?? []) add(`env:${name}`, env[name], name, profile?.baseUrl);
  return seeds;
}
