/**
 * Qwen OAuth (qwen.ai accounts, the qwen-code CLI's public client): a device-code login protected
 * by PKCE (the challenge goes with the code request, the verifier with each poll), the refresh, and
 * the credential. Python Hermes reads the Qwen CLI's own file (`~/.qwen/oauth_creds.json`) and marks
 * `providers["qwen-oauth"]` in auth.json; Hermes-TS logs in itself and keeps the tokens in
 * `providers["qwen-oauth"]` with the Qwen CLI's field names (`access_token`, `refresh_token`,
 * `token_type`, `resource_url`, `expiry_date` in epoch ms). Without such a login the Qwen CLI's
 * own file is the credential, renewed and written back there (qwen-cli.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { announceDeviceCode, pollDeviceCode, standardPollOutcome } from "./device-flow.js";
import { oauthErrorText, requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  positive,
  text,
} from "./types.js";

export const QWEN_OAUTH_URL = "https://chat.qwen.ai";
export const QWEN_CLIENT_ID = "f0304373b74a44d2b584a3fb70ca9e56";
export const QWEN_SCOPE = "openid profile email model.completion";
export const QWEN_BASE_URL = "https://portal.qwen.ai/v1";
export const QWEN_REFRESH_SKEW_S = 120;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** What Qwen's tokens live when the answer does not say (upstream's assumption). */
const DEFAULT_LIFETIME_S = 6 * 60 * 60;
const RELOGIN = "log in again: hermes auth add qwen-oauth --type oauth";

/** `HERMES_QWEN_OAUTH_URL` (a proxy or a test server), else chat.qwen.ai. */
export function qwenOAuthUrl(env: Env): string {
  return (text(env["HERMES_QWEN_OAUTH_URL"]) ?? QWEN_OAUTH_URL).replace(/\/+$/, "");
}

/**
 * Runs the login: a device code requested with a PKCE challenge, shown with its page, polled with
 * the verifier until approved. Returns the state to store. Throws `OAuthError`.
 */
export async function qwenDeviceLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { signal?: AbortSignal; timeoutS?: number; random?: (n: number) => Buffer } = {},
): Promise<Record<string, unknown>> {
  const base = qwenOAuthUrl(deps.env);
  const verifier = (options.random ?? randomBytes)(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const start = await requestJson(
    "qwen-oauth",
    under(base, "/api/v1/oauth2/device/code"),
    {
      form: {
        client_id: QWEN_CLIENT_ID,
        scope: QWEN_SCOPE,
        code_challenge: challenge,
        code_challenge_method: "S256",
      },
    },
    deps,
  );
  const { deviceCode, expiresIn, interval } = announceDeviceCode(
    "qwen-oauth",
    "Qwen",
    start,
    show,
    options.timeoutS,
  );
  const token = await pollDeviceCode({
    provider: "qwen-oauth",
    interval: interval ?? 2,
    expiresIn,
    deps,
    signal: options.signal,
    poll: async () => {
      const answer = await requestJson(
        "qwen-oauth",
        under(base, "/api/v1/oauth2/token"),
        {
          form: {
            grant_type: DEVICE_GRANT,
            client_id: QWEN_CLIENT_ID,
            device_code: deviceCode,
            code_verifier: verifier,
          },
        },
        deps,
      );
      // Qwen answers a too-eager poll with 429 rather than the RFC's slow_down error.
      if (answer.status === 429) return { type: "slow_down" };
      return standardPollOutcome("qwen-oauth", answer, (body) => body);
    },
  });
  return tokenState(token, {}, deps);
}

/** Redeems the refresh token; returns the new state. Throws `OAuthError` (`relogin` when refused). */
export async function refreshQwen(
  state: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<Record<string, unknown>> {
  const refreshToken = text(state["refresh_token"]);
  if (!refreshToken) {
    throw new OAuthError("qwen-oauth", `the Qwen login has no refresh token; ${RELOGIN}`, {
      code: "missing_refresh_token",
      relogin: true,
    });
  }
  const answer = await requestJson(
    "qwen-oauth",
    under(qwenOAuthUrl(deps.env), "/api/v1/oauth2/token"),
    { form: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: QWEN_CLIENT_ID } },
    deps,
  );
  if (answer.status >= 400 || !text(answer.body["access_token"])) {
    const refused = answer.status === 400 || answer.status === 401;
    throw new OAuthError(
      "qwen-oauth",
      `Qwen refused to renew the login (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused ? `; ${RELOGIN}` : "; try again shortly."),
      { code: refused ? "refresh_refused" : "refresh_failed", relogin: refused },
    );
  }
  return tokenState({ refresh_token: refreshToken, ...answer.body }, state, deps);
}

/** The state with a token answer applied (Qwen CLI field names; `expiry_date` in epoch ms). */
function tokenState(
  token: Record<string, unknown>,
  base: Record<string, unknown>,
  deps: OAuthDeps,
): Record<string, unknown> {
  const lifetime = positive(token["expires_in"]) ?? DEFAULT_LIFETIME_S;
  return {
    ...base,
    access_token: String(token["access_token"]),
    refresh_token: text(token["refresh_token"]) ?? text(base["refresh_token"]) ?? null,
    token_type: text(token["token_type"]) ?? text(base["token_type"]) ?? "Bearer",
    resource_url: text(token["resource_url"]) ?? text(base["resource_url"]) ?? "portal.qwen.ai",
    expiry_date: Math.round(deps.now() + lifetime * 1000),
  };
}

/** Epoch seconds when the stored token expires, if known. */
export function qwenExpiresAt(state: Record<string, unknown>): number | undefined {
  const ms = positive(state["expiry_date"]);
  return ms === undefined ? undefined : ms / 1000;
}

/** The credential in a stored state (the base URL is the catalog's: `HERMES_QWEN_BASE_URL` or portal.qwen.ai). */
export function qwenCredential(state: Record<string, unknown>, _env: Env): OAuthCredential | undefined {
  const accessToken = text(state["access_token"]);
  if (!accessToken) return undefined;
  return { accessToken, expiresAt: qwenExpiresAt(state) };
}
