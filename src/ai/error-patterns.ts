/**
 * The words and codes the error classifier recognises, by family: lower-case substrings matched
 * against everything an error says (its messages, body and codes), and structured codes mapped
 * straight to a reason. Data only; the order they are consulted in lives in `error-classifier.ts`.
 * Patterns are "|" or newline separated.
 */
import type { FailoverReason } from "./error-types.js";

function words(text: string): readonly string[] {
  return text
    .split(/[|\n]/)
    .map((w) => w.trim())
    .filter((w) => w !== "");
}

export const CONTENT_FILTER = words(`content_filter | responsibleaipolicyviolation | content management policy
  violates our usage polic | violates openai's usage polic | your request was flagged | flagged for possible
  prompt was flagged by our safety | responses cannot be generated due to safety | 不安全或敏感内容`);
export const BILLING =
  words(`insufficient credits | insufficient_quota | insufficient balance | insufficient account balance
  credit balance | more credits | credits exhausted | have any credits | out of credits | top up | payment required
  billing hard limit | exceeded your current quota | check your plan and billing | out of funds | please recharge
  not available on the free tier | spending limit | key limit exceeded | 余额不足
  extra usage | insufficient funds | credit limit | no credits left | credits have run out`);
export const RATE_LIMIT =
  words(`rate limit | rate_limit | rate-limit | ratelimit | too many requests | throttl | per minute
  try again in | please retry after | resource_exhausted | resource exhausted | too many concurrent | concurrency
  servicequotaexceeded | 并发 | 频率
  rate exceeded | slow down | requests per min | tokens per min`);
export const OVERLOADED = words(
  "overloaded | at capacity | over capacity | loading model | temporarily unavailable",
);
/** Signals that a usage or quota message is a window that resets, not an empty wallet. */
export const TRANSIENT = words(
  "try again | retry | resets at | reset in | will reset | wait | per minute | per day",
);
export const USAGE_LIMIT = words("usage limit | quota | limit exceeded | limit reached");
export const CONTEXT =
  words(`context length | context_length | context size | context window | maximum context
  context limit | token limit | too many tokens | prompt is too long | prompt exceeds max length | prompt too long
  input is too long | reduce the length | maximum number of tokens | maximum prompt length | max_model_len
  too many input tokens
  maximum model length | exceeds the available context | exceed_context_size | slot context | max input token
  input token count | 上下文长度 | 超过最大长度
  input tokens exceed | tokens. given: | + \`max_new_tokens\` must be | exceeds the context`);
export const PAYLOAD = words("request entity too large | payload too large | error code: 413");
export const IMAGE = words(
  "image exceeds | image too large | image_too_large | image size exceeds | image dimensions exceed",
);
export const REQUEST_VALIDATION =
  words(`unknown parameter | unsupported parameter | unrecognized request argument
  unknown_parameter | unsupported_parameter | extra inputs are not permitted | tool message content must be a string
  error parsing grammar | json-schema-to-grammar`);
export const POLICY =
  words(`no endpoints available matching your guardrail | matching your data policy | settings/privacy
  location is not supported | not available in your region | unsupported_country`);
export const MODEL_NOT_FOUND =
  words(`model not found | model_not_found | not a valid model | invalid model | no such model
  unknown model | unsupported model | no endpoints found | does not exist | is not found | 模型不存在
  model identifier is invalid | model id is invalid`);
export const AUTH =
  words(`invalid api key | invalid_api_key | incorrect api key | invalid x-api-key | api key not valid
  api_key_invalid | no auth credentials | authentication | unauthorized | invalid token | token expired
  token has expired | security token | 身份验证`);
/** The account itself is shut: no refresh or retry will help. */
export const DEACTIVATED = words(`account is deactivated | account has been deactivated | account is suspended
  has been suspended | has been disabled | account is disabled | banned`);
export const FORBIDDEN =
  words(`forbidden | access denied | permission denied | don't have access | do not have access
  not have permission`);
export const TIMEOUT = words("timed out | timeout | deadline exceeded");
export const TLS =
  words(`bad record mac | bad_record_mac | ssl alert | tls alert | ssl_alert | tlsv1 alert | sslv3 alert
  [ssl: | decryption failed | err_ssl | eproto`);
export const DISCONNECT =
  words(`socket hang up | econnreset | connection reset | epipe | other side closed | premature close
  terminated | server disconnected | peer closed | unexpected eof | connection was closed | network connection lost
  incomplete chunked | ended before | connection probably dropped | without finishing | failed mid-response
  und_err_socket | und_err_closed | finish_reason "error"`);
/** A server failing without saying why, in words (for errors that carry no HTTP status). */
export const SERVER_ERROR = words(`internal server error | internal error | server error | server had an error
  upstream error | upstream connect error | bad gateway | gateway timeout | service error | provider returned error`);
export const GATEWAY = words(
  "cloudflare | origin_bad_gateway | bad gateway | invalid or incomplete response",
);
export const NETWORK = new Set(
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
export const CODE_REASONS = codeTable({
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
export const MINIMAX_CODES = codeTable({
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
export const ZAI_CODES = codeTable({
  auth: "1000 1001 1002 1003 1004",
  billing: "1113",
  model_not_found: "1211",
  context_overflow: "1261",
  content_filter: "1301",
  rate_limit: "1302 1303 1308 1310",
  overloaded: "1305",
});
