/**
 * MiniMax OAuth: MiniMax's user-code grant with PKCE (a code shown to the user, approved on
 * MiniMax's page, polled with the verifier), the refresh, and the credential, with the state in
 * auth.json's `providers["minimax-oauth"]` as Python Hermes keeps it: region, portal and inference
 * URLs, client id, scope, the access/refresh pair, `expires_at` as ISO time. Requests go to
 * MiniMax's Anthropic-compatible endpoint with the token as a bearer.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  isRecord,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  text,
} from "./types.js";

export const MINIMAX_CLIENT_ID = "78257093-7e40-4613-99e0-527b14b39113";
export const MINIMAX_SCOPE = "group_id profile model.completion";
export const MINIMAX_REFRESH_SKEW_S = 60;
const USER_CODE_GRANT = "urn:ietf:params:oauth:grant-type:user_code";
const RELOGIN = "log in again: hermes auth add minimax-oauth --type oauth";

export type MinimaxRegion = "global" | "cn";

const REGIONS: Record<MinimaxRegion, { portal: string; inference: string }> = {
  global: { portal: "https://api.minimax.io", inference: "https://api.minimax.io/anthropic" },
  cn: { portal: "https://api.minimaxi.com", inference: "https://api.minimaxi.com/anthropic" },
};
/** Hosts a stored state may send the bearer to (its own region's). */
const INFERENCE_HOSTS = new Set(["api.minimax.io", "api.minimaxi.com"]);

/** The portal for `region`, or `HERMES_MINIMAX_OAUTH_BASE_URL` (a proxy or a test server). */
export function minimaxPortal(env: Env, region: MinimaxRegion): string {
  return (text(env["HERMES_MINIMAX_OAUTH_BASE_URL"]) ?? REGIONS[region].portal).replace(/\/+$/, "");
}

/**
 * Where inference goes for a stored state: its `inference_base_url` when that is https on
 * MiniMax's own hosts, else the region's default. An edited auth.json cannot redirect the bearer.
 */
export function minimaxInferenceUrl(state: Record<string, unknown>): string {
  const region: MinimaxRegion = state["region"] === "cn" ? "cn" : "global";
  const stored = text(state["inference_base_url"]);
  if (stored) {
    try {
      const url = new URL(stored);
      if (url.protocol === "https:" && INFERENCE_HOSTS.has(url.hostname)) return stored.replace(/\/+$/, "");
    } catch {
      // Fall through to the region's default.
    }
  }
  return REGIONS[region].inference;
}

/**
 * Runs the login: a user code requested with a PKCE challenge and a state (checked on the answer),
 * shown with MiniMax's page, then polled with the verifier until MiniMax reports success. Returns
 * the state to store. Throws `OAuthError`.
 */
export async function minimaxLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { region?: MinimaxRegion; signal?: AbortSignal; timeoutS?: number } = {},
): Promise<Record<string, unknown>> {
  const region = options.region ?? "global";
  const portal = minimaxPortal(deps.env, region);
  const verifier = randomBytes(48).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const state = randomBytes(16).toString("base64url");
  const start = await requestJson(
    "minimax-oauth",
    under(portal, "/oauth/code"),
    {
      form: {
        response_type: "code",
        client_id: MINIMAX_CLIENT_ID,
        scope: MINIMAX_SCOPE,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state,
      },
      headers: { "x-request-id": randomUUID() },
    },
    deps,
  );
  const userCode = text(start.body["user_code"]);
  const page = text(start.body["verification_uri"]);
  const expiredIn = Number(start.body["expired_in"]);
  if (start.status !== 200 || !userCode || !page || !Number.isFinite(expiredIn)) {
    throw new OAuthError(
      "minimax-oauth",
      `MiniMax did not start a login (HTTP ${start.status}: ${minimaxErrorText(start.body, start.raw)}).`,
    );
  }
  if (start.body["state"] !== state) {
    throw new OAuthError("minimax-oauth", "MiniMax answered with another login's state; not continuing.", {
      code: "state_mismatch",
    });
  }
  const nowMs = deps.now();
  const deadlineMs = Math.min(
    expiryMs(expiredIn, nowMs),
    options.timeoutS !== undefined ? nowMs + options.timeoutS * 1000 : Number.POSITIVE_INFINITY,
  );
  show({
    verificationUri: approvalPage(page),
    userCode,
    expiresIn: Math.max(1, Math.round((deadlineMs - nowMs) / 1000)),
  });
  const intervalMs = Math.max(2000, Number(start.body["interval"]) || 2000);
  const tokenUrl = under(portal, "/oauth/token");
  while (deps.now() < deadlineMs) {
    if (options.signal?.aborted) throw options.signal.reason;
    const answer = await requestJson(
      "minimax-oauth",
      tokenUrl,
      {
        form: {
          grant_type: USER_CODE_GRANT,
          client_id: MINIMAX_CLIENT_ID,
          user_code: userCode,
          code_verifier: verifier,
        },
      },
      deps,
    );
    if (answer.status !== 200) {
      throw new OAuthError(
        "minimax-oauth",
        `the MiniMax login failed (HTTP ${answer.status}: ${minimaxErrorText(answer.body, answer.raw)}).`,
      );
    }
    const status = answer.body["status"];
    if (status === "error") {
      throw new OAuthError("minimax-oauth", "MiniMax reported the login as failed; try again later.", {
        code: "access_denied",
      });
    }
    if (status === "success") {
      const access = text(answer.body["access_token"]);
      const refresh = text(answer.body["refresh_token"]);
      if (!access || !refresh || answer.body["expired_in"] === undefined) {
        throw new OAuthError(
          "minimax-oauth",
          "MiniMax approved the login but sent incomplete tokens; try again.",
        );
      }
      return {
        provider: "minimax-oauth",
        region,
        portal_base_url: portal,
        inference_base_url: REGIONS[region].inference,
        client_id: MINIMAX_CLIENT_ID,
        scope: MINIMAX_SCOPE,
        token_type: text(answer.body["token_type"]) ?? "Bearer",
        access_token: access,
        refresh_token: refresh,
        resource_url: text(answer.body["resource_url"]) ?? null,
        ...expiryFields(Number(answer.body["expired_in"]), deps.now()),
      };
    }
    await deps.sleep(intervalMs, options.signal);
  }
  throw new OAuthError(
    "minimax-oauth",
    "the code expired before the login was approved; run the login again.",
    {
      code: "expired_token",
    },
  );
}

