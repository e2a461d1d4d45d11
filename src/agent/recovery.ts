/**
 * What the loop can change when a model call fails, beyond waiting and repeating it: strip replayed
 * reasoning, switch to another key of the provider's credential pool, rebuild the client, or move to
 * a fallback provider for the rest of the turn. The loop decides *when* from the error classifier's
 * flags; this module does the switching. `ProviderRecovery` owns the session's primary transport.
 */
import { type CredentialPool, openCredentialPool, type PoolEntry } from "../ai/credential-pool.js";
import type { ClassifiedError } from "../ai/error-classifier.js";
import {
  createTransport,
  type Env,
  type ResolvedRuntime,
  resolveRuntime,
  type TransportOptions,
} from "../ai/resolve.js";
import type { Message, Transport } from "../ai/types.js";
import { AUTH_TYPE_OAUTH } from "../config/auth-store.js";
import { readClaudeCodeToken } from "../config/claude-code.js";
import type { HermesConfig } from "../config/defaults.js";

/** A provider and model the loop can send a request to. */
export interface ModelRoute {
  transport: Transport;
  model: string;
  /** "openrouter (anthropic/claude-sonnet-4)", for messages. */
  label: string;
  /** Provider id and endpoint, so usage on this route is priced as this provider's. */
  provider?: string;
  baseUrl?: string;
}

/** Recovery actions the loop may take; every one is optional and absent means "not possible". */
export interface ModelRecovery {
  /** The primary route's label for messages. */
  readonly primaryLabel: string;
  /**
   * Benches the key that just failed and returns a transport with the pool's next key, or
   * undefined when the pool has fewer than two usable keys (or none is left).
   */
  rotateCredential?(failure: ClassifiedError): Promise<Transport | undefined>;
  /** A new client for the primary runtime (same key), after repeated connection failures. */
  rebuildTransport?(): Promise<Transport | undefined>;
  /**
   * Fallback number `index` (0-based) of `fallback_providers`: its route, an Error when it cannot be
   * resolved (missing key, unknown provider), or undefined when the list has no such entry.
   */
  fallback?(index: number): Promise<ModelRoute | Error | undefined>;
  /** A call on the primary route succeeded (counts the pool key's use, clears its status). */
  succeeded?(): Promise<void>;
}

/** One entry of `fallback_providers` (or the legacy `fallback_model`). */
export interface FallbackEntry {
  provider: string;
  model: string;
  baseUrl?: string;
  apiKey?: string;
}

/**
 * The messages with replayed reasoning removed (`reasoning_details`, `codex_reasoning_items`), for a
 * retry after an invalid thinking signature or encrypted item. Copies; the input is not changed.
 */
export function withoutReplayedReasoning<T extends Message>(messages: readonly T[]): T[] {
  return messages.map((message) => {
    if (message.reasoning_details === undefined && message.codex_reasoning_items === undefined)
      return message;
    const { reasoning_details: _details, codex_reasoning_items: _items, ...rest } = message;
    return rest as T;
  });
}

/** A lower output-token limit for a retry, a small margin under what the provider said fits. */
export function loweredMaxTokens(available: number): number {
  const margin = Math.min(64, Math.floor(available / 20));
  return Math.max(1, Math.floor(available) - margin);
}

/**
 * `fallback_providers` (a list of `{provider, model, base_url?, api_key?}`), then the legacy
 * `fallback_model: {provider, model}` when it names something not already listed. Malformed entries
 * are skipped.
 */
export function fallbackChain(config: Readonly<Record<string, unknown>>): FallbackEntry[] {
  const chain: FallbackEntry[] = [];
  const add = (raw: unknown) => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return;
    const e = raw as Record<string, unknown>;
    const str = (key: string) => (typeof e[key] === "string" && e[key].trim() ? e[key].trim() : undefined);
    const provider = str("provider");
    const model = str("model");
    if (!provider || !model) return;
    const baseUrl = str("base_url");
    const apiKey = str("api_key");
    const entry: FallbackEntry = {
      provider,
      model,
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
    };
    const same = chain.some(
      (c) => c.provider === entry.provider && c.model === entry.model && c.baseUrl === entry.baseUrl,
    );
    if (!same) chain.push(entry);
  };
  const list = config["fallback_providers"];
  if (Array.isArray(list)) for (const item of list) add(item);
  add(config["fallback_model"]);
  return chain;
}

export interface ProviderRecoveryOptions {
  home: string;
  config: HermesConfig;
  env: Env;
  transportOptions: TransportOptions;
  /** The resolved primary runtime; absent when the agent was given a ready transport. */
  runtime?: ResolvedRuntime | undefined;
  /** The primary transport, already built. */
  transport: Transport;
  model: string;
  /** Open the runtime provider's credential pool (false with an explicit key or a ready transport). */
  usePool: boolean;
  onWarning?: (message: string) => void;
  /** Renews an OAuth pool entry after a 401 (default: oauth/pool-refresh.ts over real fetch). */
  refreshOAuthEntry?: ((entry: PoolEntry, stale: string) => Promise<string>) | undefined;
}

