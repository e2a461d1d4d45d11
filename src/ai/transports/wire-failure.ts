/**
 * How the transports word a failure, in one place: the shape a wire protocol reports a failure
 * in (`WireFailure`, which `createWireTransport` turns into a `ProviderError`), the common
 * wordings (an HTTP error answer, a refused connection, a wire that failed mid-response), and
 * the reading of the errors the Stainless-generated SDKs (`openai`, `@anthropic-ai/sdk`) throw.
 *
 * The wordings matter beyond the user: the classifier's disconnect and timeout patterns
 * (`error-patterns.ts`) match "failed mid-response", "ended before", "timed out".
 */
import type { ProviderErrorInit } from "../types.js";
import { asRecord } from "./wire-values.js";

/**
 * A failure in `ProviderError`'s terms, without what the skeleton adds itself: `baseUrl`,
 * `partial` (unless set here), and `retryAfterMs` from `headers` (unless set here).
 */
export interface WireFailure extends Omit<ProviderErrorInit, "baseUrl" | "stalled"> {
  message: string;
}

/** The longest provider detail quoted in a message. */
const DETAIL_MAX = 500;

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** An error's first line, its code when the message lacks it, and its cause's message. */
export function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code: unknown = Reflect.get(err, "code");
  const codeText = typeof code === "string" && !err.message.includes(code) ? ` (${code})` : "";
  const cause =
    err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : "";
  return `${firstLine(err.message)}${codeText}${cause}`;
}

export function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? "";
}

/** An Error named "AbortError", carrying the signal's reason as its cause. */
export function abortError(signal: AbortSignal): Error {
  const error = new Error("The request was aborted.", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

/** Response headers as a plain record with lower-case names; undefined when there are none. */
export function headerRecord(headers: unknown): Record<string, string> | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  const out: Record<string, string> = {};
  // Any Headers (the platform's or util/fetch-classes.ts's) has forEach; checking for the global
  // class by instanceof would load undici.
  const withForEach = headers as { forEach?: unknown };
  if (typeof withForEach.forEach === "function" && !Array.isArray(headers)) {
    (headers as Headers).forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
  } else {
    for (const [name, value] of Object.entries(headers))
      if (typeof value === "string") out[name.toLowerCase()] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The provider answered with an error: an HTTP status, or (`status` undefined) an error inside
 * a 200 response or stream. `where` says which when it matters ("mid-stream").
 */
export function answeredWith(
  baseUrl: string,
  fields: {
    status: number | undefined;
    body: string;
    detail: string;
    where?: string;
    headers?: Record<string, string> | undefined;
    cause?: unknown;
  },
): WireFailure {
  const { status, body, detail, where, headers, cause } = fields;
  const summary = status !== undefined ? `HTTP ${status}` : "an error";
  return {
    message: `The provider at ${baseUrl} answered with ${summary}${where ? ` ${where}` : ""}: ${clip(detail, DETAIL_MAX)}`,
    body,
    ...(status !== undefined ? { status } : {}),
    ...(headers ? { headers } : {}),
    ...(cause !== undefined ? { cause } : {}),
  };
}

/** The connection was never made (or never answered): refused, unresolvable, timed out. */
export function couldNotConnect(
  baseUrl: string,
  err: unknown,
  how: { timedOut: boolean; detail?: string | undefined; hint?: string },
): WireFailure {
  const hint = how.hint ?? "Is the server running and the base URL right?";
  return {
    message: how.timedOut
      ? `The request to ${baseUrl} timed out before the server answered.`
      : `Could not connect to ${baseUrl}${how.detail ? `: ${how.detail}` : ""}. ${hint}`,
    transport: true,
    cause: err,
  };
}

/**
 * Anything else escaping an SDK mid-stream is the wire failing: undici's "terminated" (the
 * server closed the socket), ECONNRESET, "socket hang up", "premature close", a chunk cut short.
 */
export function failedMidResponse(baseUrl: string, err: unknown): WireFailure {
  return {
    message: `The connection to ${baseUrl} failed mid-response: ${describe(err)}`,
    transport: true,
    cause: err,
  };
}

/** What the Stainless-generated SDKs' `APIError` carries (openai and @anthropic-ai/sdk alike). */
export interface SdkApiError extends Error {
  readonly status: number | undefined;
  readonly error: unknown;
  readonly headers: Headers | undefined;
}

/** The error classes of a Stainless-generated SDK module. */
export interface StainlessErrors<E extends SdkApiError> {
  APIError: abstract new (...args: never[]) => E;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/**
 * A failure thrown by a Stainless SDK as a `WireFailure`. `inBandStatus` gives the HTTP status an
 * error that arrived inside a 200 stream stands for (it has none of its own); `detail`, the
 * provider's own wording when the SDK extracts it.
 */
export function readSdkError<E extends SdkApiError>(
  err: unknown,
  sdk: StainlessErrors<E>,
  baseUrl: string,
  read: {
    inBandStatus: (error: E) => number | undefined;
    detail?: (error: E) => string | null | undefined;
  },
): WireFailure {
  if (err instanceof sdk.APIConnectionError) {
    const cause = err.cause instanceof Error ? describe(err.cause) : undefined;
    return couldNotConnect(baseUrl, err, {
      timedOut: err instanceof sdk.APIConnectionTimeoutError,
      detail: cause,
    });
  }
  if (err instanceof sdk.APIError) {
    const status = err.status ?? read.inBandStatus(err);
    // A non-JSON error body only survives in the SDK's message, behind "<status> ".
    const body =
      err.error === undefined
        ? err.message.replace(/^\d{3} /, "")
        : (JSON.stringify(err.error) ?? String(err.error));
    const message = asRecord(err.error)?.["message"];
    const detail = read.detail?.(err) || (typeof message === "string" && message !== "" ? message : body);
    return answeredWith(baseUrl, { status, body, detail, headers: headerRecord(err.headers), cause: err });
  }
  return failedMidResponse(baseUrl, err);
}
