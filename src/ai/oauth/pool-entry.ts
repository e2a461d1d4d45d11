/**
 * A login as a credential-pool entry: what `hermes auth add <provider> --type oauth` stores when
 * the provider already has a login, so a second account rotates with the first instead of
 * replacing it (upstream's `PooledCredential` with `auth_type: oauth`, `source: manual:device_code`,
 * the access/refresh pair kept flat on the entry). pool-refresh.ts renews such an entry in place.
 */
import { AUTH_TYPE_OAUTH, CLEARED_STATUS, isObject, type PoolEntryRecord } from "../../config/auth-store.js";
import { type StoredLoginProvider, text } from "./types.js";

/** Upstream's source for an entry added by a login on the command line. */
export const SOURCE_MANUAL_LOGIN = "manual:device_code";

/**
 * The pool entry for a fresh login `state` of `provider`: the state's own fields (portal URLs,
 * client id, expiry) flattened, its tokens on top. Throws when the state holds no access token.
 */
export function poolEntryFromLogin(
  provider: StoredLoginProvider,
  state: Record<string, unknown>,
  entry: { id: string; label: string; baseUrl: string | undefined },
): PoolEntryRecord {
  const nested = isObject(state["tokens"]) ? state["tokens"] : undefined;
  const { tokens: _tokens, discovery, ...flat } = state;
  const access = text(nested ? nested["access_token"] : state["access_token"]);
  if (!access) throw new Error(`the ${provider} login returned no access token`);
  const refresh = text(nested ? nested["refresh_token"] : state["refresh_token"]);
  const tokenEndpoint = isObject(discovery) ? text(discovery["token_endpoint"]) : undefined;
  const accountId = nested ? text(nested["account_id"]) : undefined;
  return {
    ...flat,
    id: entry.id,
    label: entry.label,
    auth_type: AUTH_TYPE_OAUTH,
    priority: 0,
    source: SOURCE_MANUAL_LOGIN,
    access_token: access,
    refresh_token: refresh ?? null,
    base_url: entry.baseUrl ?? null,
    ...(tokenEndpoint ? { token_endpoint: tokenEndpoint } : {}),
    ...(accountId ? { account_id: accountId } : {}),
    ...CLEARED_STATUS,
    request_count: 0,
  };
}
