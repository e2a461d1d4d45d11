/**
 * Renewing an OAuth entry of a credential pool (`credential_pool[<provider>][i]` with
 * `auth_type: oauth`, its `access_token`, `refresh_token` and `expires_at` kept on the entry, as
 * upstream's `PooledCredential` stores them). The renewal runs under the auth lock on a fresh read,
 * like a stored login's (source.ts): when another process already renewed the entry, its new token
 * is used and the single-use refresh token is not spent twice.
 */
import { isObject, poolList, updateAuthStoreAsync } from "../../config/auth-store.js";
import { refreshCodex } from "./codex.js";
import { refreshMinimax } from "./minimax.js";
import { refreshNous } from "./nous.js";
import { refreshQwen } from "./qwen.js";
import {
  type OAuthDeps,
  OAuthError,
  type OAuthProviderId,
  POOL_REFRESH_PROVIDERS,
  type StoredLoginProvider,
  text,
} from "./types.js";
import { refreshXai } from "./xai.js";

export interface PoolRefreshInput {
  home: string;
  /** The pool key (`nous`, `openai-codex`). */
  provider: string;
  /** The entry's `id`. */
  entryId: string;
  /** The bearer that failed: an entry already holding another token was renewed by someone else. */
  stale: string;
  deps: OAuthDeps;
}

/**
 * The entry's renewed access token, written back to auth.json (0600) with its new refresh token
 * and expiry. Throws `OAuthError` when the provider cannot renew pool entries, the entry is gone,
 * or the refresh is refused (`relogin`: the entry is unusable until logged in again).
 */
export async function refreshPoolEntry(input: PoolRefreshInput): Promise<string> {
  const { home, provider, entryId, stale, deps } = input;
  if (!POOL_REFRESH_PROVIDERS.includes(provider)) {
    throw new OAuthError(
      provider as OAuthProviderId,
      `the ${provider} pool entry ${entryId} is an OAuth login Hermes cannot renew`,
      { code: "no_refresh" },
    );
  }
  const id = provider as StoredLoginProvider;
  return updateAuthStoreAsync(home, async (data) => {
    const item = (poolList(data, provider) ?? []).find((i) => isObject(i) && i["id"] === entryId);
    if (!isObject(item)) {
      throw new OAuthError(id, `the ${provider} pool entry ${entryId} was removed from auth.json`, {
        code: "entry_gone",
      });
    }
    const current = text(item["access_token"]);
    if (current && current !== stale) return current;
    const renewed = await refreshEntry(id, item, deps);
    Object.assign(item, renewed);
    return renewed.access_token;
  });
}

interface RenewedFields {
  access_token: string;
  refresh_token: string | null;
  expires_at: string | null;
  [key: string]: unknown;
}

/** Refreshes through the provider's own flow; the entry's fields map onto its login state. */
async function refreshEntry(
  provider: StoredLoginProvider,
  item: Record<string, unknown>,
  deps: OAuthDeps,
): Promise<RenewedFields> {
  if (provider === "xai-oauth") return refreshXaiEntry(item, deps);
  if (provider === "qwen-oauth" || provider === "minimax-oauth") {
    // Their login state is flat, like the entry: the entry is the state.
    const state = await (provider === "qwen-oauth" ? refreshQwen : refreshMinimax)(item, deps);
    const access = text(state["access_token"]);
    if (!access) throw new OAuthError(provider, `the ${provider} refresh returned no access token`);
    return {
      ...state,
      access_token: access,
      refresh_token: text(state["refresh_token"]) ?? null,
      expires_at: text(state["expires_at"]) ?? null,
    };
  }
  if (provider === "nous") {
    const state = await refreshNous(item, deps);
    const access = text(state["access_token"]);
    if (!access) throw new OAuthError("nous", "the Nous Portal refresh returned no access token");
    return {
      ...state,
      access_token: access,
      refresh_token: text(state["refresh_token"]) ?? null,
      expires_at: text(state["expires_at"]) ?? null,
    };
  }
  // A Codex login keeps its tokens nested; a pool entry keeps them flat.
  const state = await refreshCodex(
    {
      tokens: {
        access_token: item["access_token"],
        refresh_token: item["refresh_token"],
        ...(text(item["account_id"]) ? { account_id: item["account_id"] } : {}),
      },
    },
    deps,
  );
  const tokens = isObject(state["tokens"]) ? state["tokens"] : {};
  const access = text(tokens["access_token"]);
  if (!access) throw new OAuthError("openai-codex", "the ChatGPT refresh returned no access token");
  return {
    access_token: access,
    refresh_token: text(tokens["refresh_token"]) ?? null,
    expires_at: null,
    last_refresh: state["last_refresh"] ?? null,
  };
}

/** xAI keeps its tokens nested and the token endpoint under `discovery`; the entry keeps both flat. */
async function refreshXaiEntry(item: Record<string, unknown>, deps: OAuthDeps): Promise<RenewedFields> {
  const endpoint = text(item["token_endpoint"]);
  const state = await refreshXai(
    {
      tokens: { access_token: item["access_token"], refresh_token: item["refresh_token"] },
      ...(endpoint ? { discovery: { token_endpoint: endpoint } } : {}),
    },
    deps,
  );
  const tokens = isObject(state["tokens"]) ? state["tokens"] : {};
  const access = text(tokens["access_token"]);
  if (!access) throw new OAuthError("xai-oauth", "the xAI refresh returned no access token");
  const discovery = isObject(state["discovery"]) ? state["discovery"] : {};
  return {
    access_token: access,
    refresh_token: text(tokens["refresh_token"]) ?? null,
    expires_at: null,
    last_refresh: state["last_refresh"] ?? null,
    token_endpoint: text(discovery["token_endpoint"]) ?? endpoint ?? null,
  };
}
