/**
 * The external memory provider (`memory.provider`) as a conversation uses it: recall before each
 * user turn, appended to that turn's user message inside a `<memory-context>` fence (the message
 * is stored as sent, so every later request repeats the same bytes and the prompt cache keeps
 * hitting; the system prompt is never touched), the finished turn synced in the background, and
 * the provider's tools in the session's registry next to `memory`.
 *
 * Nothing here fails a turn: a provider that is off, slow or failing costs the turn its recall and
 * one warning, never the answer.
 */

import type { Message } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import { resolveHome } from "../config/home.js";
import {
  buildMemoryContextBlock,
  isTrivialPrompt,
  stripMemoryContext,
  withMemoryContext,
} from "../knowledge/memory/providers/context-block.js";
import { selectMemoryProvider } from "../knowledge/memory/providers/registry.js";
import type {
  MemoryProvider,
  ProviderSessionInfo,
  ProviderStatus,
} from "../knowledge/memory/providers/types.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import type { AnyTool, ToolRegistry } from "../tools/registry.js";
import { processRedactor, type Redactor } from "../util/redact.js";

/** The toolset of provider tools; offered whenever the session offers the `memory` tool. */
export const MEMORY_PROVIDER_TOOLSET = "memory-provider";

/** How long the turn waits for recall when the provider states no limit of its own. */
const DEFAULT_RECALL_BUDGET_MS = 5_000;
/** How long closing a conversation waits for syncs still in flight. */
const CLOSE_FLUSH_MS = 5_000;

/** What `AIAgent` calls around a user turn (see `AIAgentOptions.memory`). */
export interface TurnMemory {
  /**
   * The fenced block to append to the user's message ("" for none). Never throws; bounded by the
   * provider's time limit and by `signal` (an interrupt). Problems go to `warn`.
   */
  recall(
    userText: string,
    sessionId: string,
    signal: AbortSignal,
    warn: (message: string) => void,
  ): Promise<string>;
  /** Tells the provider about a completed turn; returns at once (the sync runs in the background). */
  remember(userText: string, answer: string, sessionId: string): void;
}

export interface MemoryHookOptions {
  config: HermesConfig;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  platform: string;
  userId?: string;
  profile?: string;
  /** Warnings outside a turn (background sync failures, configuration problems). */
  onWarning?: (message: string) => void;
  /** Default: the process-wide redactor. Synced text passes it before it leaves the process. */
  redactor?: Redactor;
  /** Tests: a provider instead of the one config.yaml selects. */
  provider?: MemoryProvider;
  /** Recall budget in ms (default: the provider's `timeoutMs`, else 5 s). */
  recallBudgetMs?: number;
}

/**
 * One conversation's link to its memory provider. `openMemoryHook` returns undefined when
 * config.yaml selects none, or the selected provider is off (its status line says why: see
 * `hermes memory status`); an unknown provider name is reported once through `onWarning`.
 */
export class MemoryHook implements TurnMemory {
  private readonly pending = new Set<Promise<void>>();
  private readonly redactor: Redactor;

  constructor(
    readonly provider: MemoryProvider,
    private readonly options: MemoryHookOptions,
  ) {
    this.redactor = options.redactor ?? processRedactor();
  }

  status(): ProviderStatus {
    return this.provider.status();
  }

  private info(sessionId: string): ProviderSessionInfo {
    return {
      sessionId,
      cwd: this.options.cwd,
      platform: this.options.platform,
      ...(this.options.userId ? { userId: this.options.userId } : {}),
    };
  }

  async recall(
    userText: string,
    sessionId: string,
    signal: AbortSignal,
    warn: (message: string) => void,
  ): Promise<string> {
    const query = stripMemoryContext(userText);
    if (isTrivialPrompt(query)) return "";
    const budget = this.options.recallBudgetMs ?? this.provider.timeoutMs ?? DEFAULT_RECALL_BUDGET_MS;
    const limit = AbortSignal.any([signal, AbortSignal.timeout(budget)]);
    try {
      const text = await this.provider.prefetch(query, this.info(sessionId), limit);
      return buildMemoryContextBlock(text);
    } catch (error) {
      if (signal.aborted) return "";
      const why = limit.aborted ? `no answer within ${Math.round(budget / 100) / 10} s` : describe(error);
      warn(`Memory provider ${this.provider.name}: recall failed (${why}); this turn goes on without it.`);
      return "";
    }
  }

