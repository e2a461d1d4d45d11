/**
 * What an `AIAgent` fixes on its first turn and keeps for the session: the provider route and its
 * recovery, the model, the tool schemas and the system prompt (byte-stable, so a provider's prompt
 * cache keeps hitting), the context window and the summariser compression uses.
 */
import { resolveAuxiliaryChain } from "../ai/auxiliary.js";
import { processContextCheckMemo } from "../ai/context-checks.js";
import { fileContextLengthStore } from "../ai/context-length.js";
import {
  createTransport,
  type ResolvedRuntime,
  resolveRuntime,
  type TransportOptions,
} from "../ai/resolve.js";
import type { ToolSchema } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { AIAgentOptions } from "./agent-types.js";
import { mayDelegate } from "./delegation.js";
import { buildSessionPrompt } from "./prompt/session-prompt.js";
import { ProviderRecovery } from "./recovery.js";
import { makeSummarizer, resolveContextLength, type Summarize } from "./summarizer.js";

/** The session's frozen state. */
export interface Frozen {
  /** Owns the primary transport (rotated or rebuilt after failures) and the fallback list. */
  recovery: ProviderRecovery;
  model: string;
  tools: ToolSchema[];
  systemPrompt: string;
  /** Problems met while building the prompt (blocked or unreadable files), told once. */
  warnings: string[];
  /** The model's context window, the basis of the compression threshold (lowered when learnt). */
  contextLength: number;
  /** The primary endpoint (context-window cache key); undefined with a ready transport. */
  baseUrl: string | undefined;
  /** The resolved provider, which subagents reuse; undefined with a ready transport. */
  runtime: ResolvedRuntime | undefined;
  /** Summarises a compression prompt with the auxiliary model (the main model as last resort). */
  summarize: Summarize;
}

/** What freezing a session reads from its agent. */
export interface FreezeInput {
  options: AIAgentOptions;
  config: HermesConfig;
  home: string;
  cwd: string;
  registry: ToolRegistry;
  /** Delegation depth: at the limit, `delegate_task` is not offered. */
  depth: number;
  /** Where the terminal and file tools act, for the system prompt (`describeEnvironment`). */
  environment?: string;
}

/**
 * Resolves the provider (unless a transport is given), builds the system prompt and tool list,
 * and sizes the context window. Rejects when the provider cannot be resolved or reached for setup.
 */
export async function freezeSession(input: FreezeInput): Promise<Frozen> {
  const { options, config, home, cwd, registry, depth } = input;
  const env = options.env ?? process.env;
  let transport = options.transport;
  let model = options.model ?? config.model.default;
  let runtime: ResolvedRuntime | undefined;
  const routing = config["provider_routing"];
  const bedrock = config["bedrock"];
  const transportOptions: TransportOptions = {
    cacheTtl: config.prompt_caching.cache_ttl,
    stallTimeoutMs: Math.max(0, Number(config.agent.stream_stall_timeout ?? 60) || 0) * 1000,
    ...(options.requestTimeoutMs ? { timeoutMs: options.requestTimeoutMs } : {}),
    ...(routing && typeof routing === "object"
      ? { providerRouting: routing as Record<string, unknown> }
      : {}),
    env,
    cwd,
    ...(bedrock && typeof bedrock === "object" ? { bedrock: bedrock as Record<string, unknown> } : {}),
  };
  if (!transport) {
    runtime =
      options.resolved ??
      resolveRuntime({
        flags: {
          ...(options.model ? { model: options.model } : {}),
          ...(options.provider ? { provider: options.provider } : {}),
          ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
        },
        config: options.apiKey ? { ...config, model: { ...config.model, api_key: options.apiKey } } : config,
        env,
        home,
      });
    transport = await createTransport(runtime, transportOptions);
    model = runtime.model;
  }
  const recovery = new ProviderRecovery({
    home: home,
    config: config,
    env,
    transportOptions,
    runtime,
    transport,
    model: model || "default",
    // A ready transport or an explicit key: there is no pool to rotate through.
    usePool: options.transport === undefined && options.apiKey === undefined,
  });
  await recovery.init();
  if (options.toolsReady) await options.toolsReady.catch(() => undefined);
  const session = await buildSessionPrompt({
    home: home,
    config: config,
    cwd,
    env,
    ...(options.toolsets ? { toolsets: options.toolsets } : {}),
    platform: options.platform ?? "cli",
    registry: registry,
    ...(model ? { model } : {}),
    ...(options.personality !== undefined ? { personality: options.personality } : {}),
    ...(options.skipContextFiles ? { skipContextFiles: true } : {}),
    ...(input.environment ? { environment: input.environment } : {}),
    ...(options.skipMemory ? { skipMemory: true } : {}),
  });
  // At the delegation depth limit the tool could only refuse, so it is not offered.
  const tools = mayDelegate(config, depth)
    ? session.tools
    : session.tools.filter((t) => t.function.name !== "delegate_task");
  const systemPrompt = options.systemPrompt ?? session.text;
  const warnings = options.systemPrompt === undefined ? session.warnings : [];
  const window = resolveContextLength({
    model: model || "default",
    config: config,
    runtime,
    store: fileContextLengthStore(home),
    checks: processContextCheckMemo(home),
  });
  const contextLength = window.now;
  const auxChain = runtime
    ? resolveAuxiliaryChain("compression", { config: config, env, main: runtime, home })
    : [];
  const summaryModel = model || "default";
  const summarize = makeSummarizer({
    chain: auxChain,
    transport: () => recovery.transport,
    model: summaryModel,
  });
  const frozen: Frozen = {
    recovery,
    model: summaryModel,
    tools,
    systemPrompt,
    warnings,
    contextLength,
    baseUrl: runtime?.baseUrl,
    runtime,
    summarize,
  };
  // The endpoint's own word on the window arrives later; compression plans with it from then on.
  void window.stated?.then((tokens) => {
    if (tokens !== undefined) frozen.contextLength = tokens;
  });
  return frozen;
}
