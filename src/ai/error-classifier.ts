/**
 * API error classifier: turns whatever a model call threw (a `ProviderError`, an SDK error, a Node
 * network error) into one `FailoverReason` plus recovery flags. The retry policy (`retry.ts`), and
 * later credential rotation, compression and fallback, act on these flags and never match message
 * strings themselves. Pure: the clock comes in through `context.now`.
 *
 * Order of checks (first match wins): provider-specific shapes (content filters, Anthropic thinking
 * signatures and long-context tier, Gemini key errors, MiniMax/z.ai codes, output-limit errors) →
 * HTTP status refined by the message → structured error codes in the body → message patterns →
 * TLS hiccups (always `timeout`, never `context_overflow`) → a disconnect on a large session
 * (`context_overflow`) → other network failures (`timeout`) → `unknown`.
 */
import {
  AUTH,
  BILLING,
  CODE_REASONS,
  CONTENT_FILTER,
  CONTEXT,
  DEACTIVATED,
  DISCONNECT,
  FORBIDDEN,
  GATEWAY,
  IMAGE,
  MINIMAX_CODES,
  MODEL_NOT_FOUND,
  NETWORK,
  OVERLOADED,
  PAYLOAD,
  POLICY,
  RATE_LIMIT,
  REQUEST_VALIDATION,
  SERVER_ERROR,
  TIMEOUT,
  TLS,
  TRANSIENT,
  USAGE_LIMIT,
  ZAI_CODES,
} from "./error-patterns.js";
import { normaliseHeaders, parseDuration, parseResetHeaders, retryDelayFromText } from "./error-timing.js";
import {
  BLOCKED_PORT,
  type ClassifiedError,
  type ClassifyContext,
  type FailoverReason,
} from "./error-types.js";
import { isLocalOrLanUrl } from "./local-endpoint.js";
import { ProviderError } from "./types.js";

export { parseDuration, parseResetHeaders, parseRetryAfter } from "./error-timing.js";
export type { ClassifiedError, ClassifyContext, FailoverReason, HeaderBag } from "./error-types.js";

type Rec = Record<string, unknown>;

/** A disconnect on a session this large was probably the server refusing its size. */
const LARGE_FRACTION = 0.6;
const LARGE_UNKNOWN_TOKENS = 120_000;
/** A rate-limit wait longer than this makes another credential or a fallback worth it. */
const LONG_RESET_MS = 60_000;

// ── facts pulled out of the error ───────────────────────────────────────

interface Facts {
  status?: number;
  /** Lower-case haystack: error messages, body messages, codes. */
  text: string;
  messages: string[];
  codes: string[];
  vendorCodes: string[];
  headers?: Map<string, string>;
  retryAfterMs?: number;
  network: boolean;
  moderation: boolean;
  nCtx?: number;
  nPrompt?: number;
  baseUrl?: string;
}

const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const has = (text: string, patterns: readonly string[]): boolean => patterns.some((p) => text.includes(p));