  remember(userText: string, answer: string, sessionId: string): void {
    const turn = {
      user: this.redactor.redact(stripMemoryContext(userText)),
      assistant: this.redactor.redact(answer),
    };
    const run = this.provider
      .syncTurn(turn, this.info(sessionId), AbortSignal.timeout(60_000))
      .catch((error: unknown) => {
        this.options.onWarning?.(
          `Memory provider ${this.provider.name}: the turn was not saved (${describe(error)}).`,
        );
      })
      .finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  /** Settles when syncs in flight are done, or after `timeoutMs`; never throws. */
  async flush(timeoutMs = CLOSE_FLUSH_MS): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.pending]).then(() => undefined), timeout]);
    clearTimeout(timer);
  }

  /** Flushes and releases the provider. */
  async close(): Promise<void> {
    await this.flush();
    await this.provider.close().catch(() => undefined);
  }

  /** Adds the provider's tools to `registry` under {@link MEMORY_PROVIDER_TOOLSET}. */
  registerTools(registry: ToolRegistry): void {
    for (const tool of this.provider.tools) {
      if (registry.has(tool.name) && registry.get(tool.name)?.toolset !== MEMORY_PROVIDER_TOOLSET) continue;
      const definition: AnyTool = {
        name: tool.name,
        toolset: MEMORY_PROVIDER_TOOLSET,
        description: tool.description,
        parameters: tool.parameters,
        parallelSafe: true,
        handler: (args: Record<string, unknown>, ctx) => tool.run(args, this.info(ctx.sessionId), ctx.signal),
      };
      registry.register(definition);
    }
  }
}

/**
 * The hook a conversation uses: `session.memory` when given (false: none), else the one
 * config.yaml selects. When it brings tools they are registered into `session.registry` (a fresh
 * built-in one when there was none); the caller hands the returned registry to its agents.
 */
export function openSessionMemory(
  session: {
    memory?: MemoryHook | false | undefined;
    config?: HermesConfig | undefined;
    home?: string | undefined;
    env?: Record<string, string | undefined> | undefined;
    cwd?: string | undefined;
    platform?: string | undefined;
    registry?: ToolRegistry | undefined;
    skipMemory?: boolean | undefined;
  },
  userId: string | undefined,
  onWarning: (message: string) => void,
): { hook: MemoryHook | undefined; registry: ToolRegistry | undefined } {
  const { memory: given, config, registry } = session;
  if (given === false || (!given && !config)) return { hook: undefined, registry };
  // Cron prompts and runs without memory are not the user talking: they would teach the
  // provider a false picture of the user (upstream skips writes there too).
  if (!given && (session.platform === "cron" || session.skipMemory)) return { hook: undefined, registry };
  const env = session.env ?? process.env;
  const hook =
    given ||
    (config
      ? openMemoryHook({
          config,
          home: session.home ?? resolveHome({ env }),
          env,
          cwd: session.cwd ?? process.cwd(),
          platform: session.platform ?? "cli",
          ...(userId ? { userId } : {}),
          onWarning,
        })
      : undefined);
  if (!hook || hook.provider.tools.length === 0) return { hook, registry };
  const target = registry ?? createBuiltinRegistry();
  hook.registerTools(target);
  return { hook, registry: target };
}

/** See {@link MemoryHook}. Never throws. */
export function openMemoryHook(options: MemoryHookOptions): MemoryHook | undefined {
  let provider = options.provider;
  if (!provider) {
    const selection = selectMemoryProvider(options.config.memory, {
      home: options.home,
      env: options.env,
      ...(options.profile ? { profile: options.profile } : {}),
    });
    if (selection.kind === "unknown") {
      options.onWarning?.(selection.message);
      return undefined;
    }
    if (selection.kind === "none") return undefined;
    provider = selection.provider;
  }
  if (!provider.status().active) return undefined;
  return new MemoryHook(provider, options);
}

/**
 * The user message of a turn: steering notes first (text input only, as before), then the text,
 * then the recalled block. With a provider, a `<memory-context>` block pasted into the input is
 * dropped first (upstream does the same), so recall can never be forged by the user's text.
 * `own` is the user's text without steering or recall: what the provider is told afterwards.
 */
export async function composeUserTurn(
  input: string | Message["content"],
  turn: {
    steering: readonly string[];
    memory: TurnMemory | undefined;
    sessionId: string;
    signal: AbortSignal;
    warn: (message: string) => void;
  },
): Promise<{ content: Message["content"]; own: Message["content"] }> {
  if (typeof input !== "string") return { content: input, own: input };
  const own = turn.memory ? stripMemoryContext(input) : input;
  const recalled = turn.memory ? await turn.memory.recall(own, turn.sessionId, turn.signal, turn.warn) : "";
  const steered = turn.steering.length > 0 ? `${turn.steering.join("\n")}\n\n${own}` : own;
  return { content: withMemoryContext(steered, recalled), own };
}

/** Tool names of the provider toolset in `registry` (what joins a session that offers `memory`). */
export function memoryProviderToolNames(registry: Pick<ToolRegistry, "list">): string[] {
  return registry
    .list()
    .filter((t) => t.toolset === MEMORY_PROVIDER_TOOLSET)
    .map((t) => t.name);
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0]?.slice(0, 300) || "unknown error";
}
