/**
 * What the user is told about a failed model call: the line shown before each retry wait ("rate
 * limited by openrouter (429); retrying in 1.6 s (attempt 2 of 4)"), and the advice when the call
 * has failed for good (what failed, why retrying stopped, what to do). Pure text from the
 * classifier's verdict and the retry plan.
 */
import { BLOCKED_PORT, type ClassifiedError, type FailoverReason } from "./error-types.js";
import { findProvider, PROVIDERS } from "./providers.js";

export interface RetryNoticeContext {
  /**
   * Who answered, as the user knows it: a provider id (`openrouter`) or, for a custom endpoint,
   * its host (`127.0.0.1:8080`). Absent: "the provider".
   */
  provider?: string;
  now?: number;
}

const SHRINK = "compress the conversation with /compress or start a new one with /new";
const TRANSIENT = "usually temporary; try again shortly or switch model with /model";
const HINTS: Partial<Record<FailoverReason, string>> = {
  auth_permanent:
    "this key or account may not use this model or endpoint; check its permissions or use /model",
  billing: "add credits or check the plan's billing, or switch provider with /model",
  overloaded: TRANSIENT,
  server_error: TRANSIENT,
  timeout: "check the network connection and that the base URL is reachable",
  context_overflow: SHRINK,
  payload_too_large: SHRINK,
  long_context_tier: "compress below 200k tokens with /compress, or enable extra usage for the account",
  image_too_large: "attach a smaller or downscaled image",
  max_tokens_too_large: "lower model.max_tokens in config.yaml",
  model_not_found:
    "check the model name (model.default in config.yaml, or /model) and that the provider serves it",
  provider_policy_blocked: "choose another model or provider with /model",
  content_filter: "rephrase the request or use another model",
  thinking_signature: "start a new session with /new if this repeats",
  invalid_encrypted_content: "start a new session with /new if this repeats",
  format_error: "the model or provider may not support an option in this request",
};

/** The first API-key variable of the provider named, or of the catalog entry serving `baseUrl`. */
function keyVariable(provider: string | undefined, baseUrl: string | undefined): string | undefined {
  const host = (url: string) => /^https?:\/\/([^/]+)/.exec(url)?.[1];
  const wanted = host(baseUrl ?? "");
  const profile = provider
    ? findProvider(provider)
    : PROVIDERS.find((p) => wanted !== undefined && host(p.baseUrl) === wanted);
  return profile?.apiKeyEnv[0];
}

/** "1.6 s" below 10 s, "12 s", "3 min", "2 h". */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  const whole = Math.ceil(s);
  return whole < 120
    ? `${whole} s`
    : whole < 7200
      ? `${Math.round(whole / 60)} min`
      : `${Math.round(whole / 3600)} h`;
}

/** How to start the local server that refused, guessed from the provider and port. */
function startHint(provider: string | undefined, baseUrl: string | undefined): string {
  const port = (() => {
    try {
      return baseUrl ? new URL(baseUrl).port : "";
    } catch {
      return "";
    }
  })();
  const p = (provider ?? "").toLowerCase();
  const start =
    p.includes("ollama") || port === "11434"
      ? "`ollama serve`"
      : p.includes("lm") || port === "1234"
        ? "LM Studio's server (`lms server start`)"
        : p.includes("vllm") || port === "8000"
          ? `\`vllm serve MODEL${port ? ` --port ${port}` : ""}\``
          : `\`llama-server -m MODEL.gguf${port ? ` --port ${port}` : ""}\` (or your server)`;
  return `is the server running? Start it with ${start}, or check model.base_url in config.yaml`;
}

/**
 * What the user can do about a failure, or undefined when there is nothing specific
 * ("check OPENROUTER_API_KEY in ~/.hermes/.env", "the limit resets in about 5 min").
 */
