/**
 * Auxiliary models: the side LLM calls (compression summaries, titles, web extraction, vision,
 * smart approvals) that should not spend the main model's budget. `auxiliary.<task>` in config.yaml picks one
 * explicitly (`provider`, `model`, `base_url`, `api_key`); otherwise the "auto" chain tries a cheap
 * model on OpenRouter, then on Nous Portal, then the main runtime as the last resort. A billing
 * (402), auth or missing-model error on one entry falls through to the next; a retryable error is
 * retried once on the same entry first.
 */
import type { HermesConfig } from "../config/defaults.js";
import { classifyApiError } from "./error-classifier.js";
import { createTransport, type Env, type ResolvedRuntime, resolveRuntime } from "./resolve.js";
import { type Message, messageText, type Transport, type Usage } from "./types.js";

export type AuxiliaryTask =
  | "compression"
  | "title_generation"
  | "web_extract"
  | "vision"
  | "approval"
  | "background_review"
  | "curator"
  | "moa_reference"
  | "moa_aggregator";

/** Cheap, capable models for the auto chain (what Python Hermes defaults to). */
export const AUX_OPENROUTER_MODEL = "google/gemini-3-flash-preview";
export const AUX_NOUS_MODEL = "google/gemini-3-flash-preview";

/** Seconds, per task, as Python Hermes sets them (`auxiliary.<task>.timeout` overrides). */
const DEFAULT_TIMEOUT_S: Record<AuxiliaryTask, number> = {
  compression: 120,
  title_generation: 30,
  web_extract: 360,
  vision: 120,
  approval: 30,
  background_review: 120,
  curator: 600,
  moa_reference: 900,
  moa_aggregator: 900,
};

export interface AuxiliaryRuntime extends ResolvedRuntime {
  /** Where this entry came from: `auxiliary.<task>`, `auto:openrouter`, `auto:nous`, `main`. */
  source: string;
  timeoutMs: number;
}

interface AuxTaskConfig {
  provider: string | undefined;
  model: string | undefined;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  timeoutS: number | undefined;
}

