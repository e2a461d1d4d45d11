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
import { ProviderError } from "./types.js";

export type FailoverReason =
  | "auth"
  | "auth_permanent"
  | "billing"
  | "rate_limit"
  | "overloaded"
  | "server_error"
  | "timeout"
  | "context_overflow"
  | "payload_too_large"
  | "image_too_large"
  | "max_tokens_too_large"
  | "model_not_found"
  | "provider_policy_blocked"
  | "content_filter"
  | "format_error"
  | "thinking_signature"
  | "invalid_encrypted_content"
  | "long_context_tier"
  | "unknown";

/**
 * What failed and what would help. The flags say what *could* make a later attempt succeed; the
 * caller decides what it can do (the loop only waits and repeats; rotation, compression and
 * fallback belong to their own modules).
 */
export interface ClassifiedError {
  reason: FailoverReason;
  /** Sending the same request again, after a wait, may succeed. */
  retryable: boolean;
  /** Shrinking the conversation would help (context overflow, 413, Anthropic long-context tier). */
  shouldCompress: boolean;
  /** Another credential of the same provider may work (bad key, no credit, long rate-limit reset). */
  shouldRotateCredential: boolean;
  /**
   * A fallback model or provider would help. For `overloaded` and `server_error` read it as "once
   * retries are exhausted": the flag says a fallback is useful, the caller decides when.
   */
  shouldFallback: boolean;
  /**
   * Retrying after stripping replayed reasoning (Anthropic thinking blocks, Responses encrypted
   * items) should work; `retryable` stays false because the unchanged request fails again.
   */
  shouldStripReasoning: boolean;
  /** Milliseconds the provider asked to wait (Retry-After, "try again in 2s", Gemini RetryInfo). */
  retryAfterMs?: number;
  /** Epoch ms when the provider's exhausted rate limit resets (from reset headers). */
  resetAt?: number;
  /** Output tokens the provider says are possible (lower `max_tokens` to this and retry). */
  availableOutputTokens?: number;
  status?: number;
  /** Short human summary, lower-case start: "rate limited by the provider (429)". */
  message: string;
  /** The endpoint that failed, when the error says (its `baseUrl` property or our transports' text). */
  baseUrl?: string;
  /** The provider's own error text (or the network error's), clipped; absent when none. */
  detail?: string;
}

export interface ClassifyContext {
  /** Provider id (`openrouter`, `anthropic`, `zai`...), used for hints and vendor codes. */
  provider?: string;
  model?: string;
  /** Base URL called; read from the error's `baseUrl` property or message when not given. */
  baseUrl?: string;
  /** Rough token count of the conversation sent (for "a disconnect on a large session"). */
  approxContextTokens?: number;
  /** The model's context window in tokens, when known. */
  contextLength?: number;
  /** Clock for reset headers, epoch ms. Defaults to `Date.now()`. */
  now?: number;
}

/** Response headers: a `Headers` object or `Map` (anything with `forEach`), or a plain record. */
export type HeaderBag =
  | { forEach(callback: (value: string, key: string) => void): void }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

type Rec = Record<string, unknown>;

/** A disconnect on a session this large was probably the server refusing its size. */
const LARGE_FRACTION = 0.6;
const LARGE_UNKNOWN_TOKENS = 120_000;
/** A rate-limit wait longer than this makes another credential or a fallback worth it. */
const LONG_RESET_MS = 60_000;

// ── patterns: lower-case substrings, "|" or newline separated ───────────

function words(text: string): readonly string[] {
  return text
    .split(/[|\n]/)
    .map((w) => w.trim())
    .filter((w) => w !== "");
}

const CONTENT_FILTER = words(`content_filter | responsibleaipolicyviolation | content management policy
  violates our usage polic | violates openai's usage polic | your request was flagged | flagged for possible
  prompt was flagged by our safety | responses cannot be generated due to safety | 不安全或敏感内容`);
const BILLING =
  words(`insufficient credits | insufficient_quota | insufficient balance | insufficient account balance
  credit balance | more credits | credits exhausted | have any credits | out of credits | top up | payment required
  billing hard limit | exceeded your current quota | check your plan and billing | out of funds | please recharge
  not available on the free tier | spending limit | key limit exceeded | 余额不足`);
