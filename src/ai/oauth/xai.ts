/**
 * xAI Grok OAuth (SuperGrok / Premium+): the device-code login, the refresh, and the credential,
 * with the state in auth.json's `providers["xai-oauth"]` as Python Hermes keeps it:
 * `{tokens: {access_token, refresh_token, id_token, expires_in, token_type}, last_refresh,
 * auth_mode: "oauth_device_code", discovery: {authorization_endpoint, token_endpoint}, redirect_uri}`.
 *
 * The token endpoint comes from xAI's OIDC discovery and is cached in auth.json, so every URL the
 * refresh token is sent to is checked (https on x.ai or a subdomain) before use: a discovery
 * answer tampered with once must not receive the refresh token forever after.
 */
import { announceDeviceCode, pollDeviceCode, standardPollOutcome } from "./device-flow.js";
import { oauthErrorText, requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  isRecord,
  jwtClaims,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  positive,
  text,
} from "./types.js";

export const XAI_ISSUER = "https://auth.x.ai";
export const XAI_CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828";
export const XAI_SCOPE = "openid profile email offline_access grok-cli:access api:access";
export const XAI_OAUTH_BASE_URL = "https://api.x.ai/v1";
/** xAI's tokens live hours: renew up to an hour early (upstream), so long-running gateways never lapse. */
export const XAI_REFRESH_SKEW_S = 3600;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const RELOGIN = "log in again: hermes auth add xai-oauth --type oauth";

/** `HERMES_XAI_OAUTH_ISSUER` (a proxy or a test server), else auth.x.ai. */
export function xaiIssuer(env: Env): string {
  return (text(env["HERMES_XAI_OAUTH_ISSUER"]) ?? XAI_ISSUER).replace(/\/+$/, "");
}

/**
 * Whether `url` may receive xAI tokens: https on `x.ai` or a subdomain, or the origin of the
 * issuer the user named in `HERMES_XAI_OAUTH_ISSUER`.
 */
export function xaiEndpointAllowed(url: string, env: Env): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const override = text(env["HERMES_XAI_OAUTH_ISSUER"]);
  if (override) {
    try {
      if (new URL(override).origin === parsed.origin) return true;
    } catch {
      // An unparsable override allows nothing extra.
    }
  }
  const host = parsed.hostname.toLowerCase();
  return parsed.protocol === "https:" && (host === "x.ai" || host.endsWith(".x.ai"));
}

/**
 * Where requests with the login's bearer go: `HERMES_XAI_BASE_URL` or `XAI_BASE_URL` when it is
 * https on x.ai or a loopback address (a local proxy), else api.x.ai. The bearer is only valid at
 * xAI; sending it to another host would hand it out.
 */
export function xaiInferenceUrl(env: Env): string {
  const candidate = (text(env["HERMES_XAI_BASE_URL"]) ?? text(env["XAI_BASE_URL"]))?.replace(/\/+$/, "");
  if (!candidate) return XAI_OAUTH_BASE_URL;
  try {
    const parsed = new URL(candidate);
    const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, "");
    const loopback = host === "localhost" || host === "127.0.0.1" || host === "::1";
    const xai = parsed.protocol === "https:" && (host === "x.ai" || host.endsWith(".x.ai"));
    return loopback || xai ? candidate : XAI_OAUTH_BASE_URL;
  } catch {
    return XAI_OAUTH_BASE_URL;
  }
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
}

/** xAI's OIDC discovery, with both endpoints checked. Throws `OAuthError`. */
export async function xaiDiscovery(deps: OAuthDeps): Promise<Discovery> {
  const url = under(xaiIssuer(deps.env), "/.well-known/openid-configuration");
  const answer = await requestJson("xai-oauth", url, { method: "GET" }, deps);
  const authorization = text(answer.body["authorization_endpoint"]);
  const token = text(answer.body["token_endpoint"]);
  if (answer.status !== 200 || !authorization || !token) {
    throw new OAuthError(
      "xai-oauth",
      `xAI's OIDC discovery (${url}) gave no usable endpoints (HTTP ${answer.status}); try again shortly.`,
      { code: "discovery_failed" },
    );
  }
  for (const [field, value] of [
    ["authorization_endpoint", authorization],
    ["token_endpoint", token],
  ] as const) {
    if (!xaiEndpointAllowed(value, deps.env)) {
      throw new OAuthError(
        "xai-oauth",
        `xAI's OIDC discovery named ${field} ${value}, which is not https on x.ai; refusing to send tokens there.`,
        { code: "discovery_invalid" },
      );
    }
  }
  return { authorization_endpoint: authorization, token_endpoint: token };
}

/**
 * Runs the device-code login: discovery, a user code from the issuer, shown with its page, polled
 * at the token endpoint until approved. Returns the state to store. Throws `OAuthError`.
 */
