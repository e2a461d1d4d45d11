/**
 * The live credential of an OAuth login during a session: read from where the login is stored,
 * renewed shortly before it expires, and renewed at once after the provider answers 401. Renewals
 * run under the auth lock on a fresh read, so two Hermes processes never spend one single-use
 * refresh token twice: the second finds the first one's new token and uses it.
 */
import { anthropicOAuthPath, readAnthropicOAuth, writeAnthropicOAuth } from "../../config/anthropic-oauth.js";
import {
  authLockPath,
  providerState,
  readAuthStore,
  setProviderState,
  updateAuthStoreAsync,
} from "../../config/auth-store.js";
import { withFileLock } from "../../util/file-lock.js";
import { ANTHROPIC_REFRESH_SKEW_S, refreshAnthropic } from "./anthropic.js";
import { CODEX_REFRESH_SKEW_S, codexCredential, refreshCodex } from "./codex.js";
import { COPILOT_REFRESH_SKEW_S, copilotGithubToken, exchangeCopilotToken } from "./copilot.js";
import { MINIMAX_REFRESH_SKEW_S, minimaxCredential, refreshMinimax } from "./minimax.js";
import { NOUS_REFRESH_SKEW_S, nousCredential, refreshNous } from "./nous.js";
import { QWEN_REFRESH_SKEW_S, qwenCredential, refreshQwen } from "./qwen.js";
import { currentQwenCliCredential } from "./qwen-cli.js";
import {
  type Env,
  loginCommand,
  type OAuthCredential,
  type OAuthDeps,
  OAuthError,
  type OAuthProviderId,
  type StoredLoginProvider,
} from "./types.js";
import { refreshXai, xaiCredential, xaiRefreshSkew } from "./xai.js";

/** How a login kept in auth.json's `providers[id]` is read, timed and renewed. */
export interface StoredLoginFlow {
  /** Seconds before expiry to renew (a function when it depends on the token). */
  skew: number | ((expiresAt: number | undefined, nowMs: number) => number);
  credentialOf: (state: Record<string, unknown>, env: Env) => OAuthCredential | undefined;
  refresh: (state: Record<string, unknown>, deps: OAuthDeps) => Promise<Record<string, unknown>>;
}

export const STORED_LOGIN_FLOWS: Readonly<Record<StoredLoginProvider, StoredLoginFlow>> = {
  nous: { skew: NOUS_REFRESH_SKEW_S, credentialOf: nousCredential, refresh: refreshNous },
  "openai-codex": { skew: CODEX_REFRESH_SKEW_S, credentialOf: codexCredential, refresh: refreshCodex },
  "xai-oauth": { skew: xaiRefreshSkew, credentialOf: xaiCredential, refresh: refreshXai },
  "qwen-oauth": { skew: QWEN_REFRESH_SKEW_S, credentialOf: qwenCredential, refresh: refreshQwen },
  "minimax-oauth": { skew: MINIMAX_REFRESH_SKEW_S, credentialOf: minimaxCredential, refresh: refreshMinimax },
};

export interface CurrentOptions {
  /** Renew even when the stored token looks valid (the provider just answered 401). */
  force?: boolean;
  /** The bearer that failed: a stored token different from it was renewed by someone else. */
  stale?: string;
}

/** A login's credential for model calls. */
export interface OAuthSource {
  readonly provider: OAuthProviderId;
  /** The credential to send now, renewed first when due. Throws `OAuthError`. */
  current(options?: CurrentOptions): Promise<OAuthCredential>;
}

/** True when `expiresAt` (epoch s) falls within `skew` seconds of `nowMs`; unknown never expires. */
export function expiring(expiresAt: number | undefined, nowMs: number, skew: number): boolean {
  return expiresAt !== undefined && expiresAt - skew <= nowMs / 1000;
}

/**
 * The source for `provider`'s login under `home`. Copilot's login is a GitHub token (`githubToken`,
 * else the first usable one in the environment), exchanged here.
 */
export function oauthSource(
  provider: OAuthProviderId,
  home: string,
  deps: OAuthDeps,
  githubToken?: string,
): OAuthSource {
  switch (provider) {
    case "nous":
    case "openai-codex":
    case "xai-oauth":
    case "minimax-oauth":
      return storedSource(provider, home, deps, STORED_LOGIN_FLOWS[provider]);
    case "qwen-oauth":
      return qwenSource(home, deps);
    case "anthropic":
      return anthropicSource(home, deps);
    case "copilot":
      return copilotSource(deps, githubToken);
  }
}