/** The agent's recovery: owns the primary transport (rebuilt on rotation) and the fallback list. */
export class ProviderRecovery implements ModelRecovery {
  readonly primaryLabel: string;
  private current: Transport;
  private apiKey: string | undefined;
  private entry: PoolEntry | undefined;
  private readonly pool: CredentialPool | undefined;
  private readonly chain: FallbackEntry[];
  private readonly options: ProviderRecoveryOptions;
  /** Bearers of OAuth pool entries already renewed once after a 401 (a refused one is not retried). */
  private readonly renewedTokens = new Set<string>();
  /** The key when it came from Claude Code's credentials file (renewed from there after a 401). */
  private loginToken: string | undefined;
  /** Where the pool reports problems (a failed auth.json write); the agent points it at the running turn. */
  warn: (message: string) => void;

  constructor(options: ProviderRecoveryOptions) {
    this.options = options;
    this.current = options.transport;
    this.apiKey = options.runtime?.apiKey;
    this.warn = options.onWarning ?? (() => {});
    this.primaryLabel = options.runtime
      ? `${options.runtime.provider} (${options.runtime.model})`
      : `the model ${options.model}`;
    this.chain = fallbackChain(options.config);
    let pool: CredentialPool | undefined;
    if (options.usePool && options.runtime) {
      try {
        pool = openCredentialPool({
          home: options.home,
          provider: options.runtime.provider,
          env: options.env,
          config: options.config,
          onWarning: (message) => this.warn(message),
        });
      } catch (error) {
        this.warn(`Could not open the credential pool: ${String(error)}`);
      }
    }
    this.pool = pool;
    this.entry = pool?.entries().find((e) => e.usable && e.apiKey !== "" && e.apiKey === this.apiKey);
    const home = options.env["HOME"];
    const login =
      options.runtime?.provider === "anthropic" && home ? readClaudeCodeToken(home, 0) : undefined;
    this.loginToken = login?.accessToken === this.apiKey ? login?.accessToken : undefined;
  }

  /**
   * Picks the session's starting key from the provider's pool by its strategy (round_robin,
   * random, least_used; fill_first stays on the configured key while it is usable), skipping keys
   * that are cooling down, and rebuilds the primary transport when that is not the key it was
   * built with. A pool of one key changes nothing.
   */
  async init(): Promise<void> {
    const pool = this.pool;
    const runtime = this.options.runtime;
    if (!pool || !runtime) return;
    // A session on a stored login keeps it; pool entries take over only when it fails.
    if (runtime.login) return;
    const keyed = pool.entries().filter((e) => e.apiKey !== "");
    if (keyed.length < 2) return;
    // fill_first keeps using the key the configuration names for as long as it works.
    const own = keyed.find((e) => e.apiKey === this.apiKey);
    if (pool.strategy === "fill_first" && own?.usable) return;
    const chosen = pool.select();
    if (!chosen || chosen.apiKey === "") return;
    this.entry = chosen;
    if (chosen.apiKey === this.apiKey) return;
    this.current = await this.transportFor(runtime, chosen, chosen.apiKey);
    this.apiKey = chosen.apiKey;
  }

  /**
   * The primary runtime sending `key` (never the stored login's renewal). The endpoint stays the
   * runtime's: an entry's `base_url` is the catalog default, not the endpoint this session uses.
   */
  private transportFor(runtime: ResolvedRuntime, _entry: PoolEntry, key: string): Promise<Transport> {
    return createTransport({ ...runtime, login: undefined, apiKey: key }, this.options.transportOptions);
  }

  /**
   * After a 401 on an OAuth pool entry: its renewed bearer (once per token), or undefined when it
   * cannot be renewed (then it is benched and the pool rotates like a key).
   */
  private async renewedEntry(
    runtime: ResolvedRuntime,
    failure: ClassifiedError,
  ): Promise<Transport | undefined> {
    const entry = this.entry;
    const stale = this.apiKey;
    if (failure.status !== 401 || !entry || entry.authType !== AUTH_TYPE_OAUTH || !stale) return undefined;
    if (this.renewedTokens.has(stale)) return undefined;
    this.renewedTokens.add(stale);
    let token: string;
    try {
      token = await (this.options.refreshOAuthEntry ?? this.defaultRefresh)(entry, stale);
    } catch (error) {
      this.warn(`Could not renew the ${entry.provider} login "${entry.label}": ${(error as Error).message}`);
      return undefined;
    }
    if (!token || token === stale) return undefined;
    this.renewedTokens.add(token);
    this.current = await this.transportFor(runtime, entry, token);
    this.apiKey = token;
    this.entry = this.pool?.entries().find((e) => e.id === entry.id) ?? entry;
    return this.current;
  }