export async function xaiDeviceLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { signal?: AbortSignal; timeoutS?: number } = {},
): Promise<Record<string, unknown>> {
  const discovery = await xaiDiscovery(deps);
  const start = await requestJson(
    "xai-oauth",
    under(xaiIssuer(deps.env), "/oauth2/device/code"),
    { form: { client_id: XAI_CLIENT_ID, scope: XAI_SCOPE } },
    deps,
  );
  const { deviceCode, expiresIn, interval } = announceDeviceCode(
    "xai-oauth",
    "xAI",
    start,
    show,
    options.timeoutS,
  );
  const token = await pollDeviceCode({
    provider: "xai-oauth",
    interval: interval ?? 5,
    expiresIn,
    deps,
    signal: options.signal,
    poll: async () =>
      standardPollOutcome(
        "xai-oauth",
        await requestJson(
          "xai-oauth",
          discovery.token_endpoint,
          { form: { grant_type: DEVICE_GRANT, client_id: XAI_CLIENT_ID, device_code: deviceCode } },
          deps,
        ),
        (body) => body,
      ),
  });
  const access = text(token["access_token"]);
  const refresh = text(token["refresh_token"]);
  if (!access || !refresh) {
    throw new OAuthError("xai-oauth", "xAI approved the login but sent no refresh token; try again.", {
      code: "device_token_invalid",
    });
  }
  return {
    tokens: tokenBlock(token, access, refresh),
    last_refresh: new Date(deps.now()).toISOString(),
    auth_mode: "oauth_device_code",
    discovery,
    redirect_uri: "",
  };
}

/**
 * Redeems the refresh token at the cached (re-checked) token endpoint, else a fresh discovery's.
 * Returns the new state. Throws `OAuthError`: `relogin` on 400/401; a 403 is xAI refusing API
 * access for the account's tier, which a new login does not change.
 */
export async function refreshXai(
  state: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<Record<string, unknown>> {
  const tokens = isRecord(state["tokens"]) ? state["tokens"] : {};
  const refreshToken = text(tokens["refresh_token"]);
  if (!refreshToken) {
    throw new OAuthError("xai-oauth", `the xAI login has no refresh token; ${RELOGIN}`, {
      code: "missing_refresh_token",
      relogin: true,
    });
  }
  const cached = isRecord(state["discovery"]) ? text(state["discovery"]["token_endpoint"]) : undefined;
  const endpoint = cached ?? (await xaiDiscovery(deps)).token_endpoint;
  if (!xaiEndpointAllowed(endpoint, deps.env)) {
    throw new OAuthError(
      "xai-oauth",
      `auth.json names ${endpoint} as xAI's token endpoint, which is not https on x.ai; refusing to send the refresh token there. ${RELOGIN}`,
      { code: "discovery_invalid", relogin: true },
    );
  }
  const answer = await requestJson(
    "xai-oauth",
    endpoint,
    { form: { grant_type: "refresh_token", client_id: XAI_CLIENT_ID, refresh_token: refreshToken } },
    deps,
  );
  const access = text(answer.body["access_token"]);
  if (answer.status === 403) {
    throw new OAuthError(
      "xai-oauth",
      `xAI refused to renew the login (HTTP 403: ${oauthErrorText(answer)}): this account is not allowed API access on its plan. Logging in again does not change that; use an XAI_API_KEY with provider xai instead.`,
      { code: "tier_denied" },
    );
  }
  if (answer.status !== 200 || !access) {
    const refused = answer.status === 400 || answer.status === 401;
    throw new OAuthError(
      "xai-oauth",
      `xAI refused to renew the login (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused ? `; ${RELOGIN}` : "; try again shortly."),
      { code: refused ? "refresh_refused" : "refresh_failed", relogin: refused },
    );
  }
  return {
    ...state,
    tokens: { ...tokens, ...tokenBlock(answer.body, access, refreshToken) },
    last_refresh: new Date(deps.now()).toISOString(),
    auth_mode: text(state["auth_mode"]) ?? "oauth_device_code",
    discovery: { ...(isRecord(state["discovery"]) ? state["discovery"] : {}), token_endpoint: endpoint },
  };
}

/** The credential in a stored state (the access token and its JWT expiry). */
export function xaiCredential(state: Record<string, unknown>, env: Env): OAuthCredential | undefined {
  const tokens = isRecord(state["tokens"]) ? state["tokens"] : {};
  const accessToken = text(tokens["access_token"]);
  if (!accessToken) return undefined;
  return { accessToken, baseUrl: xaiInferenceUrl(env), expiresAt: positive(jwtClaims(accessToken)["exp"]) };
}

/**
 * How early to renew: an hour, but two minutes for a token that lives 45 minutes or less when
 * read (a short device-code token would otherwise be renewed on every call, spending xAI's
 * single-use refresh tokens).
 */
export function xaiRefreshSkew(expiresAt: number | undefined, nowMs: number): number {
  if (expiresAt === undefined) return XAI_REFRESH_SKEW_S;
  const remaining = expiresAt - nowMs / 1000;
  return remaining > 0 && remaining <= 45 * 60 ? 120 : XAI_REFRESH_SKEW_S;
}

function tokenBlock(body: Record<string, unknown>, access: string, refresh: string): Record<string, unknown> {
  return {
    access_token: access,
    refresh_token: text(body["refresh_token"]) ?? refresh,
    id_token: text(body["id_token"]) ?? "",
    expires_in: body["expires_in"] ?? null,
    token_type: text(body["token_type"]) ?? "Bearer",
  };
}