const RATE_LIMIT =
  words(`rate limit | rate_limit | rate-limit | ratelimit | too many requests | throttl | per minute
  try again in | please retry after | resource_exhausted | resource exhausted | too many concurrent | concurrency
  servicequotaexceeded | 并发 | 频率`);
const OVERLOADED = words(
  "overloaded | at capacity | over capacity | loading model | temporarily unavailable",
);
/** Signals that a usage or quota message is a window that resets, not an empty wallet. */
const TRANSIENT = words(
  "try again | retry | resets at | reset in | will reset | wait | per minute | per day",
);
const USAGE_LIMIT = words("usage limit | quota | limit exceeded | limit reached");
const CONTEXT = words(`context length | context_length | context size | context window | maximum context
  context limit | token limit | too many tokens | prompt is too long | prompt exceeds max length | prompt too long
  input is too long | reduce the length | maximum number of tokens | maximum prompt length | max_model_len
  too many input tokens
  maximum model length | exceeds the available context | exceed_context_size | slot context | max input token
  input token count | 上下文长度 | 超过最大长度`);
const PAYLOAD = words("request entity too large | payload too large | error code: 413");
const IMAGE = words(
  "image exceeds | image too large | image_too_large | image size exceeds | image dimensions exceed",
);
const REQUEST_VALIDATION = words(`unknown parameter | unsupported parameter | unrecognized request argument
  unknown_parameter | unsupported_parameter | extra inputs are not permitted | tool message content must be a string
  error parsing grammar | json-schema-to-grammar`);
const POLICY =
  words(`no endpoints available matching your guardrail | matching your data policy | settings/privacy
  location is not supported | not available in your region | unsupported_country`);
const MODEL_NOT_FOUND =
  words(`model not found | model_not_found | not a valid model | invalid model | no such model
  unknown model | unsupported model | no endpoints found | does not exist | is not found | 模型不存在
  model identifier is invalid | model id is invalid`);
const AUTH =
  words(`invalid api key | invalid_api_key | incorrect api key | invalid x-api-key | api key not valid
  api_key_invalid | no auth credentials | authentication | unauthorized | invalid token | token expired
  token has expired | security token | 身份验证`);
/** The account itself is shut: no refresh or retry will help. */
const DEACTIVATED = words(`account is deactivated | account has been deactivated | account is suspended
  has been suspended | has been disabled | account is disabled | banned`);
const FORBIDDEN =
  words(`forbidden | access denied | permission denied | don't have access | do not have access
  not have permission`);
const TIMEOUT = words("timed out | timeout | deadline exceeded");
const TLS =
  words(`bad record mac | bad_record_mac | ssl alert | tls alert | ssl_alert | tlsv1 alert | sslv3 alert
  [ssl: | decryption failed | err_ssl | eproto`);
const DISCONNECT =
  words(`socket hang up | econnreset | connection reset | epipe | other side closed | premature close
  terminated | server disconnected | peer closed | unexpected eof | connection was closed | network connection lost
  incomplete chunked | ended before | connection probably dropped | without finishing | failed mid-response
  und_err_socket | und_err_closed`);
const GATEWAY = words("cloudflare | origin_bad_gateway | bad gateway | invalid or incomplete response");
const NETWORK = new Set(
  words(`econnreset | econnrefused | econnaborted | etimedout | epipe | enotfound | eai_again | enetunreach | enetdown
  ehostunreach | eproto | err_stream_premature_close | aborterror | timeouterror | apiconnectionerror
  apiconnectiontimeouterror | connecttimeouterror | headerstimeouterror | bodytimeouterror | socketerror | fetcherror`),
);

/** `reason: "code code ..."` → a code-to-reason map. */
function codeTable(table: Partial<Record<FailoverReason, string>>): ReadonlyMap<string, FailoverReason> {
  const map = new Map<string, FailoverReason>();
  for (const [reason, codes] of Object.entries(table) as [FailoverReason, string][])
    for (const code of codes.split(/\s+/)) if (code) map.set(code, reason);
  return map;
}

