/**
 * Nous Portal: the device-code login, the refresh, and the inference credential, with the state in
 * auth.json's `providers.nous` as Python Hermes keeps it (portal and inference URLs, client id,
 * scope, the access/refresh pair with ISO times, and the `agent_key` slots, which hold the access
 * token itself: the Portal's invoke JWT is the inference bearer).
 */
import { announceDeviceCode, pollDeviceCode, standardPollOutcome } from "./device-flow.js";
import { oauthErrorText, requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  jwtClaims,
  loginCommand,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  positive,
  text,
} from "./types.js";

export const NOUS_PORTAL_URL = "https://portal.nousresearch.com";
export const NOUS_INFERENCE_URL = "https://inference-api.nousresearch.com/v1";
export const NOUS_CLIENT_ID = "hermes-cli";
export const NOUS_SCOPE = "inference:invoke";
/** Refresh this long before the access token expires (upstream's skew). */
export const NOUS_REFRESH_SKEW_S = 120;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** Inference hosts a Portal answer may send the bearer to (the env override adds its own). */
const ALLOWED_INFERENCE_HOSTS = new Set(["inference-api.nousresearch.com", "welcome-api.nousresearch.com"]);

/** `HERMES_PORTAL_BASE_URL` / `NOUS_PORTAL_BASE_URL`, else the stored one, else the Portal. */
export function nousPortalUrl(env: Env, state?: Record<string, unknown>): string {
  return (
    text(env["HERMES_PORTAL_BASE_URL"]) ??
    text(env["NOUS_PORTAL_BASE_URL"]) ??
    text(state?.["portal_base_url"]) ??
    NOUS_PORTAL_URL
  ).replace(/\/+$/, "");
}

/**
 * Where inference goes: `NOUS_INFERENCE_BASE_URL` (the user's own override), else the URL the
 * Portal gave when it is https on an allowed host, else the default. A Portal answer naming any
 * other host is not trusted with the bearer.
 */
export function nousInferenceUrl(env: Env, state?: Record<string, unknown>): string {
  const override = text(env["NOUS_INFERENCE_BASE_URL"]);
  if (override) return override.replace(/\/+$/, "");
  const stored = trustedInferenceUrl(text(state?.["inference_base_url"]), env);
  return stored ?? NOUS_INFERENCE_URL;
}

function trustedInferenceUrl(url: string | undefined, env: Env): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const override = text(env["NOUS_INFERENCE_BASE_URL"]);
    const overrideHost = override ? new URL(override).hostname : undefined;
    if (parsed.hostname === overrideHost) return url.replace(/\/+$/, "");
    if (parsed.protocol !== "https:" || !ALLOWED_INFERENCE_HOSTS.has(parsed.hostname)) return undefined;
    return url.replace(/\/+$/, "");
  } catch {
    return undefined;
  }
}

/**
 * Runs the device-code login: asks the Portal for a code, shows it (`show`), polls until the user
 * approves, and returns the state to store as `providers.nous`. Throws `OAuthError`.
 */
export async function nousDeviceLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { signal?: AbortSignal; timeoutS?: number } = {},
): Promise<Record<string, unknown>> {
  const portal = nousPortalUrl(deps.env);
  const start = await requestJson(
    "nous",
    under(portal, "/api/oauth/device/code"),
    { form: { client_id: NOUS_CLIENT_ID, scope: NOUS_SCOPE } },
    deps,
  );
  const { deviceCode, expiresIn, interval } = announceDeviceCode(
    "nous",
    "Nous Portal",
    start,
    show,
    options.timeoutS,
  );
  const token = await pollDeviceCode({
    provider: "nous",
    // Upstream polls at most every second whatever the Portal says.
    interval: Math.min(1, interval ?? 1),
    expiresIn,
    deps,
    signal: options.signal,
    poll: async () =>
      standardPollOutcome(
        "nous",
        await requestJson(
          "nous",
          under(portal, "/api/oauth/token"),
          { form: { grant_type: DEVICE_GRANT, client_id: NOUS_CLIENT_ID, device_code: deviceCode } },
          deps,
        ),
        (body) => body,
      ),
  });
  return applyTokens({ portal_base_url: portal, client_id: NOUS_CLIENT_ID }, token, deps);
}

