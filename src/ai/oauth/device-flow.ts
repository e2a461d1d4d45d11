/**
 * The polling half of a device-code login (RFC 8628): wait the interval, ask, and go on while the
 * user has not approved yet, slower when told to, until the code expires or the user refuses.
 */
import type { JsonAnswer } from "./http.js";
import { oauthErrorText } from "./http.js";
import {
  type DeviceCodePrompt,
  type OAuthDeps,
  OAuthError,
  type OAuthProviderId,
  positive,
  text,
} from "./types.js";

/** One poll's answer, read. */
export type PollOutcome<T> =
  | { type: "done"; value: T }
  | { type: "pending" }
  | { type: "slow_down"; interval?: number | undefined }
  | { type: "failed"; error: OAuthError };

export interface PollOptions<T> {
  provider: OAuthProviderId;
  /** Seconds between polls as the provider asked (0 polls at once; tests use it). */
  interval: number;
  /** Seconds the code stays valid (the loop gives up after it). */
  expiresIn: number;
  /** One poll. A network failure (`OAuthError` code `network`) counts as "not yet". */
  poll: () => Promise<PollOutcome<T>>;
  deps: OAuthDeps;
  signal?: AbortSignal | undefined;
}

/** Polls until done; throws `OAuthError` when the code expires, is refused, or the poll fails. */
export async function pollDeviceCode<T>(options: PollOptions<T>): Promise<T> {
  const { deps, provider } = options;
  let interval = Math.max(0, options.interval);
  const deadline = deps.now() + Math.max(1, options.expiresIn) * 1000;
  while (deps.now() < deadline) {
    if (interval > 0) await deps.sleep(interval * 1000, options.signal);
    if (options.signal?.aborted) throw options.signal.reason;
    let outcome: PollOutcome<T>;
    try {
      outcome = await options.poll();
    } catch (error) {
      if (error instanceof OAuthError && error.code === "network") continue;
      throw error;
    }
    if (outcome.type === "done") return outcome.value;
    if (outcome.type === "failed") throw outcome.error;
    // RFC 8628 §3.5: slow_down adds 5 seconds unless the server names a new interval.
    if (outcome.type === "slow_down") interval = outcome.interval ?? interval + 5;
  }
  throw new OAuthError(
    provider,
    "the code expired before the login was approved in the browser; run the login again.",
    { code: "expired_token" },
  );
}

/**
 * Reads a standard RFC 8628 token answer: an `access_token` is done (via `accept`), the
 * `authorization_pending`/`slow_down` errors mean poll again, `access_denied` and
 * `expired_token` end it, anything else ends it with the server's words.
 */
export function standardPollOutcome<T>(
  provider: OAuthProviderId,
  answer: JsonAnswer,
  accept: (body: Record<string, unknown>) => T,
): PollOutcome<T> {
  const error = answer.body["error"];
  if (answer.status < 400 && typeof answer.body["access_token"] === "string" && !error) {
    return { type: "done", value: accept(answer.body) };
  }
  if (error === "authorization_pending") return { type: "pending" };
  if (error === "slow_down") {
    const interval = answer.body["interval"];
    return {
      type: "slow_down",
      interval: typeof interval === "number" && interval > 0 ? interval : undefined,
    };
  }
  if (error === "access_denied") {
    return {
      type: "failed",
      error: new OAuthError(provider, "the login was refused in the browser.", { code: "access_denied" }),
    };
  }
  if (error === "expired_token") {
    return {
      type: "failed",
      error: new OAuthError(
        provider,
        "the code expired before the login was approved; run the login again.",
        {
          code: "expired_token",
        },
      ),
    };
  }
  return {
    type: "failed",
    error: new OAuthError(provider, `the login failed (HTTP ${answer.status}: ${oauthErrorText(answer)}).`),
  };
}

/**
 * Reads a device-code start answer (RFC 8628 §3.2) and shows the code to the user. Throws with the
 * provider's words when the answer is not one. `interval` is what the provider asked, if anything.
 */
export function announceDeviceCode(
  provider: OAuthProviderId,
  label: string,
  start: JsonAnswer,
  show: (prompt: DeviceCodePrompt) => void,
  timeoutS?: number,
): { deviceCode: string; expiresIn: number; interval: number | undefined } {
  const deviceCode = text(start.body["device_code"]);
  const userCode = text(start.body["user_code"]);
  const verificationUri = text(start.body["verification_uri"]);
  if (start.status >= 400 || !deviceCode || !userCode || !verificationUri) {
    throw new OAuthError(
      provider,
      `${label} did not start a login (HTTP ${start.status}: ${oauthErrorText(start)}).`,
    );
  }
  const expiresIn = Math.min(positive(start.body["expires_in"]) ?? 900, timeoutS ?? Number.POSITIVE_INFINITY);
  show({
    verificationUri,
    verificationUriComplete: text(start.body["verification_uri_complete"]),
    userCode,
    expiresIn,
  });
  const interval = start.body["interval"];
  return {
    deviceCode,
    expiresIn,
    interval: typeof interval === "number" && interval >= 0 ? interval : undefined,
  };
}