/** Structured codes (error.code / error.type / Gemini status / AWS exception names), lower-case. */
const CODE_REASONS = codeTable({
  context_overflow: "context_length_exceeded max_tokens_exceeded exceed_context_size_error",
  billing: `insufficient_quota billing_not_active payment_required insufficient_credits insufficient_balance
    balance_depleted exceeded_current_quota_error`,
  rate_limit: `rate_limit_exceeded rate_limit_error rate_limit_reached_error resource_exhausted throttled
    throttlingexception servicequotaexceededexception too_many_requests`,
  overloaded: `overloaded_error engine_overloaded_error unavailable unavailable_error service_unavailable
    serviceunavailableexception modelnotreadyexception`,
  server_error: `api_error server_error internal_error internal internalserverexception modelerrorexception
    modelstreamerrorexception`,
  auth: `authentication_error invalid_api_key invalid_authentication_error unauthenticated api_key_invalid
    unrecognizedclientexception expiredtokenexception invalidsignatureexception incompletesignatureexception
    missingauthenticationtokenexception credentialsprovidererror tokenprovidererror`,
  auth_permanent: "permission_error permission_denied accessdeniedexception",
  model_not_found:
    "model_not_found model_not_available invalid_model not_found_error resourcenotfoundexception",
  payload_too_large: "request_too_large",
  invalid_encrypted_content: "invalid_encrypted_content",
  content_filter: "content_policy_violation",
  timeout: "modeltimeoutexception deadline_exceeded",
});
/** MiniMax `base_resp.status_code` values. */
const MINIMAX_CODES = codeTable({
  timeout: "1001",
  rate_limit: "1002 1041",
  auth: "1004 2049",
  billing: "1008",
  server_error: "1013",
  content_filter: "1026 1027",
  context_overflow: "1039",
  format_error: "2013",
});
/** z.ai / Zhipu `error.code` digit strings (trusted only when the provider is z.ai). */
const ZAI_CODES = codeTable({
  auth: "1000 1001 1002 1003 1004",
  billing: "1113",
  model_not_found: "1211",
  context_overflow: "1261",
  content_filter: "1301",
  rate_limit: "1302 1303 1308 1310",
  overloaded: "1305",
});

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