/** A login kept in auth.json's `providers[id]` (Nous, Codex, xAI, Qwen, MiniMax). */
function storedSource(
  provider: StoredLoginProvider,
  home: string,
  deps: OAuthDeps,
  flow: StoredLoginFlow,
): OAuthSource {
  const { credentialOf, refresh } = flow;
  const skewFor = (cred: OAuthCredential) =>
    typeof flow.skew === "number" ? flow.skew : flow.skew(cred.expiresAt, deps.now());
  const missing = () =>
    new OAuthError(provider, `not logged in to ${provider}; log in with: ${loginCommand(provider)}`, {
      code: "not_logged_in",
      relogin: true,
    });
  const usable = (cred: OAuthCredential | undefined, options: CurrentOptions) =>
    cred !== undefined &&
    !expiring(cred.expiresAt, deps.now(), skewFor(cred)) &&
    !(options.force && (options.stale === undefined || cred.accessToken === options.stale));
  return {
    provider,
    async current(options = {}) {
      const state = providerState(readAuthStore(home).data, provider);
      const cred = state ? credentialOf(state, deps.env) : undefined;
      if (usable(cred, options) && cred) return cred;
      return updateAuthStoreAsync(home, async (data) => {
        const fresh = providerState(data, provider);
        if (!fresh) throw missing();
        const now = credentialOf(fresh, deps.env);
        // Another process renewed it while we waited for the lock.
        if (usable(now, options) && now) return now;
        const renewed = await refresh(fresh, deps);
        setProviderState(data, provider, renewed);
        const result = credentialOf(renewed, deps.env);
        if (!result) throw missing();
        return result;
      });
    },
  };
}

/**
 * Qwen: Hermes's own login in auth.json when it holds a token, else the Qwen CLI's
 * `~/.qwen/oauth_creds.json` (renewed and written back there; see qwen-cli.ts). Asked at each
 * call, so a login added or removed while a session runs is followed.
 */
function qwenSource(home: string, deps: OAuthDeps): OAuthSource {
  const stored = storedSource("qwen-oauth", home, deps, STORED_LOGIN_FLOWS["qwen-oauth"]);
  return {
    provider: "qwen-oauth",
    async current(options = {}) {
      const state = providerState(readAuthStore(home).data, "qwen-oauth");
      if (state && qwenCredential(state, deps.env)) return stored.current(options);
      return currentQwenCliCredential(
        deps,
        (cred) =>
          cred !== undefined &&
          !expiring(cred.expiresAt, deps.now(), QWEN_REFRESH_SKEW_S) &&
          !(options.force && (options.stale === undefined || cred.accessToken === options.stale)),
      );
    },
  };
}

function anthropicSource(home: string, deps: OAuthDeps): OAuthSource {
  const toCredential = (login: { accessToken: string; expiresAt: number | undefined }): OAuthCredential => ({
    accessToken: login.accessToken,
    expiresAt: login.expiresAt !== undefined ? login.expiresAt / 1000 : undefined,
  });
  const usable = (cred: OAuthCredential, options: CurrentOptions) =>
    !expiring(cred.expiresAt, deps.now(), ANTHROPIC_REFRESH_SKEW_S) &&
    !(options.force && (options.stale === undefined || cred.accessToken === options.stale));
  const missing = () =>
    new OAuthError("anthropic", `not logged in to Claude; log in with: ${loginCommand("anthropic")}`, {
      code: "not_logged_in",
      relogin: true,
    });
  return {
    provider: "anthropic",
    async current(options = {}) {
      const login = readAnthropicOAuth(home);
      if (!login) throw missing();
      const cred = toCredential(login);
      if (usable(cred, options)) return cred;
      return withFileLock(
        anthropicOAuthPath(home),
        async () => {
          const fresh = readAnthropicOAuth(home);
          if (!fresh) throw missing();
          const now = toCredential(fresh);
          if (usable(now, options)) return now;
          const renewed = await refreshAnthropic(fresh.refreshToken, deps);
          await writeAnthropicOAuth(home, renewed);
          return toCredential(renewed);
        },
        { lockPath: authLockPath(home) },
      );
    },
  };
}

/** Copilot: the GitHub token from the environment, exchanged (and re-exchanged) in memory. */
function copilotSource(deps: OAuthDeps, githubToken: string | undefined): OAuthSource {
  let cached: OAuthCredential | undefined;
  return {
    provider: "copilot",
    async current(options = {}) {
      const github = githubToken ? { token: githubToken } : copilotGithubToken(deps.env);
      if (!github) {
        throw new OAuthError(
          "copilot",
          `no GitHub token for Copilot: set COPILOT_GITHUB_TOKEN, or log in with: ${loginCommand("copilot")}`,
          { code: "not_logged_in", relogin: true },
        );
      }
      const fresh =
        cached !== undefined &&
        !options.force &&
        !expiring(cached.expiresAt, deps.now(), COPILOT_REFRESH_SKEW_S);
      if (fresh && cached) return cached;
      cached = await exchangeCopilotToken(github.token, deps);
      return cached;
    },
  };
}