  private readonly defaultRefresh = async (entry: PoolEntry, stale: string): Promise<string> => {
    const [{ refreshPoolEntry }, { defaultOAuthDeps }] = await Promise.all([
      import("../ai/oauth/pool-refresh.js"),
      import("../ai/oauth/types.js"),
    ]);
    return refreshPoolEntry({
      home: this.options.home,
      provider: entry.provider,
      entryId: entry.id,
      stale,
      deps: defaultOAuthDeps(this.options.env),
    });
  };

  /** The primary transport now (after any rotation or rebuild). */
  get transport(): Transport {
    return this.current;
  }

  /** The fallback list read from the configuration. */
  get fallbacks(): readonly FallbackEntry[] {
    return this.chain;
  }

  async rotateCredential(failure: ClassifiedError): Promise<Transport | undefined> {
    const pool = this.pool;
    const runtime = this.options.runtime;
    if (!runtime) return undefined;
    const renewed = (await this.renewedLogin(runtime)) ?? (await this.renewedEntry(runtime, failure));
    if (renewed) return renewed;
    if (!pool) return undefined;
    const usable = pool.entries().filter((e) => e.usable && e.apiKey !== "");
    // A session on a stored login (not itself a pool entry) may move to any usable entry.
    if (!usable.some((e) => e.apiKey !== this.apiKey)) return undefined;
    const failed = usable.find((e) => e.apiKey === this.apiKey);
    if (failed) {
      await pool.markExhausted(failed, {
        status: failure.status,
        resetAt: failure.resetAt,
        retryAfterMs: failure.retryAfterMs,
        reason: failure.reason,
        message: failure.message,
      });
    }
    const next = failed ? pool.nextAfterFailure(failed) : pool.select();
    if (!next || next.apiKey === "" || next.apiKey === this.apiKey) return undefined;
    this.current = await this.transportFor(runtime, next, next.apiKey);
    this.apiKey = next.apiKey;
    this.entry = next;
    return this.current;
  }

  /**
   * A transport with Claude Code's current token when the session runs on that login and Claude
   * Code has renewed it since (the file changed under us); undefined otherwise.
   */
  private async renewedLogin(runtime: ResolvedRuntime): Promise<Transport | undefined> {
    if (runtime.provider !== "anthropic" || !this.apiKey) return undefined;
    const home = this.options.env["HOME"];
    if (!home) return undefined;
    const stored = readClaudeCodeToken(home, 0);
    if (!stored || stored.accessToken === this.apiKey) return undefined;
    // Only a key that itself came from the file is replaced by the file's newer one.
    if (this.loginToken !== this.apiKey) return undefined;
    const fresh = readClaudeCodeToken(home);
    if (!fresh) return undefined;
    this.current = await createTransport(
      { ...runtime, apiKey: fresh.accessToken },
      this.options.transportOptions,
    );
    this.apiKey = fresh.accessToken;
    this.loginToken = fresh.accessToken;
    return this.current;
  }

  async rebuildTransport(): Promise<Transport | undefined> {
    const runtime = this.options.runtime;
    if (!runtime) return undefined;
    this.current = await createTransport({ ...runtime, apiKey: this.apiKey }, this.options.transportOptions);
    return this.current;
  }

  async fallback(index: number): Promise<ModelRoute | Error | undefined> {
    const entry = this.chain[index];
    if (!entry) return undefined;
    const label = `${entry.provider} (${entry.model})`;
    try {
      const { config } = this.options;
      // config.yaml's key belongs to its own endpoint: never send it to a different base URL.
      const otherUrl = entry.baseUrl !== undefined && entry.baseUrl !== config.model.base_url;
      const apiKey = entry.apiKey ?? (otherUrl ? "" : config.model.api_key);
      const runtime = resolveRuntime({
        flags: { provider: entry.provider, model: entry.model, baseUrl: entry.baseUrl },
        config: { ...config, model: { ...config.model, api_key: apiKey } },
        env: this.options.env,
        home: this.options.home,
      });
      const resolved = entry.apiKey ? { ...runtime, apiKey: entry.apiKey } : runtime;
      const transport = await createTransport(resolved, this.options.transportOptions);
      return {
        transport,
        model: resolved.model,
        label: `${resolved.provider} (${resolved.model})`,
        provider: resolved.provider,
        baseUrl: resolved.baseUrl,
      };
    } catch (error) {
      const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
      return new Error(`fallback ${label} is not usable: ${why}`);
    }
  }

  async succeeded(): Promise<void> {
    if (this.pool && this.entry) await this.pool.markSuccess(this.entry);
  }

  /** Writes the pool's pending request counts (on close). */
  async flush(): Promise<void> {
    await this.pool?.flush();
  }
}
