/**
 * How a provider's OAuth login stands in for its key when the runtime is resolved: which stored
 * login applies, the bearer to start with, and where it may be sent. Synchronous reads only (the
 * renewal happens in the transport, see transport.ts).
 */
import { readAnthropicOAuth } from "../../config/anthropic-oauth.js";
import { type AuthStoreError, providerState, readAuthStore } from "../../config/auth-store.js";
import { openCredentialPool } from "../credential-pool.js";
import { codexCredential } from "./codex.js";
import { copilotTokenProblem } from "./copilot.js";
import { minimaxCredential } from "./minimax.js";
import { nousCredential, nousInferenceUrl } from "./nous.js";
import { qwenCredential } from "./qwen.js";
import { qwenCliCredential } from "./qwen-cli.js";
import {
  type Env,
  isOAuthProvider,
  isStoredLoginProvider,
  type OAuthCredential,
  type OAuthProviderId,
  type StoredLoginProvider,
  text,
} from "./types.js";
import { xaiCredential } from "./xai.js";

/** The credential in a stored login's state, per provider (synchronous reads only). */
const CREDENTIAL_OF: Record<
  StoredLoginProvider,
  (s: Record<string, unknown>, env: Env) => OAuthCredential | undefined
> = {
  nous: nousCredential,
  "openai-codex": codexCredential,
  "xai-oauth": xaiCredential,
  "qwen-oauth": qwenCredential,
  "minimax-oauth": minimaxCredential,
};

/** Logins whose state names the host their bearer goes to (used unless the user chose one). */
const FOLLOWS_BASE_URL: ReadonlySet<string> = new Set(["nous", "xai-oauth", "minimax-oauth"]);

/** The login a resolved runtime uses: its transport renews the bearer from it. */
export interface RuntimeLogin {
  provider: OAuthProviderId;
  home: string;
  /** Use the base URL the login names (Nous's inference host, Copilot's account endpoint). */
  followBaseUrl: boolean;
}

export interface LoginKey {
  apiKey: string;
  /** The base URL to use unless one was chosen explicitly. */
  baseUrl?: string | undefined;
  login: RuntimeLogin;
}

/**
 * The stored login for `provider` as a key, or undefined when there is none (or the file cannot
 * be read: a corrupt auth.json is reported by `hermes auth`, never here). `baseUrl` is the URL
 * resolved so far and `explicitBaseUrl` whether the user chose it.
 */
export function loginKey(
  provider: OAuthProviderId,
  input: { home: string; env: Env; baseUrl: string; explicitBaseUrl: boolean },
): LoginKey | undefined {
  const { home, env } = input;
  if (isStoredLoginProvider(provider)) {
    const state = storedState(home, provider);
    const credential = state ? CREDENTIAL_OF[provider](state, env) : undefined;
    if (!state || !credential) {
      // Qwen without a login of Hermes's own: the Qwen CLI's, as Python Hermes uses it.
      const cli = provider === "qwen-oauth" ? qwenCliCredential(env) : undefined;
      return cli ? { apiKey: cli.accessToken, login: { provider, home, followBaseUrl: false } } : undefined;
    }
    // xAI's bearer goes only to xAI (or a loopback proxy), whatever else is configured (upstream).
    const follow = provider === "xai-oauth" || (FOLLOWS_BASE_URL.has(provider) && !input.explicitBaseUrl);
    const baseUrl = provider === "nous" ? nousInferenceUrl(env, state) : credential.baseUrl;
    return {
      apiKey: credential.accessToken,
      ...(follow && baseUrl ? { baseUrl } : {}),
      login: { provider, home, followBaseUrl: follow },
    };
  }
  if (provider === "anthropic") {
    // The Claude login goes to Anthropic itself, or to the endpoint the user named in ANTHROPIC_BASE_URL.
    if (!anthropicHostAllowed(input.baseUrl, env)) return undefined;
    const stored = readAnthropicOAuth(home);
    if (!stored) return undefined;
    return { apiKey: stored.accessToken, login: { provider, home, followBaseUrl: false } };
  }
  return undefined;
}

/**
 * A credential-pool entry of `provider` (an OAuth login added as a second account) as the key when
 * the provider's main login is gone from auth.json (logged out, or removed by hand): the entry the
 * pool picks by its strategy, or undefined when it has none usable. It comes without a `login`:
 * the session's recovery knows the entry by its key, renews it after a 401 (pool-refresh.ts) and
 * rotates to the next one like a key. A corrupt auth.json yields undefined (reported elsewhere).
 */
export function poolLoginKey(
  provider: StoredLoginProvider,
  input: { home: string; env: Env; config: Readonly<Record<string, unknown>>; explicitBaseUrl: boolean },
): { apiKey: string; baseUrl?: string | undefined } | undefined {
  try {
    const pool = openCredentialPool({ home: input.home, provider, env: input.env, config: input.config });
    const entry = pool.select();
    if (!entry || entry.apiKey === "") return undefined;
    // The host the login was made for, as for the main login (xAI's bearer goes only to xAI).
    const follow = provider === "xai-oauth" || (FOLLOWS_BASE_URL.has(provider) && !input.explicitBaseUrl);
    return { apiKey: entry.apiKey, ...(follow && entry.baseUrl ? { baseUrl: entry.baseUrl } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The Copilot login for a GitHub token from the environment: the token is exchanged for a Copilot
 * token by the transport. Returns the reason instead when the token cannot work (a classic PAT).
 */
export function copilotLogin(
  githubToken: string,
  input: { home: string; explicitBaseUrl: boolean },
): { login: RuntimeLogin } | { problem: string } {
  const problem = copilotTokenProblem(githubToken);
  if (problem) return { problem };
  return { login: { provider: "copilot", home: input.home, followBaseUrl: !input.explicitBaseUrl } };
}

/**
 * `active_provider` of auth.json when it names a login that is stored (Python Hermes sets it on
 * login), for a home where nothing else names a provider; undefined otherwise.
 */
export function activeLoginProvider(home: string): OAuthProviderId | undefined {
  let active: unknown;
  try {
    const { data } = readAuthStore(home);
    active = data.active_provider;
    if (typeof active !== "string" || !isOAuthProvider(active)) return undefined;
    if (isStoredLoginProvider(active)) return providerState(data, active) ? active : undefined;
  } catch (error) {
    if ((error as AuthStoreError).name === "AuthStoreError") return undefined;
    throw error;
  }
  return undefined;
}

function storedState(home: string, provider: string): Record<string, unknown> | undefined {
  try {
    return providerState(readAuthStore(home).data, provider);
  } catch (error) {
    if ((error as Error).name === "AuthStoreError") return undefined;
    throw error;
  }
}

function anthropicHostAllowed(baseUrl: string, env: Env): boolean {
  const override = text(env["ANTHROPIC_BASE_URL"]);
  const trim = (u: string) => u.trim().replace(/\/+$/, "");
  if (override && trim(override) === trim(baseUrl)) return true;
  try {
    return new URL(baseUrl).hostname.toLowerCase() === "api.anthropic.com";
  } catch {
    return false;
  }
}