function str(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

function taskConfig(config: HermesConfig, task: AuxiliaryTask): AuxTaskConfig {
  const aux = config["auxiliary"];
  const section = aux && typeof aux === "object" ? (aux as Record<string, unknown>)[task] : undefined;
  const rec = section && typeof section === "object" ? (section as Record<string, unknown>) : {};
  const timeout = rec["timeout"];
  return {
    provider: str(rec["provider"]),
    model: str(rec["model"]),
    baseUrl: str(rec["base_url"]),
    apiKey: str(rec["api_key"]),
    timeoutS: typeof timeout === "number" && timeout > 0 ? timeout : undefined,
  };
}

export interface AuxiliaryInput {
  config: HermesConfig;
  env: Env;
  main: ResolvedRuntime;
  /** The active home, whose OAuth logins an auxiliary provider may use (see `resolveRuntime`). */
  home: string | undefined;
}

/** Resolves one provider choice the way `model.*` in config.yaml would be resolved; undefined when unusable. */
function resolveChoice(
  config: HermesConfig,
  env: Env,
  home: string | undefined,
  choice: {
    provider?: string | undefined;
    model?: string | undefined;
    baseUrl?: string | undefined;
    apiKey?: string | undefined;
  },
): ResolvedRuntime | undefined {
  try {
    return resolveRuntime({
      flags: {},
      config: {
        ...config,
        model: {
          ...config.model,
          provider: choice.provider ?? (choice.baseUrl ? "custom" : ""),
          base_url: choice.baseUrl ?? "",
          api_key: choice.apiKey ?? "",
          default: choice.model ?? "",
          api_mode: "",
        },
      },
      env,
      home,
    });
  } catch {
    return undefined;
  }
}

/**
 * The ordered runtimes to try for a task. Explicit `auxiliary.<task>` (provider `main` means the
 * main runtime, optionally with another model) comes first, then the main runtime. With provider
 * `auto` (or none): OpenRouter when OPENROUTER_API_KEY is set, Nous when NOUS_API_KEY is set, then
 * the main runtime. Entries identical to an earlier one are dropped.
 */
export function resolveAuxiliaryChain(task: AuxiliaryTask, input: AuxiliaryInput): AuxiliaryRuntime[] {
  const { config, env, main, home } = input;
  const tc = taskConfig(config, task);
  const timeoutMs = (tc.timeoutS ?? DEFAULT_TIMEOUT_S[task]) * 1000;
  const chain: AuxiliaryRuntime[] = [];
  const push = (runtime: ResolvedRuntime | undefined, source: string) => {
    if (!runtime) return;
    const dup = chain.some(
      (r) => r.provider === runtime.provider && r.model === runtime.model && r.baseUrl === runtime.baseUrl,
    );
    if (!dup) chain.push({ ...runtime, source, timeoutMs });
  };
  const provider = tc.provider?.toLowerCase();
  const explicit = (provider !== undefined && provider !== "auto") || tc.baseUrl !== undefined;
  if (explicit) {
    if (provider === "main") {
      push(
        { ...main, model: tc.model ?? main.model, ...(tc.apiKey ? { apiKey: tc.apiKey } : {}) },
        `auxiliary.${task}`,
      );
    } else {
      push(
        resolveChoice(config, env, home, {
          provider: tc.provider,
          model: tc.model,
          baseUrl: tc.baseUrl,
          apiKey: tc.apiKey,
        }),
        `auxiliary.${task}`,
      );
    }
  } else {
    if (str(env["OPENROUTER_API_KEY"]))
      push(
        resolveChoice(config, env, home, { provider: "openrouter", model: tc.model ?? AUX_OPENROUTER_MODEL }),
        "auto:openrouter",
      );
    if (str(env["NOUS_API_KEY"]))
      push(
        resolveChoice(config, env, home, { provider: "nous", model: tc.model ?? AUX_NOUS_MODEL }),
        "auto:nous",
      );
  }
  push(main, "main");
  return chain;
}

/**
 * One explicit route for a task (a mixture-of-agents reference or aggregator model), resolved the
 * way `auxiliary.<task>` would be, with the task's timeout. Provider `main` is the main runtime with
 * the route's model. Undefined when the route cannot be used (an unknown provider, a missing key):
 * callers report it as skipped rather than falling back to another model.
 */
export function resolveAuxiliaryRoute(
  task: AuxiliaryTask,
  route: { provider?: string; model?: string; baseUrl?: string; apiKey?: string },
  input: AuxiliaryInput,
): AuxiliaryRuntime | undefined {
  const { config, env, main, home } = input;
  const timeoutMs = (taskConfig(config, task).timeoutS ?? DEFAULT_TIMEOUT_S[task]) * 1000;
  if (route.provider?.toLowerCase() === "main") {
    if (!main.provider) return undefined;
    return {
      ...main,
      model: route.model ?? main.model,
      ...(route.apiKey ? { apiKey: route.apiKey } : {}),
      source: `auxiliary.${task}`,
      timeoutMs,
    };
  }
  const runtime = resolveChoice(config, env, home, route);
  return runtime ? { ...runtime, source: `auxiliary.${task}`, timeoutMs } : undefined;
}

/** The first runtime of the chain: what a task will try first. */
export function resolveAuxiliary(task: AuxiliaryTask, input: AuxiliaryInput): AuxiliaryRuntime {
  const first = resolveAuxiliaryChain(task, input)[0];
  // The chain always ends with the main runtime, so it is never empty.
  return first ?? { ...input.main, source: "main", timeoutMs: DEFAULT_TIMEOUT_S[task] * 1000 };
}

/** Every entry of the chain failed; `attempts` says what each one did. */
export class AuxiliaryError extends Error {
  readonly attempts: readonly { source: string; model: string; error: string }[];
  constructor(message: string, attempts: readonly { source: string; model: string; error: string }[]) {
    super(message);
    this.name = "AuxiliaryError";
    this.attempts = attempts;
  }
}

class EmptyResponseError extends Error {
  constructor() {
    super("the auxiliary model returned an empty response");
    this.name = "EmptyResponseError";
  }
}

export interface AuxiliaryCompleteOptions {
  signal?: AbortSignal | undefined;
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  /** Builds the transport for a runtime (tests inject a scripted one). Default: `createTransport`. */
  transportFor?: ((runtime: AuxiliaryRuntime) => Promise<Transport>) | undefined;
  /** Wait before the one retry. Default: 1 s, or the provider's Retry-After when shorter than 10 s. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

export interface AuxiliaryResult {
  text: string;
  runtime: AuxiliaryRuntime;
  usage: Usage | undefined;
}

async function collect(
  transport: Transport,
  runtime: AuxiliaryRuntime,
  messages: Message[],
  options: AuxiliaryCompleteOptions,
): Promise<{ text: string; usage: Usage | undefined }> {
  let text = "";
  let finalText: string | undefined;
  let usage: Usage | undefined;
  const request = {
    model: runtime.model,
    messages,
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
  };
  for await (const event of transport.stream(request, options.signal)) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "usage") usage = event.usage;
    else if (event.type === "finish") finalText = messageText(event.message);
  }
  const result = (finalText || text).trim();
  if (!result) throw new EmptyResponseError();
  return { text: result, usage };
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One completion from the first chain entry that answers. Per entry: a retryable error (or an
 * empty answer) is retried once; billing, auth, missing-model and exhausted retryable errors move
 * on to the next entry; anything else (a bad request, an overflow) is thrown as is. An aborted
 * signal stops at once. Throws `AuxiliaryError` when every entry failed.
 */
export async function auxiliaryComplete(
  chain: AuxiliaryRuntime | readonly AuxiliaryRuntime[],
  messages: Message[],
  options: AuxiliaryCompleteOptions = {},
): Promise<AuxiliaryResult> {
  const runtimes = Array.isArray(chain)
    ? (chain as readonly AuxiliaryRuntime[])
    : [chain as AuxiliaryRuntime];
  const transportFor =
    options.transportFor ?? ((r: AuxiliaryRuntime) => createTransport(r, { timeoutMs: r.timeoutMs }));
  const sleep = options.sleep ?? defaultSleep;
  const attempts: { source: string; model: string; error: string }[] = [];
  for (const runtime of runtimes) {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error("aborted");
      try {
        const transport = await transportFor(runtime);
        const { text, usage } = await collect(transport, runtime, messages, options);
        return { text, runtime, usage };
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const empty = error instanceof EmptyResponseError;
        const classified = empty
          ? undefined
          : classifyApiError(error, { provider: runtime.provider, model: runtime.model });
        attempts.push({
          source: runtime.source,
          model: runtime.model,
          error: empty ? (error as Error).message : (classified?.message ?? String(error)),
        });
        const retryable = empty || classified?.retryable === true;
        if (retryable && attempt === 0) {
          const wait = classified?.retryAfterMs;
          await sleep(wait !== undefined && wait < 10_000 ? wait : 1000);
          continue;
        }
        const fallThrough =
          retryable ||
          classified?.reason === "billing" ||
          classified?.reason === "auth" ||
          classified?.reason === "auth_permanent" ||
          classified?.reason === "model_not_found" ||
          classified?.reason === "rate_limit" ||
          classified?.shouldFallback === true;
        if (!fallThrough) throw error;
        break;
      }
    }
  }
  const last = attempts[attempts.length - 1];
  throw new AuxiliaryError(
    `auxiliary model call failed${last ? `: ${last.error}` : ""} (tried ${attempts.map((a) => `${a.source} ${a.model}`).join(", ")})`,
    attempts,
  );
}