/** A header bag (Headers, Map or plain record) as a lower-case-keyed map; undefined when none. */
function normaliseHeaders(source: unknown): Map<string, string> | undefined {
  if (!isRec(source) && !(source instanceof Map)) return undefined;
  const out = new Map<string, string>();
  const put = (value: unknown, key: unknown) => {
    const v = Array.isArray(value) ? value[0] : value;
    if (typeof key === "string" && (typeof v === "string" || typeof v === "number"))
      out.set(key.toLowerCase(), String(v));
  };
  const forEach = (source as { forEach?: unknown }).forEach;
  if (typeof forEach === "function") forEach.call(source, put);
  else for (const [key, value] of Object.entries(source)) put(value, key);
  return out.size > 0 ? out : undefined;
}

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
    } else {
      const meta = e["$metadata"]; // AWS SDK
      const status =
        num(e["status"]) ?? num(e["statusCode"]) ?? num(isRec(meta) ? meta["httpStatusCode"] : 0);
      if (status !== undefined && status >= 100 && status < 600) facts.status ??= status;
    }
    // ProviderError keeps the body text; the openai SDK keeps the parsed error on `.error`.
    const body =
      e instanceof ProviderError ? e.body : e["error"] !== undefined ? { error: e["error"] } : undefined;
    if (body !== undefined && !sawBody) {
      readBody(body, facts);
      sawBody = true;
    }
    facts.headers ??= normaliseHeaders(e["headers"]);
    facts.baseUrl ??= str(e["baseUrl"]) ?? str(e["baseURL"]);
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
  if (!facts.baseUrl && error instanceof ProviderError) {
    // Until transports attach `baseUrl`, ours name it in their messages ("The provider at URL ...").
    facts.baseUrl = /\b(?:at|to|from) (https?:\/\/[^\s"']+?)(?=[\s,"']|: |\.? |$)/.exec(error.message)?.[1];
  }
  return facts;
}

// ── timing ──────────────────────────────────────────────────────────────

/**
 * Parses a duration as providers write it: "1s", "6m0s", "20ms", "1h2m3.5s", "32.9s", or a bare
 * number of seconds, into ms. Undefined when it is not one.
 */
export function parseDuration(value: string): number | undefined {
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const m = /^(?:([\d.]+)h)?(?:([\d.]+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?$/.exec(text);
  if (!m || text === "") return undefined;
  const ms =
    Number(m[1] ?? 0) * 3_600_000 + Number(m[2] ?? 0) * 60_000 + Number(m[3] ?? 0) * 1000 + Number(m[4] ?? 0);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/**
 * Milliseconds to wait for a `Retry-After` value: delta seconds ("3", "1.5", or a number) or an
 * HTTP date. Undefined when absent or unparseable; never negative.
 */
export function parseRetryAfter(value: string | number | null | undefined, now: number = Date.now()) {
  if (typeof value === "number")
    return Number.isFinite(value) ? Math.max(0, Math.round(value * 1000)) : undefined;
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** An instant from a reset header: epoch ms, epoch seconds, delta seconds, a duration or a date. */
function parseResetValue(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const n = Number(text);
    return n > 1e12 ? Math.round(n) : n > 1e9 ? Math.round(n * 1000) : now + Math.round(n * 1000);
  }
  const duration = parseDuration(text);
  if (duration !== undefined) return now + duration;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date;
}

/**
 * Retry timing from response headers: `retry-after-ms` / `retry-after` → `retryAfterMs`, and the
 * rate-limit reset family → `resetAt` (epoch ms): OpenAI/Groq `x-ratelimit-reset-requests|tokens`
 * ("6m0s"), Anthropic `anthropic-ratelimit-*-reset` (RFC 3339), OpenRouter `X-RateLimit-Reset`
 * (epoch ms). Where the matching `*-remaining` header is 0 the latest of those resets wins (that
 * limit was hit); otherwise the earliest. Past resets are ignored. `{}` when nothing usable.
 */
export function parseResetHeaders(
  headers: HeaderBag | undefined,
  now: number = Date.now(),
): { retryAfterMs?: number; resetAt?: number } {
  const map = normaliseHeaders(headers);
  if (!map) return {};
  const out: { retryAfterMs?: number; resetAt?: number } = {};
  const ms = map.get("retry-after-ms")?.trim();
  const after =
    ms && /^\d+(\.\d+)?$/.test(ms) ? Math.round(Number(ms)) : parseRetryAfter(map.get("retry-after"), now);
  if (after !== undefined) out.retryAfterMs = after;
  const exhausted: number[] = [];
  const all: number[] = [];
  for (const [name, value] of map) {
    if (!/^(x-ratelimit-reset|anthropic-ratelimit-.*reset)/.test(name)) continue;
    const at = parseResetValue(value, now);
    if (at === undefined || at <= now) continue;
    all.push(at);
    if (map.get(name.replace("reset", "remaining"))?.trim() === "0") exhausted.push(at);
  }
  if (exhausted.length > 0) out.resetAt = Math.max(...exhausted);
  else if (all.length > 0) out.resetAt = Math.min(...all);
  return out;
}

const UNIT_MS: Readonly<Record<string, number>> = { mil: 1, min: 60_000, h: 3_600_000 };

/** "try again in 2.004s", "try again after 1 seconds", "Please retry in 32.9s" → ms. */
function retryDelayFromText(text: string): number | undefined {
  const lead = /(?:try again|retry)(?: in| after)? /.source;
  const worded = new RegExp(
    `${lead}([\\d.]+)\\s*(milliseconds?|seconds?|secs?|minutes?|mins?|hours?)\\b`,
  ).exec(text);
  if (worded?.[1] && worded[2]) {
    const unit = worded[2].slice(0, 3);
    return Math.round(Number(worded[1]) * (UNIT_MS[unit] ?? UNIT_MS[unit.slice(0, 1)] ?? 1000));
  }
  const compact = new RegExp(`${lead}((?:[\\d.]+(?:ms|h|m|s))+)`).exec(text);
  return compact?.[1] ? parseDuration(compact[1]) : undefined;
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
    if (code === "billing" || code === "rate_limit") return code;
    // Quota messages are billing unless something says the window resets (Gemini per-minute quota).
    const transient = has(t, TRANSIENT) || facts.retryAfterMs !== undefined;
    return has(t, BILLING) && !transient ? "billing" : "rate_limit";
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
  if (has(t, USAGE_LIMIT) && !has(t, CONTEXT)) return has(t, TRANSIENT) ? "rate_limit" : "billing";
  if (has(t, OVERLOADED)) return "overloaded";
  if (has(t, BILLING)) return "billing";
  if (has(t, RATE_LIMIT)) return "rate_limit";
  if (has(t, CONTEXT)) return "context_overflow";
  if (has(t, AUTH)) return "auth";
  if (has(t, DEACTIVATED) || has(t, FORBIDDEN)) return "auth_permanent";
  if (has(t, POLICY)) return "provider_policy_blocked";
  if (has(t, MODEL_NOT_FOUND)) return "model_not_found";
  return undefined;
}

/** Steps 5–7, for failures without an HTTP answer. */
function byConnection(t: string, facts: Facts, ctx: ClassifyContext): FailoverReason | undefined {
  if (has(t, TLS)) return "timeout"; // a TLS alert is a network hiccup, never a size problem
  if (facts.status !== undefined || !(facts.network || has(t, DISCONNECT) || has(t, TIMEOUT)))
    return undefined;
  const stalled =
    has(t, TIMEOUT) || facts.codes.some((c) => /timeout|timedout|refused|notfound|abort/.test(c));
  if (has(t, DISCONNECT) && !stalled && isLarge(ctx, LARGE_FRACTION, LARGE_UNKNOWN_TOKENS))
    return "context_overflow";
  return "timeout";
}

const RETRYABLE = new Set<FailoverReason>(["rate_limit", "overloaded", "server_error", "timeout"]);
const COMPRESS = new Set<FailoverReason>(["context_overflow", "payload_too_large", "long_context_tier"]);
/** Where another model or provider would help (overload and server errors: after retries). */
const FALLBACK = new Set<FailoverReason>([
  ...["billing", "auth_permanent", "model_not_found", "provider_policy_blocked"],
  ...["overloaded", "server_error", "content_filter"],
] as FailoverReason[]);

/**
 * Classifies a failed model call. Never throws. Reads, defensively and along the `cause` chain:
 * `ProviderError` fields; `status` / `statusCode` / `$metadata.httpStatusCode`; a JSON or text body
 * (`ProviderError.body`, or the openai SDK's parsed `.error`); Node and undici `code`s and error
 * names; and an optional `headers` property (a `Headers`, `Map` or plain record) that transports
 * may attach for Retry-After and rate-limit reset headers (the openai SDK error, kept as the
 * `cause`, already has one). A user abort must be handled by the caller first: here an
 * `AbortError` counts as a stall timeout.
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
    message: facts.status !== undefined ? `${SUMMARIES[reason]} (${facts.status})` : SUMMARIES[reason],
  };
  if (facts.status !== undefined) result.status = facts.status;
  if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
  if (timing.resetAt !== undefined) result.resetAt = timing.resetAt;
  const available = availableOutput(t, facts);
  if (available !== undefined) result.availableOutputTokens = available;
  const detail = facts.messages.join(" — ").replace(/\s+/g, " ").trim();
  if (detail) result.detail = detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
  const baseUrl = context.baseUrl ?? facts.baseUrl;
  if (baseUrl) result.baseUrl = baseUrl;
  return result;
}

// ── words for the user ──────────────────────────────────────────────────

const SUMMARIES: Readonly<Record<FailoverReason, string>> = {
  auth: "the API key was rejected",
  auth_permanent: "access was denied",
  billing: "the account is out of credits or quota",
  rate_limit: "rate limited by the provider",
  overloaded: "the provider is overloaded",
  server_error: "the provider had a server error",
  timeout: "the connection failed or timed out",
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
