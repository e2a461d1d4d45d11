/**
 * OpenAI Codex (ChatGPT sign-in): the device-code login, the refresh, and the credential, with the
 * state in auth.json's `providers["openai-codex"]` as Python Hermes keeps it:
 * `{tokens: {access_token, refresh_token, id_token}, last_refresh, auth_mode: "chatgpt"}`.
 */
import { pollDeviceCode } from "./device-flow.js";
import { oauthErrorText, requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  isRecord,
  jwtClaims,
  loginCommand,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  positive,
  text,
} from "./types.js";

export const CODEX_ISSUER = "https://auth.openai.com";
export const CODEX_BASE_URL = "https://chatgpt.com/backend-api/codex";
export const CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
export const CODEX_REFRESH_SKEW_S = 120;
/** ChatGPT's device codes last 15 minutes. */
const CODE_LIFETIME_S = 15 * 60;

/** `HERMES_CODEX_ISSUER` (tests, proxies), else auth.openai.com. */
export function codexIssuer(env: Env): string {
  return (text(env["HERMES_CODEX_ISSUER"]) ?? CODEX_ISSUER).replace(/\/+$/, "");
}

/**
 * Runs the ChatGPT device-code login: a user code from the issuer, shown with the page to enter
 * it; polled until approved (403/404 mean "not yet"), then the authorization code it yields is
 * exchanged with its PKCE verifier for tokens. Returns the state to store. Throws `OAuthError`.
 */
export async function codexDeviceLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { signal?: AbortSignal; timeoutS?: number } = {},
): Promise<Record<string, unknown>> {
  const issuer = codexIssuer(deps.env);
  const start = await requestJson(
    "openai-codex",
    under(issuer, "/api/accounts/deviceauth/usercode"),
    { json: { client_id: CODEX_CLIENT_ID } },
    deps,
  );
  const deviceAuthId = text(start.body["device_auth_id"]);
  const userCode = text(start.body["user_code"]) ?? text(start.body["usercode"]);
  if (start.status === 404) {
    throw new OAuthError(
      "openai-codex",
      "device-code sign-in is not enabled for this ChatGPT account: sign in once on chatgpt.com (Settings → Security allows device codes), then try again.",
    );
  }
  if (start.status >= 400 || !deviceAuthId || !userCode) {
    throw new OAuthError(
      "openai-codex",
      `ChatGPT did not start a sign-in (HTTP ${start.status}: ${oauthErrorText(start)}).`,
    );
  }
  const expiresIn = Math.min(CODE_LIFETIME_S, options.timeoutS ?? CODE_LIFETIME_S);
  show({ verificationUri: under(issuer, "/codex/device"), userCode, expiresIn });
  const grant = await pollDeviceCode<{ code: string; verifier: string }>({
    provider: "openai-codex",
    interval: seconds(start.body["interval"]) ?? 5,
    expiresIn,
    deps,
    signal: options.signal,
    poll: async () => {
      const answer = await requestJson(
        "openai-codex",
        under(issuer, "/api/accounts/deviceauth/token"),
        { json: { device_auth_id: deviceAuthId, user_code: userCode } },
        deps,
      );
      if (answer.status === 403 || answer.status === 404) return { type: "pending" };
      const code = text(answer.body["authorization_code"]);
      const verifier = text(answer.body["code_verifier"]);
      if (answer.status < 400 && code && verifier) return { type: "done", value: { code, verifier } };
      return {
        type: "failed",
        error: new OAuthError(
          "openai-codex",
          `the ChatGPT sign-in failed (HTTP ${answer.status}: ${oauthErrorText(answer)}).`,
        ),
      };
    },
  });
  const token = await requestJson(
    "openai-codex",
    under(issuer, "/oauth/token"),
    {
      form: {
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: under(issuer, "/deviceauth/callback"),
        client_id: CODEX_CLIENT_ID,
        code_verifier: grant.verifier,
      },
    },
    deps,
  );
  const tokens = tokenFields(token.body);
  if (token.status >= 400 || !tokens) {
    throw new OAuthError(
      "openai-codex",
      `ChatGPT did not hand out tokens (HTTP ${token.status}: ${oauthErrorText(token)}).`,
    );
  }
  return { tokens, last_refresh: isoZ(deps.now()), auth_mode: "chatgpt" };
}

/** Redeems the refresh token; returns the new state. Throws `OAuthError` (`relogin` when refused). */
export async function refreshCodex(
  state: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<Record<string, unknown>> {
  const tokens = isRecord(state["tokens"]) ? state["tokens"] : {};
  const refreshToken = text(tokens["refresh_token"]);
  if (!refreshToken) {
    throw new OAuthError(
      "openai-codex",
      `the ChatGPT login has no refresh token; log in again: ${loginCommand("openai-codex")}`,
      { code: "missing_refresh_token", relogin: true },
    );
  }
  const answer = await requestJson(
    "openai-codex",
    under(codexIssuer(deps.env), "/oauth/token"),
    { form: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: CODEX_CLIENT_ID } },
    deps,
  );
  const fresh = tokenFields(answer.body);
  if (answer.status >= 400 || !fresh) {
    const refused = answer.status === 400 || answer.status === 401;
    throw new OAuthError(
      "openai-codex",
      `ChatGPT refused to renew the login (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused ? `; log in again: ${loginCommand("openai-codex")}` : "; try again shortly."),
      { code: refused ? "refresh_refused" : "refresh_failed", relogin: refused },
    );
  }
  return {
    ...state,
    // Fields the answer leaves out (a refresh token that was not rotated, the id token) are kept.
    tokens: { ...tokens, ...fresh, refresh_token: fresh["refresh_token"] ?? refreshToken },
    last_refresh: isoZ(deps.now()),
    auth_mode: "chatgpt",
  };
}

/** The credential in a stored state: the access token, its expiry, and the ChatGPT account header. */
export function codexCredential(state: Record<string, unknown>, env: Env): OAuthCredential | undefined {
  const tokens = isRecord(state["tokens"]) ? state["tokens"] : {};
  const accessToken = text(tokens["access_token"]);
  if (!accessToken) return undefined;
  const claims = jwtClaims(accessToken);
  const auth = claims["https://api.openai.com/auth"];
  const account =
    text(tokens["account_id"]) ?? (isRecord(auth) ? text(auth["chatgpt_account_id"]) : undefined);
  return {
    accessToken,
    baseUrl: (text(env["HERMES_CODEX_BASE_URL"]) ?? CODEX_BASE_URL).replace(/\/+$/, ""),
    ...(account ? { headers: { "ChatGPT-Account-ID": account } } : {}),
    expiresAt: positive(claims["exp"]),
  };
}

/** A number of seconds, 0 included (ChatGPT sends the interval as a string). */
function seconds(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

function tokenFields(body: Record<string, unknown>): Record<string, string> | undefined {
  const access = text(body["access_token"]);
  if (!access) return undefined;
  const out: Record<string, string> = { access_token: access };
  for (const key of ["refresh_token", "id_token"]) {
    const value = text(body[key]);
    if (value) out[key] = value;
  }
  return out;
}

/** ISO time with a `Z`, as Python writes `last_refresh`. */
function isoZ(ms: number): string {
  return new Date(ms).toISOString();
}
