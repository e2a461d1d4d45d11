/**
 * Builders for the error shapes each provider really sends, the reasons' documented flags, and the
 * table runner shared by the error-classifier tests (test/unit/ai/error-classifier*.test.ts).
 */
import { expect, it } from "vitest";
import {
  type ClassifiedError,
  type ClassifyContext,
  classifyApiError,
  type FailoverReason,
} from "../../src/ai/error-classifier.js";
import { ProviderError } from "../../src/ai/types.js";

export const NOW = Date.parse("2025-06-01T12:00:00Z");

/** An HTTP error as a transport reports it: status plus the body text exactly as the provider sent it. */
export function http(
  status: number | undefined,
  body: unknown,
  extra: { headers?: Record<string, string>; message?: string; retryAfterMs?: number } = {},
): ProviderError {
  const error = new ProviderError(extra.message ?? `The provider answered with HTTP ${status}`, {
    ...(status !== undefined ? { status } : {}),
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(extra.retryAfterMs !== undefined ? { retryAfterMs: extra.retryAfterMs } : {}),
  });
  return extra.headers ? Object.assign(error, { headers: extra.headers }) : error;
}

/** A Node / undici style error with a `code`. */
export function nodeError(message: string, code?: string, name?: string, cause?: unknown): Error {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  if (code) Object.assign(error, { code });
  if (name) error.name = name;
  return error;
}

/** An AWS SDK v3 service exception as `@aws-sdk/client-bedrock-runtime` throws it. */
export function awsError(name: string, httpStatusCode: number | undefined, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return Object.assign(error, {
    $fault: "client",
    $metadata: httpStatusCode === undefined ? {} : { httpStatusCode, requestId: "req-1" },
  });
}

export const anthropic = (type: string, message: string) => ({
  type: "error",
  error: { type, message },
  request_id: "req_01",
});
export const openai = (
  message: string,
  type: string | null,
  code: string | null,
  param: string | null = null,
) => ({
  error: { message, type, param, code },
});
export const gemini = (code: number, status: string, message: string, details?: unknown[]) => ({
  error: { code, message, status, ...(details ? { details } : {}) },
});
/** The body the bedrock_converse transport puts on its `ProviderError`. */
export const bedrock = (type: string, message: string) => ({ __type: type, message });
export const openrouter = (code: number, message: string, metadata?: Record<string, unknown>) => ({
  error: { code, message, ...(metadata ? { metadata } : {}) },
  user_id: "user_2abc",
});

export type Flags = Pick<
  ClassifiedError,
  "retryable" | "shouldCompress" | "shouldRotateCredential" | "shouldFallback" | "shouldStripReasoning"
>;
export const f = (
  retry: 0 | 1,
  compress: 0 | 1,
  rotate: 0 | 1,
  fallback: 0 | 1,
  strip: 0 | 1 = 0,
): Flags => ({
  retryable: retry === 1,
  shouldCompress: compress === 1,
  shouldRotateCredential: rotate === 1,
  shouldFallback: fallback === 1,
  shouldStripReasoning: strip === 1,
});
/** The documented flags of each reason (retry, compress, rotate, fallback, strip reasoning). */
export const FLAGS: Record<FailoverReason, Flags> = {
  auth: f(0, 0, 1, 0),
  auth_permanent: f(0, 0, 0, 1),
  billing: f(0, 0, 1, 1),
  rate_limit: f(1, 0, 0, 0),
  overloaded: f(1, 0, 0, 1),
  server_error: f(1, 0, 0, 1),
  timeout: f(1, 0, 0, 0),
  local_server_down: f(0, 0, 0, 1),
  host_not_found: f(0, 0, 0, 1),
  context_overflow: f(0, 1, 0, 0),
  payload_too_large: f(0, 1, 0, 0),
  image_too_large: f(0, 0, 0, 0),
  max_tokens_too_large: f(0, 0, 0, 0),
  model_not_found: f(0, 0, 0, 1),
  provider_policy_blocked: f(0, 0, 0, 1),
  content_filter: f(0, 0, 0, 1),
  format_error: f(0, 0, 0, 0),
  thinking_signature: f(0, 0, 0, 0, 1),
  invalid_encrypted_content: f(0, 0, 0, 0, 1),
  long_context_tier: f(0, 1, 0, 0),
  unknown: f(0, 0, 0, 0),
};

export interface Case {
  name: string;
  error: unknown;
  reason: FailoverReason;
  context?: ClassifyContext;
  /** Flags that differ from the reason's documented defaults, and other expected fields. */
  expect?: Partial<ClassifiedError>;
}

export const LARGE = { approxContextTokens: 150_000 };

/** One test per case: the reason, its documented flags unless the case says otherwise, a lower-case summary. */
export function classifiesEach(cases: readonly Case[]): void {
  it.each(cases)("$name → $reason", ({ error, reason, context, expect: extra }) => {
    const result = classifyApiError(error, { now: NOW, ...context });
    const entries = Object.entries(extra ?? {});
    const present = Object.fromEntries(entries.filter(([, value]) => value !== undefined));
    expect(result).toMatchObject({ reason, ...FLAGS[reason], ...present });
    expect(result.message).toMatch(/^[a-z]/);
    for (const [key, value] of entries) if (value === undefined) expect(result).not.toHaveProperty(key);
  });
}