/**
 * Redeems the refresh token and returns the new state (the old one is not changed). Throws
 * `OAuthError` with `relogin` when the Portal refuses the refresh token or there is none.
 */
export async function refreshNous(
  state: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<Record<string, unknown>> {
  const refreshToken = text(state["refresh_token"]);
  if (!refreshToken) {
    throw new OAuthError(
      "nous",
      `the Nous Portal login has no refresh token; log in again: ${loginCommand("nous")}`,
      {
        code: "missing_refresh_token",
        relogin: true,
      },
    );
  }
  const portal = nousPortalUrl(deps.env, state);
  const answer = await requestJson(
    "nous",
    under(portal, "/api/oauth/token"),
    {
      form: {
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: text(state["client_id"]) ?? NOUS_CLIENT_ID,
      },
    },
    deps,
  );
  if (answer.status >= 400 || typeof answer.body["access_token"] !== "string") {
    const refused =
      answer.status === 400 || answer.status === 401 || answer.body["error"] === "invalid_grant";
    throw new OAuthError(
      "nous",
      `Nous Portal refused to renew the login (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused ? `; log in again: ${loginCommand("nous")}` : "; try again shortly."),
      { code: refused ? "refresh_refused" : "refresh_failed", relogin: refused },
    );
  }
  // A Portal that does not rotate the refresh token keeps the old one valid.
  return applyTokens(state, { refresh_token: refreshToken, ...answer.body }, deps);
}

/** The state with a token answer's fields applied (times as ISO strings, the bearer as agent_key). */
function applyTokens(
  base: Record<string, unknown>,
  token: Record<string, unknown>,
  deps: OAuthDeps,
): Record<string, unknown> {
  const accessToken = String(token["access_token"]);
  const nowMs = deps.now();
  const exp = positive(jwtClaims(accessToken)["exp"]);
  const expiresIn = positive(token["expires_in"]) ?? (exp ? Math.max(0, exp - nowMs / 1000) : 3600);
  const expiresAt = new Date(exp ? exp * 1000 : nowMs + expiresIn * 1000).toISOString();
  const obtainedAt = new Date(nowMs).toISOString();
  const inference =
    trustedInferenceUrl(text(token["inference_base_url"]), deps.env) ?? text(base["inference_base_url"]);
  return {
    ...base,
    portal_base_url: text(base["portal_base_url"]) ?? nousPortalUrl(deps.env),
    inference_base_url: inference ?? NOUS_INFERENCE_URL,
    client_id: text(base["client_id"]) ?? NOUS_CLIENT_ID,
    scope: text(token["scope"]) ?? text(base["scope"]) ?? NOUS_SCOPE,
    token_type: text(token["token_type"]) ?? "Bearer",
    access_token: accessToken,
    refresh_token: text(token["refresh_token"]) ?? text(base["refresh_token"]) ?? null,
    obtained_at: obtainedAt,
    expires_at: expiresAt,
    expires_in: Math.round(expiresIn),
    agent_key: accessToken,
    agent_key_id: null,
    agent_key_expires_at: expiresAt,
    agent_key_expires_in: Math.round(expiresIn),
    agent_key_reused: false,
    agent_key_obtained_at: obtainedAt,
  };
}

/** Epoch seconds when the stored access token expires (JWT `exp`, else `expires_at`), if known. */
export function nousExpiresAt(state: Record<string, unknown>): number | undefined {
  const token = text(state["access_token"]);
  const exp = token ? positive(jwtClaims(token)["exp"]) : undefined;
  if (exp) return exp;
  const iso = text(state["expires_at"]);
  const ms = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** The credential in a stored state, or undefined when it holds no access token. */
export function nousCredential(state: Record<string, unknown>, env: Env): OAuthCredential | undefined {
  const accessToken = text(state["access_token"]);
  if (!accessToken) return undefined;
  return { accessToken, baseUrl: nousInferenceUrl(env, state), expiresAt: nousExpiresAt(state) };
}
