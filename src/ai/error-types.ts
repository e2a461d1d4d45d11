/**
 * The error classifier's vocabulary: the reasons a model call fails, the recovery flags each
 * carries, and what the caller may tell the classifier. Kept apart from the classifier so the
 * pattern tables (`error-patterns.ts`) and timing parsers (`error-timing.ts`) share it.
 */

export type FailoverReason =
  | "auth"
  | "auth_permanent"
  | "billing"
  | "rate_limit"
  | "overloaded"
  | "server_error"
  | "timeout"
  | "local_server_down"
  /** The base URL's host name does not resolve (ENOTFOUND): a typo or a machine that is gone. */
  | "host_not_found"
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
  /**
   * At most this many retries for this failure, however many the policy allows. Set to 1 for
   * transient failures nothing explains (a bare 5xx, a dropped connection): one more try is
   * cheap, a ladder of them only makes the user wait for the same answer.
   */
  retryLimit?: number;
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
  /** The error's own advice (`ProviderError.hint`), used instead of the generic one. */
  hint?: string;
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

/** How the summary of a connection to a port fetch blocks starts (the summary carries its own fix). */
export const BLOCKED_PORT = "Node's fetch refuses to connect to";
