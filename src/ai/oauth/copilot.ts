/**
 * GitHub Copilot: GitHub's device-code login for a GitHub token (stored as COPILOT_GITHUB_TOKEN in
 * `.env`, as upstream does), and the exchange of that token for the short-lived Copilot API token
 * model calls carry (renewed before it expires and after a 401).
 */
import { pollDeviceCode, standardPollOutcome } from "./device-flow.js";
import { oauthErrorText, requestJson, under } from "./http.js";
import {
  type DeviceCodePrompt,
  type Env,
  isRecord,
  loginCommand,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  positive,
  text,
} from "./types.js";

/** VS Code's GitHub App: its tokens (ghu_) can be exchanged for Copilot API tokens. */
export const COPILOT_CLIENT_ID = "Iv1.b507a08c87ecfe98";
export const COPILOT_API_URL = "https://api.githubcopilot.com";
export const COPILOT_TOKEN_ENV = ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"] as const;
export const COPILOT_REFRESH_SKEW_S = 120;
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** The headers Copilot's API expects from an editor integration. */
export const COPILOT_HEADERS: Readonly<Record<string, string>> = {
  "Editor-Version": "vscode/1.104.1",
  "Editor-Plugin-Version": "copilot-chat/0.26.7",
  "Copilot-Integration-Id": "vscode-chat",
};

/**
 * GitHub's web and API bases: `HERMES_GITHUB_BASE_URL` / `HERMES_GITHUB_API_URL` (tests,
 * proxies), else `COPILOT_GH_HOST` (GitHub Enterprise, as upstream), else github.com.
 */
export function githubUrls(env: Env): { web: string; api: string } {
  const host = text(env["COPILOT_GH_HOST"]);
  const web = text(env["HERMES_GITHUB_BASE_URL"]) ?? (host ? `https://${host}` : "https://github.com");
  const api =
    text(env["HERMES_GITHUB_API_URL"]) ??
    (host && host !== "github.com" ? `https://api.${host}` : "https://api.github.com");
  return { web: web.replace(/\/+$/, ""), api: api.replace(/\/+$/, "") };
}

/**
 * Whether a GitHub token can be used for Copilot: classic personal access tokens (ghp_) cannot.
 * Returns the reason when not.
 */
export function copilotTokenProblem(token: string): string | undefined {
  if (token.startsWith("ghp_")) {
    return (
      "classic personal access tokens (ghp_…) do not work with the Copilot API; " +
      `log in with \`${loginCommand("copilot")}\` or use a fine-grained token (github_pat_…) with the Copilot Requests permission.`
    );
  }
  return undefined;
}

/** The first usable GitHub token of COPILOT_GITHUB_TOKEN, GH_TOKEN, GITHUB_TOKEN, with its variable. */
export function copilotGithubToken(env: Env): { token: string; source: string } | undefined {
  for (const name of COPILOT_TOKEN_ENV) {
    const token = text(env[name]);
    if (token && !copilotTokenProblem(token)) return { token, source: name };
  }
  return undefined;
}

/** GitHub's device-code login; returns the GitHub token. Throws `OAuthError`. */
export async function copilotDeviceLogin(
  deps: OAuthDeps,
  show: (prompt: DeviceCodePrompt) => void,
  options: { signal?: AbortSignal; timeoutS?: number } = {},
): Promise<string> {
  const { web } = githubUrls(deps.env);
  const start = await requestJson(
    "copilot",
    under(web, "/login/device/code"),
    { form: { client_id: COPILOT_CLIENT_ID, scope: "read:user" } },
    deps,
  );
  const deviceCode = text(start.body["device_code"]);
  const userCode = text(start.body["user_code"]);
  if (start.status >= 400 || !deviceCode || !userCode) {
    throw new OAuthError(
      "copilot",
      `GitHub did not start a login (HTTP ${start.status}: ${oauthErrorText(start)}).`,
    );
  }
  const expiresIn = Math.min(
    positive(start.body["expires_in"]) ?? 900,
    options.timeoutS ?? Number.POSITIVE_INFINITY,
  );
  show({
    verificationUri: text(start.body["verification_uri"]) ?? under(web, "/login/device"),
    userCode,
    expiresIn,
  });
  const interval = start.body["interval"];
  return pollDeviceCode({
    provider: "copilot",
    interval: typeof interval === "number" && interval >= 0 ? interval : 5,
    expiresIn,
    deps,
    signal: options.signal,
    poll: async () =>
      standardPollOutcome(
        "copilot",
        await requestJson(
          "copilot",
          under(web, "/login/oauth/access_token"),
          { form: { client_id: COPILOT_CLIENT_ID, device_code: deviceCode, grant_type: DEVICE_GRANT } },
          deps,
        ),
        (body) => String(body["access_token"]),
      ),
  });
}

/**
 * Exchanges a GitHub token for a Copilot API token (`/copilot_internal/v2/token`): the bearer, its
 * expiry, and the account's API endpoint. A GitHub token the endpoint does not know (404: a token
 * of another app) is sent as it is, as upstream does. Throws `OAuthError` (`relogin` on 401/403).
 */
export async function exchangeCopilotToken(githubToken: string, deps: OAuthDeps): Promise<OAuthCredential> {
  const answer = await requestJson(
    "copilot",
    under(githubUrls(deps.env).api, "/copilot_internal/v2/token"),
    {
      headers: {
        Authorization: `token ${githubToken}`,
        ...COPILOT_HEADERS,
        "User-Agent": "GitHubCopilotChat/0.26.7",
      },
    },
    deps,
  );
  if (answer.status === 404)
    return {
      accessToken: githubToken,
      baseUrl: copilotApiUrl(deps.env, undefined),
      headers: COPILOT_HEADERS,
    };
  const token = text(answer.body["token"]);
  if (answer.status >= 400 || !token) {
    const refused = answer.status === 401 || answer.status === 403;
    throw new OAuthError(
      "copilot",
      `GitHub would not issue a Copilot token (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused
          ? `: check the account has Copilot, or log in again: ${loginCommand("copilot")}`
          : "; try again shortly."),
      { code: refused ? "refused" : "exchange_failed", relogin: refused },
    );
  }
  const endpoints = answer.body["endpoints"];
  const api = isRecord(endpoints) ? text(endpoints["api"]) : undefined;
  return {
    accessToken: token,
    baseUrl: copilotApiUrl(deps.env, api),
    headers: COPILOT_HEADERS,
    expiresAt: positive(answer.body["expires_at"]),
  };
}

/**
 * Where Copilot requests go: `COPILOT_API_BASE_URL` (upstream's override), else the account's
 * endpoint from the exchange when it is https on githubcopilot.com (a bearer is never sent to a
 * host an answer merely names), else api.githubcopilot.com.
 */
export function copilotApiUrl(env: Env, fromExchange: string | undefined): string {
  const override = text(env["COPILOT_API_BASE_URL"]);
  if (override) return override.replace(/\/+$/, "");
  if (fromExchange) {
    try {
      const url = new URL(fromExchange);
      const host = url.hostname;
      if (
        url.protocol === "https:" &&
        (host === "githubcopilot.com" || host.endsWith(".githubcopilot.com"))
      ) {
        return fromExchange.replace(/\/+$/, "");
      }
    } catch {
      // fall through to the default
    }
  }
  return COPILOT_API_URL;
}
