/**
 * The external memory provider contract (`memory.provider` in config.yaml), after Python Hermes's
 * `MemoryProvider` ABC (agent/memory_provider.py): one provider at a time, next to the built-in
 * MEMORY.md/USER.md store, never instead of it.
 *
 * Lifecycle, as the agent drives it (agent/memory-provider-hook.ts):
 *   status()   — without network: configured? credentials? (`hermes memory status`, activation)
 *   tools      — static tool definitions, offered when the session has the `memory` tool
 *   prefetch() — before each user turn: text to add to THAT turn's user message (fenced by the
 *                caller, never the system prompt, so the prompt cache keeps hitting)
 *   syncTurn() — after each completed turn: the clean user text and the answer
 *   close()    — flush what is queued, bounded in time
 *
 * A provider never throws into a turn: the hook turns every failure into one warning and the
 * turn goes on without recall.
 */

/** What `hermes memory status` shows and what decides whether the provider runs. */
export interface ProviderStatus {
  /** The provider name (`honcho`). */
  provider: string;
  /** True when it will run: configured, enabled, and holding what it needs to connect. */
  active: boolean;
  /** One line for the user: why it is off, or where it connects. Never contains a secret. */
  detail: string;
  /** Settings worth showing (`workspace`, `peer`, `config file`...), secrets masked. */
  settings?: Record<string, string>;
}

/** Where a turn happens, for providers that map sessions (Honcho's `sessionStrategy`). */
export interface ProviderSessionInfo {
  /** The Hermes session id. */
  sessionId: string;
  /** The working directory of the session. */
  cwd: string;
  /** `cli`, `telegram`, `cron`... */
  platform: string;
  /** The chat user (gateway), when there is one. */
  userId?: string;
}

/** A tool the provider adds (plain data: the agent adapts it to its registry). */
export interface ProviderTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /**
   * Runs the tool for the session; returns the text the model sees. Throws with a message the
   * model can act on (the registry turns it into an error result).
   */
  run(args: Record<string, unknown>, session: ProviderSessionInfo, signal: AbortSignal): Promise<string>;
}

/** One completed exchange as the provider stores it: the user's own words, not injected context. */
export interface ProviderTurn {
  user: string;
  assistant: string;
}

export interface MemoryProvider {
  readonly name: string;
  /** Cheap, no network: see {@link ProviderStatus}. */
  status(): ProviderStatus;
  /** Tool definitions; empty when the provider is context-only (Honcho's `recallMode: context`). */
  readonly tools: readonly ProviderTool[];
  /**
   * Recall for the coming turn: plain text (the caller fences it), or "" for nothing. May reach
   * the network; honours `signal` (the caller's time limit). Throws on failure.
   */
  prefetch(query: string, session: ProviderSessionInfo, signal: AbortSignal): Promise<string>;
  /** Stores a completed turn. Throws on failure; the caller does not wait for it in the turn. */
  syncTurn(turn: ProviderTurn, session: ProviderSessionInfo, signal: AbortSignal): Promise<void>;
  /** How long a turn waits for {@link prefetch}, in ms (the provider's own request timeout). */
  readonly timeoutMs?: number;
  /** Releases connections; never throws. */
  close(): Promise<void>;
}

/**
 * A provider as the registry knows it: its name, what `hermes memory setup` asks, and how to load
 * it. Loading must not import the vendor SDK (the provider imports it on first network use).
 */
export interface ProviderFactory {
  name: string;
  /** One line for `hermes memory setup` listings. */
  description: string;
  create(context: ProviderContext): MemoryProvider;
}

export interface ProviderContext {
  /** HERMES_HOME. */
  home: string;
  /** The environment (with `<home>/.env` merged in). */
  env: Readonly<Record<string, string | undefined>>;
  /** The active profile name, when one is used (`-p coder` → `coder`). */
  profile?: string;
}