function parseJson(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Adds a body's code: HTTP-like numbers become the status, other digits vendor codes. */
function addCode(facts: Facts, value: unknown): void {
  const code = typeof value === "number" ? String(value) : str(value)?.trim().toLowerCase();
  if (!code) return;
  if (!/^\d+$/.test(code)) facts.codes.push(code.split("#").pop() ?? code);
  else if (Number(code) >= 400 && Number(code) < 600) facts.status ??= Number(code);
  else facts.vendorCodes.push(code);
}

/** Collects messages and codes from one error body, in any of the shapes providers send. */
function readBody(raw: unknown, facts: Facts, depth = 0): void {
  let body = typeof raw === "string" ? parseJson(raw) : raw;
  if (Array.isArray(body)) body = body[0];
  if (typeof body === "string") body = { message: body };
  if (!isRec(body) || depth > 2) return;
  const errField = body["error"];
  const err = isRec(errField) ? errField : body;
  for (const m of [err["message"], errField, body["message"], body["detail"], body["Message"], body["msg"]]) {
    const s = str(m);
    if (s && !facts.messages.includes(s)) facts.messages.push(s);
  }
  for (const c of [err["code"], err["type"], err["status"], body["code"], body["__type"], body["error_code"]])
    addCode(facts, c);
  if (body["type"] !== "error") addCode(facts, body["type"]);
  if (isRec(err["innererror"])) addCode(facts, err["innererror"]["code"]);
  const baseResp = body["base_resp"]; // MiniMax
  if (isRec(baseResp) && baseResp["status_code"] !== 0) {
    facts.vendorCodes.push(`minimax:${String(baseResp["status_code"])}`);
    readBody({ message: baseResp["status_msg"] }, facts, depth + 1);
  }
  for (const d of Array.isArray(err["details"]) ? err["details"] : []) {
    if (!isRec(d)) continue; // Gemini: ErrorInfo reason, RetryInfo delay, QuotaFailure ids
    addCode(facts, d["reason"]);
    const delay = str(d["retryDelay"]);
    if (delay) facts.retryAfterMs ??= parseDuration(delay);
    for (const v of Array.isArray(d["violations"]) ? d["violations"] : [])
      if (isRec(v)) addCode(facts, v["quotaId"]);
  }
  facts.nCtx ??= num(err["n_ctx"]);
  facts.nPrompt ??= num(err["n_prompt_tokens"]);
  const metadata = err["metadata"];
  if (isRec(metadata)) {
    // OpenRouter wraps the upstream provider's own error, often as a JSON string.
    if (metadata["raw"] !== undefined) readBody(metadata["raw"], facts, depth + 1);
    if (Array.isArray(metadata["reasons"]) && metadata["flagged_input"] !== undefined)
      facts.moderation = true;
  }
}

function extractFacts(error: unknown): Facts {
  const facts: Facts = {
    text: "",
    messages: [],
    codes: [],
    vendorCodes: [],
    network: false,
    moderation: false,
  };
  const errorMessages: string[] = typeof error === "string" ? [error] : [];
  let current: unknown = error;
  let sawBody = false;
  for (let depth = 0; depth < 6 && isRec(current); depth++) {
    const e = current;
    if (e instanceof ProviderError) {
      facts.status ??= e.status;
      facts.network ||= e.transport;
      facts.retryAfterMs ??= e.retryAfterMs;
      facts.baseUrl ??= e.baseUrl;
      facts.headers ??= normaliseHeaders(e.headers);
    } else {
      const meta = e["$metadata"]; // AWS SDK
      const status =
        num(e["status"]) ?? num(e["statusCode"]) ?? num(isRec(meta) ? meta["httpStatusCode"] : 0);
      if (status !== undefined && status >= 100 && status < 600) facts.status ??= status;
      // Other errors on the cause chain: the SDKs' `headers`, a client's `baseURL`.
      facts.headers ??= normaliseHeaders(e["headers"]);
      facts.baseUrl ??= str(e["baseUrl"]) ?? str(e["baseURL"]);
    }
    // ProviderError keeps the body text; the openai SDK keeps the parsed error on `.error`.
    const body =
      e instanceof ProviderError ? e.body : e["error"] !== undefined ? { error: e["error"] } : undefined;
    if (body !== undefined && !sawBody) {
      readBody(body, facts);
      sawBody = true;
    }
    for (const id of [str(e["code"]), str(e["name"])]) {
      const lower = id?.toLowerCase();
      if (!lower || lower === "error" || lower === "providererror") continue;
      if (NETWORK.has(lower) || lower.startsWith("err_ssl") || lower.startsWith("und_err"))
        facts.network = true;
      facts.codes.push(lower);
    }
    const message = str(e["message"]);
    if (message) errorMessages.push(message);
    const errors = e["errors"]; // AggregateError from a failed connect
    current = e["cause"] ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  facts.text = [...errorMessages, ...facts.messages, ...facts.codes].join(" ").toLowerCase();
  if (facts.messages.length === 0 && errorMessages[0]) facts.messages.push(errorMessages[0]);
  return facts;
}
/** Output tokens the provider says would fit, from the shapes that state it. */
function availableOutput(t: string, facts: Facts): number | undefined {
  const positive = (n: number) => (Number.isFinite(n) && n > 0 ? n : undefined);
  let m = /max_tokens:?\s*(\d+)\s*>\s*(\d+),? which is the maximum/.exec(t); // Anthropic
  if (m) return positive(Number(m[2]));
  m = /exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)/.exec(t); // Anthropic
  if (m) return positive(Number(m[3]) - Number(m[1]));
  m = /can only afford (\d+)/.exec(t); // OpenRouter 402
  if (m) return positive(Number(m[1]));
  const limit = /maximum context length is (\d+)/.exec(t); // OpenAI, vLLM, DeepSeek
  const prompt =
    /\((\d+) in the messages|request has (\d+) input tokens|messages resulted in (\d+) tokens/.exec(t);
  if (limit && prompt) return positive(Number(limit[1]) - Number(prompt[1] ?? prompt[2] ?? prompt[3]));
  if (facts.nCtx !== undefined && facts.nPrompt !== undefined) return positive(facts.nCtx - facts.nPrompt); // llama.cpp
  return undefined;
}

// ── classification ──────────────────────────────────────────────────────

function isLarge(ctx: ClassifyContext, fraction: number, unknownThreshold: number): boolean {
  const tokens = ctx.approxContextTokens ?? 0;
  return ctx.contextLength && ctx.contextLength > 0
    ? tokens >= ctx.contextLength * fraction
    : tokens > unknownThreshold;
}

/** Vendor numeric codes (MiniMax always; z.ai only when the provider is z.ai). */
function byVendorCode(facts: Facts, ctx: ClassifyContext): FailoverReason | undefined {
  const zai = /zai|z\.ai|glm|zhipu|bigmodel/.test(
    `${ctx.provider ?? ""} ${ctx.baseUrl ?? facts.baseUrl ?? ""}`,
  );
  const reasons = facts.vendorCodes.map((c) =>
    c.startsWith("minimax:") ? MINIMAX_CODES.get(c.slice(8)) : zai ? ZAI_CODES.get(c) : undefined,
  );
  return reasons.find((r) => r !== undefined);
}

function byCode(facts: Facts): FailoverReason | undefined {
  return facts.codes.map((c) => CODE_REASONS.get(c)).find((r) => r !== undefined);
}

/** Step 1: shapes distinctive enough to trust over the status. */
function byProviderShape(t: string, facts: Facts, ctx: ClassifyContext): FailoverReason | undefined {
  const status = facts.status;
  if (facts.moderation || has(t, CONTENT_FILTER)) return "content_filter";
  const replayed =
    t.includes("signature") || t.includes("cannot be modified") || t.includes("must remain as they were");
  if ((status === 400 || status === undefined) && t.includes("thinking") && replayed)
    return "thinking_signature";
  if (status === 429 && t.includes("extra usage") && t.includes("long context")) return "long_context_tier";
  if (
    t.includes("invalid_encrypted_content") ||
    (t.includes("encrypted content") && t.includes("not be verified"))
  )
    return "invalid_encrypted_content";
  if (t.includes("api_key_invalid") || t.includes("api key not valid")) return "auth"; // Gemini answers 400
  if (t.includes("grok subscription") || (t.includes("out of available resources") && t.includes("grok")))
    return "billing";
  if (/max_tokens:?\s*\d+\s*>\s*\d+,? which is the maximum|max_tokens.{0,40}is too large/.test(t))
    return "max_tokens_too_large";
  return byVendorCode(facts, ctx);
}

function by400(t: string, facts: Facts, ctx: ClassifyContext): FailoverReason {
  const code = byCode(facts);
  if (has(t, IMAGE)) return "image_too_large";
  if (has(t, REQUEST_VALIDATION)) return "format_error";
  if (has(t, CONTEXT) || code === "context_overflow") return "context_overflow";
  if (code && !["unknown", "server_error", "overloaded", "timeout"].includes(code)) return code;
  if (has(t, POLICY)) return "provider_policy_blocked";
  if (has(t, MODEL_NOT_FOUND)) return "model_not_found";
  if (has(t, BILLING)) return "billing";
  if (has(t, RATE_LIMIT)) return "rate_limit";
  if (has(t, AUTH)) return "auth";
  // Anthropic sometimes answers an oversized prompt with a bare "Error".
  if (facts.messages.join(" ").length < 30 && isLarge(ctx, 0.4, 80_000)) return "context_overflow";
  return "format_error";
}

function byStatus(status: number, t: string, facts: Facts, ctx: ClassifyContext): FailoverReason | undefined {
  const code = byCode(facts);
  if (status === 400 || status === 422) return by400(t, facts, ctx);
  if (status === 401) return has(t, DEACTIVATED) ? "auth_permanent" : "auth";
  if (status === 402) return has(t, USAGE_LIMIT) && has(t, TRANSIENT) ? "rate_limit" : "billing";
  if (status === 403) {
    if (has(t, BILLING)) return "billing";
    if (has(t, POLICY)) return "provider_policy_blocked";
    return code === "auth" || (has(t, AUTH) && !has(t, FORBIDDEN)) ? "auth" : "auth_permanent";
  }
  if (status === 404)
    return has(t, BILLING) ? "billing" : has(t, POLICY) ? "provider_policy_blocked" : "model_not_found";
  if (status === 408 || status === 499) return "timeout";
  if (status === 409 || status === 425) return "server_error";
  if (status === 413) return has(t, IMAGE) ? "image_too_large" : "payload_too_large";
  if (status === 429) {
    if (has(t, OVERLOADED) || code === "overloaded") return "overloaded";
    // Quota messages are billing unless something says the window resets (Gemini per-minute quota),
    // even under a rate-limit code ("out of extra usage" comes as Anthropic's rate_limit_error).
    const transient = has(t, TRANSIENT) || facts.retryAfterMs !== undefined;
    if (code === "billing" || (has(t, BILLING) && !transient)) return "billing";
    return "rate_limit";
  }
  if (status >= 500 && status < 600) {
    if (has(t, CONTEXT)) return "context_overflow";
    if (has(t, GATEWAY) && isLarge(ctx, LARGE_FRACTION, LARGE_UNKNOWN_TOKENS)) return "context_overflow";
    if ((status === 500 || status === 502) && has(t, REQUEST_VALIDATION)) return "format_error";
    if (status === 503 || status === 529 || code === "overloaded" || has(t, OVERLOADED)) return "overloaded";
    return "server_error";
  }
  if (status >= 400) return code ?? "format_error";
  return undefined;
}

function byMessage(t: string): FailoverReason | undefined {
  if (has(t, PAYLOAD)) return "payload_too_large";
  if (has(t, IMAGE)) return "image_too_large";
  // "Rate limit exceeded" also reads as a usage limit: the rate words say it is a window.
  if (has(t, USAGE_LIMIT) && !has(t, CONTEXT))
    return has(t, TRANSIENT) || has(t, RATE_LIMIT) ? "rate_limit" : "billing";
  if (has(t, OVERLOADED)) return "overloaded";
  if (has(t, BILLING)) return "billing";
  if (has(t, RATE_LIMIT)) return "rate_limit";
  if (has(t, CONTEXT)) return "context_overflow";
  if (has(t, AUTH)) return "auth";
  if (has(t, DEACTIVATED) || has(t, FORBIDDEN)) return "auth_permanent";
  if (has(t, POLICY)) return "provider_policy_blocked";
  if (has(t, MODEL_NOT_FOUND)) return "model_not_found";
  if (has(t, SERVER_ERROR)) return "server_error";
  return undefined;
}

/** A connection that was cut or never made because the clock ran out, not because it dropped. */
function stalled(t: string, facts: Facts): boolean {
  return has(t, TIMEOUT) || facts.codes.some((c) => /timeout|timedout|refused|notfound|abort/.test(c));
}

function refused(t: string, facts: Facts): boolean {
  return (
    facts.codes.includes("econnrefused") || t.includes("econnrefused") || t.includes("connection refused")
  );
}

/** Steps 5–7, for failures without an HTTP answer. */
function byConnection(t: string, facts: Facts, ctx: ClassifyContext): FailoverReason | undefined {
  if (has(t, TLS)) return "timeout"; // a TLS alert is a network hiccup, never a size problem
  if (facts.status !== undefined || !(facts.network || has(t, DISCONNECT) || has(t, TIMEOUT)))
    return undefined;
  // Nothing listens on the user's own machine or network: waiting will not start the server.
  if (refused(t, facts) && isLocalOrLanUrl(ctx.baseUrl ?? facts.baseUrl)) return "local_server_down";
  // The name does not resolve (a typo, a machine that is gone); EAI_AGAIN (DNS briefly down) retries.
  if (facts.codes.includes("enotfound") || /\bgetaddrinfo enotfound\b/.test(t)) return "host_not_found";
  // fetch never connects to ports browsers block (9, 6000, 6667…): no retry will change that.
  if (/\bbad port\b/.test(t)) return "format_error";
  if (has(t, DISCONNECT) && !stalled(t, facts) && isLarge(ctx, LARGE_FRACTION, LARGE_UNKNOWN_TOKENS))
    return "context_overflow";
  return "timeout";
}

const RETRYABLE = new Set<FailoverReason>(["rate_limit", "overloaded", "server_error", "timeout"]);
const COMPRESS = new Set<FailoverReason>(["context_overflow", "payload_too_large", "long_context_tier"]);
/** Where another model or provider would help (overload and server errors: after retries). */
const FALLBACK = new Set<FailoverReason>([
  ...["billing", "auth_permanent", "model_not_found", "provider_policy_blocked"],
  ...["overloaded", "server_error", "content_filter", "local_server_down", "host_not_found"],
] as FailoverReason[]);

/**
 * Failures nothing explains that may pass (a bare 5xx, a dropped connection, a size guess): one
 * more try is worth it, a ladder of them only keeps the user waiting for the same answer.
 */
function retryLimit(reason: FailoverReason, guessed: boolean, t: string, facts: Facts): number | undefined {
  if (reason === "server_error" || guessed) return 1;
  if (reason === "timeout" && facts.status === undefined && has(t, DISCONNECT) && !stalled(t, facts))
    return 1;
  return undefined;
}

/**
 * Classifies a failed model call. Never throws. Reads, defensively and along the `cause` chain:
 * `ProviderError` fields (`baseUrl` and `headers` included, which every transport sets); `status` /
 * `statusCode` / `$metadata.httpStatusCode`; a JSON or text body (`ProviderError.body`, or the
 * openai SDK's parsed `.error`); Node and undici `code`s and error names; and, on other errors, a
 * `headers` property (a `Headers`, `Map` or plain record) for Retry-After and rate-limit reset
 * headers. The endpoint is never guessed from message text: a `ProviderError` built without
 * `baseUrl` has none (pass `context.baseUrl`). A user abort must be handled by the caller first:
 * here an `AbortError` counts as a stall timeout.
 */
export function classifyApiError(error: unknown, context: ClassifyContext = {}): ClassifiedError {
  const now = context.now ?? Date.now();
  let facts: Facts;
  try {
    facts = extractFacts(error);
  } catch {
    facts = { text: "", messages: [], codes: [], vendorCodes: [], network: false, moderation: false };
  }
  const t = facts.text;
  const byTransport = facts.status === undefined ? byConnection(t, facts, context) : undefined;
  const reason: FailoverReason =
    byProviderShape(t, facts, context) ??
    (facts.status !== undefined ? byStatus(facts.status, t, facts, context) : undefined) ??
    byCode(facts) ??
    byMessage(t) ??
    byTransport ??
    "unknown";
  // A dropped connection or a gateway 5xx on a huge session is probably its size, but may be a blip.
  const guessed = reason === "context_overflow" && (byTransport === reason || (facts.status ?? 0) >= 500);
  const retryable = RETRYABLE.has(reason) || guessed;
  const limit = retryable ? retryLimit(reason, guessed, t, facts) : undefined;
  const baseUrl = context.baseUrl ?? facts.baseUrl;

  const timing = parseResetHeaders(facts.headers, now);
  const retryAfterMs = facts.retryAfterMs ?? timing.retryAfterMs ?? retryDelayFromText(t);
  const waitMs = Math.max(retryAfterMs ?? 0, (timing.resetAt ?? now) - now);
  const longWait = reason === "rate_limit" && waitMs > LONG_RESET_MS;
  const result: ClassifiedError = {
    reason,
    retryable,
    shouldCompress: COMPRESS.has(reason),
    shouldRotateCredential: reason === "auth" || reason === "billing" || longWait,
    shouldFallback: FALLBACK.has(reason) || longWait,
    shouldStripReasoning: reason === "thinking_signature" || reason === "invalid_encrypted_content",
    message: summary(reason, facts.status, baseUrl, facts.status === undefined && /\bbad port\b/.test(t)),
  };
  if (limit !== undefined) result.retryLimit = limit;
  if (facts.status !== undefined) result.status = facts.status;
  if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
  if (timing.resetAt !== undefined) result.resetAt = timing.resetAt;
  const available = availableOutput(t, facts);
  if (available !== undefined) result.availableOutputTokens = available;
  const detail = facts.messages.join(" — ").replace(/\s+/g, " ").trim();
  if (detail) result.detail = detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
  if (baseUrl) result.baseUrl = baseUrl;
  if (error instanceof ProviderError && error.hint) result.hint = error.hint;
  return result;
}

// ── words for the user ──────────────────────────────────────────────────

function summary(
  reason: FailoverReason,
  status: number | undefined,
  baseUrl: string | undefined,
  badPort = false,
): string {
  if (reason === "local_server_down" && baseUrl)
    return `nothing is listening at ${baseUrl} (connection refused)`;
  if (reason === "host_not_found" && baseUrl) return `the host of ${baseUrl} does not resolve (no such name)`;
  if (reason === "format_error" && badPort)
    return `${BLOCKED_PORT} ${baseUrl ?? "this URL"}: its port is one browsers block; run the server on another port`;
  return status !== undefined ? `${SUMMARIES[reason]} (${status})` : SUMMARIES[reason];
}

const SUMMARIES: Readonly<Record<FailoverReason, string>> = {
  auth: "the API key was rejected",
  auth_permanent: "access was denied",
  billing: "the account is out of credits or quota",
  rate_limit: "rate limited by the provider",
  host_not_found: "the provider's host name does not resolve",
  overloaded: "the provider is overloaded",
  server_error: "the provider had a server error",
  timeout: "the connection failed or timed out",
  local_server_down: "the local model server refused the connection (nothing is listening there)",
  context_overflow: "the conversation is too long for the model's context window",
  payload_too_large: "the request is too large for the provider",
  image_too_large: "an image is too large for the provider",
  max_tokens_too_large: "max_tokens is larger than the model allows",
  model_not_found: "the model was not found",
  provider_policy_blocked: "the provider's account or data policy blocks this model",
  content_filter: "the provider's content filter blocked the request",
  format_error: "the provider rejected the request as invalid",
  thinking_signature: "the provider rejected replayed thinking blocks (invalid signature)",
  invalid_encrypted_content: "the provider rejected replayed reasoning items",
  long_context_tier: "long-context requests need extra usage on this account",
  unknown: "the model call failed",
};
