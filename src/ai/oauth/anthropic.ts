/**
 * Anthropic Claude Pro/Max login: OAuth with PKCE where the browser ends on Anthropic's own
 * callback page, which shows `code#state` for the user to paste back; then the code is exchanged
 * for an access/refresh pair, stored in `<home>/.anthropic_oauth.json`.
 */
import { createHash, randomBytes } from "node:crypto";
import { oauthErrorText, requestJson, under } from "./http.js";
import { type Env, loginCommand, type OAuthDeps, OAuthError, positive, text } from "./types.js";

export const ANTHROPIC_CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
export const ANTHROPIC_SCOPES = "org:create_api_key user:profile user:inference";
export const ANTHROPIC_REFRESH_SKEW_S = 60;

interface Endpoints {
  authorize: string;
  redirect: string;
  /** Tried in order: the current host first, the legacy console host after a failure. */
  tokens: string[];
}

/**
 * Anthropic's endpoints; `HERMES_ANTHROPIC_OAUTH_BASE_URL` puts all three under one base
 * (`/oauth/authorize`, `/oauth/code/callback`, `/v1/oauth/token`), for tests and proxies.
 */
export function anthropicEndpoints(env: Env): Endpoints {
  const base = text(env["HERMES_ANTHROPIC_OAUTH_BASE_URL"]);
  if (base) {
    return {
      authorize: under(base, "/oauth/authorize"),
      redirect: under(base, "/oauth/code/callback"),
      tokens: [under(base, "/v1/oauth/token")],
    };
  }
  return {
    authorize: "https://claude.ai/oauth/authorize",
    redirect: "https://console.anthropic.com/oauth/code/callback",
    tokens: ["https://platform.claude.com/v1/oauth/token", "https://console.anthropic.com/v1/oauth/token"],
  };
}

export interface PkceStart {
  url: string;
  verifier: string;
  state: string;
}

/** A fresh PKCE verifier, challenge (S256) and state, and the authorize URL carrying them. */
export function startAnthropicLogin(env: Env, random: (n: number) => Buffer = randomBytes): PkceStart {
  const verifier = random(32).toString("base64url");
  const state = random(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const endpoints = anthropicEndpoints(env);
  const query = new URLSearchParams({
    code: "true",
    client_id: ANTHROPIC_CLIENT_ID,
    response_type: "code",
    redirect_uri: endpoints.redirect,
    scope: ANTHROPIC_SCOPES,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
  });
  return { url: `${endpoints.authorize}?${query.toString()}`, verifier, state };
}

export interface AnthropicTokens {
  accessToken: string;
  refreshToken: string | undefined;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * Exchanges what the user pasted (`code#state`, or the callback URL holding them) for tokens.
 * Throws `OAuthError` when the state does not match the one this login started with (a code from
 * some other login, or a forged one), or when Anthropic refuses the code.
 */
export async function finishAnthropicLogin(
  pasted: string,
  start: PkceStart,
  deps: OAuthDeps,
): Promise<AnthropicTokens> {
  const { code, state } = parsePastedCode(pasted);
  if (!code) throw new OAuthError("anthropic", "no authorization code was pasted; nothing was saved.");
  if (state !== start.state) {
    throw new OAuthError(
      "anthropic",
      "the pasted code belongs to a different login (its state does not match); start again and paste the code this login's page shows.",
      { code: "state_mismatch" },
    );
  }
  return tokenRequest(
    {
      grant_type: "authorization_code",
      client_id: ANTHROPIC_CLIENT_ID,
      code,
      state,
      redirect_uri: anthropicEndpoints(deps.env).redirect,
      code_verifier: start.verifier,
    },
    undefined,
    deps,
  );
}

/** Redeems the refresh token. Throws `OAuthError` (`relogin` when Anthropic refuses it). */
export async function refreshAnthropic(
  refreshToken: string | undefined,
  deps: OAuthDeps,
): Promise<AnthropicTokens> {
  if (!refreshToken) {
    throw new OAuthError(
      "anthropic",
      `the Claude login has no refresh token; log in again: ${loginCommand("anthropic")}`,
      {
        code: "missing_refresh_token",
        relogin: true,
      },
    );
  }
  return tokenRequest(
    { grant_type: "refresh_token", refresh_token: refreshToken, client_id: ANTHROPIC_CLIENT_ID },
    refreshToken,
    deps,
  );
}

async function tokenRequest(
  body: Record<string, string>,
  previousRefresh: string | undefined,
  deps: OAuthDeps,
): Promise<AnthropicTokens> {
  const renewing = previousRefresh !== undefined;
  let failure: OAuthError | undefined;
  for (const url of anthropicEndpoints(deps.env).tokens) {
    let answer: Awaited<ReturnType<typeof requestJson>>;
    try {
      answer = await requestJson("anthropic", url, { json: body }, deps);
    } catch (error) {
      failure = error instanceof OAuthError ? error : new OAuthError("anthropic", String(error));
      continue;
    }
    const access = text(answer.body["access_token"]);
    if (answer.status < 400 && access) {
      const expiresIn = positive(answer.body["expires_in"]) ?? 3600;
      return {
        accessToken: access,
        refreshToken: text(answer.body["refresh_token"]) ?? previousRefresh,
        expiresAt: deps.now() + expiresIn * 1000,
      };
    }
    const refused = answer.status === 400 || answer.status === 401;
    failure = new OAuthError(
      "anthropic",
      `Anthropic ${renewing ? "refused to renew the login" : "refused the code"} (HTTP ${answer.status}: ${oauthErrorText(answer)})` +
        (refused && renewing ? `; log in again: ${loginCommand("anthropic")}` : "."),
      { code: refused ? "refused" : "failed", relogin: refused && renewing },
    );
    // A refusal is an answer; only a missing endpoint or an outage moves on to the legacy host.
    if (refused) break;
  }
  throw failure ?? new OAuthError("anthropic", "no Anthropic token endpoint answered.");
}

/** `code#state` as Anthropic's page shows it, or a pasted callback URL with `code` and `state`. */
export function parsePastedCode(pasted: string): { code: string; state: string } {
  const value = pasted.trim();
  if (/^https?:\/\//.test(value)) {
    try {
      const url = new URL(value);
      const fromHash = new URLSearchParams(url.hash.replace(/^#/, ""));
      return {
        code: url.searchParams.get("code") ?? fromHash.get("code") ?? "",
        state: url.searchParams.get("state") ?? fromHash.get("state") ?? "",
      };
    } catch {
      return { code: "", state: "" };
    }
  }
  const at = value.indexOf("#");
  return at < 0 ? { code: value, state: "" } : { code: value.slice(0, at), state: value.slice(at + 1) };
}