export function failureHint(
  classified: ClassifiedError,
  context: RetryNoticeContext = {},
): string | undefined {
  const c = classified;
  if (c.hint) return c.hint;
  if (c.reason === "auth" && context.provider === "vertex")
    return "hermes status shows the Google credentials in use; hermes setup model changes them";
  if (c.reason === "auth") {
    const variable = keyVariable(context.provider, c.baseUrl);
    return variable
      ? `check ${variable} in ~/.hermes/.env`
      : "check the provider's API key in ~/.hermes/.env (or model.api_key in config.yaml)";
  }
  if (c.reason === "rate_limit") {
    const wait = waitOf(c, context.now);
    return wait ? `the limit resets in about ${formatWait(wait)}` : "wait a little or lower the request rate";
  }
  if (c.reason === "local_server_down") return startHint(context.provider, c.baseUrl);
  if (c.reason === "host_not_found")
    return "check the host name in model.base_url (config.yaml) or OPENAI_BASE_URL, and your network";
  if (c.reason === "format_error" && c.message.startsWith(BLOCKED_PORT)) return undefined;
  if (
    c.reason === "provider_policy_blocked" &&
    /openrouter/.test(`${context.provider ?? ""} ${c.baseUrl ?? ""}`)
  )
    return "allow more providers at https://openrouter.ai/settings/privacy or choose another model";
  const lowerable =
    c.reason === "billing" || c.reason === "context_overflow" || c.reason === "max_tokens_too_large";
  if (lowerable && c.availableOutputTokens !== undefined)
    return `set model.max_tokens in config.yaml to ${c.availableOutputTokens} or less, or ${HINTS[c.reason]}`;
  return HINTS[c.reason];
}

function waitOf(c: ClassifiedError, now: number = Date.now()): number | undefined {
  if (c.retryAfterMs !== undefined) return Math.max(0, c.retryAfterMs);
  return c.resetAt !== undefined ? Math.max(0, c.resetAt - now) : undefined;
}

/** One line for the user when a model call has failed for good: "the API key was rejected (401): check ...". */
export function failureAdvice(classified: ClassifiedError, context: RetryNoticeContext = {}): string {
  // The error explained itself (an Entra ID chain that found nothing): its advice alone, not
  // "the API key was rejected" for a key that was never sent.
  if (classified.hint) return classified.hint;
  const hint = failureHint(classified, context);
  const what = named(classified, context.provider);
  return hint ? `${what}: ${hint}` : what;
}

/** The classifier's summary with "the provider" replaced by who it was, where the wording allows. */
function named(c: ClassifiedError, provider: string | undefined): string {
  if (!provider) return c.message;
  const status = c.status !== undefined ? ` (${c.status})` : "";
  switch (c.reason) {
    case "rate_limit":
      return `rate limited by ${provider}${status}`;
    case "overloaded":
      return `${provider} is overloaded${status}`;
    case "server_error":
      return `${provider} had a server error${status}`;
    case "timeout":
      return c.retryLimit === 1
        ? `the connection to ${provider} dropped`
        : `the connection to ${provider} failed or timed out`;
    default:
      return c.message;
  }
}

/** The provider's own words, clipped, when they add something (never our own transport text). */
function providerWords(c: ClassifiedError): string {
  if (c.status === undefined || !c.detail) return "";
  const text = c.detail.replace(/[.\s]+$/, "");
  return `: ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`;
}

/**
 * The line shown before a retry wait: "rate limited by openrouter (429): slow down; retrying in
 * 1.6 s (attempt 2 of 4)".
 */
export function retryNotice(
  classified: ClassifiedError,
  plan: { delayMs: number; attempt: number; attempts: number },
  context: RetryNoticeContext = {},
): string {
  return `${named(classified, context.provider)}${providerWords(classified)}; retrying in ${formatWait(plan.delayMs)} (attempt ${plan.attempt} of ${plan.attempts})`;
}

/**
 * The advice when retrying stopped: what failed, why no more retries were made, and what to do.
 * `plan` is the retry plan that said no; `budgetMs` the call's waiting budget.
 */
export function giveUpNotice(
  classified: ClassifiedError,
  plan: { why: string; attempts: number; waitMs?: number; remainingMs?: number },
  context: RetryNoticeContext & { budgetMs?: number; waitedMs?: number } = {},
): string {
  const what = named(classified, context.provider);
  const hint = failureHint(classified, context);
  let why = "";
  if (plan.why === "wait_too_long" && plan.waitMs !== undefined) {
    const left = plan.remainingMs ?? 0;
    why = `; it asks to wait ${formatWait(plan.waitMs)}, more than the ${formatWait(left)} left for retrying this call, so hermes did not wait`;
    const after = `try again in about ${formatWait(plan.waitMs)}, or add fallback_providers to config.yaml`;
    return `${what}${why}: ${after}`;
  }
  if (plan.why === "budget_spent")
    why = `; gave up after ${plan.attempts} attempts and ${formatWait(context.waitedMs ?? context.budgetMs ?? 0)} of waiting`;
  else if (plan.why === "exhausted" && plan.attempts > 1) why = `; failed ${plan.attempts} times`;
  return hint ? `${what}${why}: ${hint}` : `${what}${why}`;
}