/** Redeems the refresh token; returns the new state. Throws `OAuthError` (`relogin` when refused). */
export async function refreshMinimax(
  state: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<Record<string, unknown>> {
  const refreshToken = text(state["refresh_token"]);
  if (!refreshToken) {
    throw new OAuthError("minimax-oauth", `the MiniMax login has no refresh token; ${RELOGIN}`, {
      code: "missing_refresh_token",
      relogin: true,
    });
  }
  const region: MinimaxRegion = state["region"] === "cn" ? "cn" : "global";
  // The portal is the region's (or the env override): a stored URL is not trusted with the token.
  const answer = await requestJson(
    "minimax-oauth",
    under(minimaxPortal(deps.env, region), "/oauth/token"),
    {
      form: {
        grant_type: "refresh_token",
        client_id: text(state["client_id"]) ?? MINIMAX_CLIENT_ID,
        refresh_token: refreshToken,
      },
    },
    deps,
  );
  const access = text(answer.body["access_token"]);
  if (answer.status !== 200 || answer.body["status"] !== "success" || !access) {
    const body = `${answer.raw}`.toLowerCase();
    const refused =
      answer.status === 200 ||
      ["invalid_grant", "refresh_token_reused", "invalid_refresh_token"].some((m) => body.includes(m));
    throw new OAuthError(
      "minimax-oauth",
      `MiniMax refused to renew the login (HTTP ${answer.status}: ${minimaxErrorText(answer.body, answer.raw)})` +
        (refused ? `; ${RELOGIN}` : "; try again shortly."),
      { code: refused ? "refresh_refused" : "refresh_failed", relogin: refused },
    );
  }
  return {
    ...state,
    access_token: access,
    refresh_token: text(answer.body["refresh_token"]) ?? refreshToken,
    ...expiryFields(Number(answer.body["expired_in"]), deps.now()),
  };
}

/** Epoch seconds when the stored token expires, if known. */
export function minimaxExpiresAt(state: Record<string, unknown>): number | undefined {
  const iso = text(state["expires_at"]);
  const ms = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

export function minimaxCredential(state: Record<string, unknown>, _env: Env): OAuthCredential | undefined {
  const accessToken = text(state["access_token"]);
  if (!accessToken) return undefined;
  return { accessToken, baseUrl: minimaxInferenceUrl(state), expiresAt: minimaxExpiresAt(state) };
}

/**
 * MiniMax's `expired_in` is an absolute time in epoch ms on some answers and a lifetime in seconds
 * on others; a value above half of now-in-ms can only be the former.
 */
export function expiryMs(expiredIn: number, nowMs: number): number {
  return expiredIn > nowMs / 2 ? expiredIn : nowMs + Math.max(1, expiredIn) * 1000;
}

function expiryFields(expiredIn: number, nowMs: number): Record<string, unknown> {
  const at = expiryMs(Number.isFinite(expiredIn) ? expiredIn : 900, nowMs);
  return {
    obtained_at: new Date(nowMs).toISOString(),
    expires_at: new Date(at).toISOString(),
    expires_in: Math.max(0, Math.round((at - nowMs) / 1000)),
  };
}

/**
 * MiniMax's approval page: its answers have named `www.minimaxi.io/oauth-authorize`, which only
 * redirects to the home page; the page lives on `platform.minimaxi.io` (upstream's fix, #19337).
 */
export function approvalPage(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.hostname === "www.minimaxi.io" && url.pathname.startsWith("/oauth-authorize")) {
      url.hostname = "platform.minimaxi.io";
      return url.toString();
    }
  } catch {
    // Shown as it came.
  }
  return uri;
}

function minimaxErrorText(body: Record<string, unknown>, raw: string): string {
  const base = isRecord(body["base_resp"]) ? text(body["base_resp"]["status_msg"]) : undefined;
  return base ?? text(body["error_description"]) ?? text(body["error"]) ?? (raw || "no answer");
}
