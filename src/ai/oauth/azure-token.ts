/**
 * The Entra ID bearer a session sends to Azure AI Foundry: asked of the credential chain once,
 * kept in memory (never on disk), asked again shortly before it expires and at once after the
 * endpoint answers 401. Concurrent callers share one request. The source that answered first is
 * asked first next time, as DefaultAzureCredential keeps its chosen credential.
 */
import { processRedactor } from "../../util/redact.js";
import { type ApiMode, ProviderError, type Transport } from "../types.js";
import {
  type AzureIdentityDeps,
  type AzureSource,
  type AzureToken,
  chainToken,
  DEFAULT_CHAIN,
  defaultAzureDeps,
  EntraError,
} from "./azure-identity.js";
import type { Env, OAuthCredential } from "./types.js";

/** Renew this long before expiry (Azure's SDKs use five minutes), or at half a shorter lifetime. */
export const ENTRA_REFRESH_SKEW_S = 300;

export class AzureTokenProvider {
  private cached: AzureToken | undefined;
  private pending: Promise<AzureToken> | undefined;
  private winner: AzureSource | undefined;
  private issuedAt = 0;

  constructor(
    readonly scope: string,
    private readonly deps: AzureIdentityDeps,
    private readonly chain: readonly AzureSource[] = DEFAULT_CHAIN,
  ) {}

  /**
   * The token to send now. `force` asks again even when the kept one looks valid (a 401), unless
   * `stale` is given and the kept token already differs from it (someone renewed it meanwhile).
   * Throws `EntraError`.
   */
  async token(options: { force?: boolean; stale?: string } = {}): Promise<AzureToken> {
    const cached = this.cached;
    const forced = options.force === true && (options.stale === undefined || options.stale === cached?.token);
    if (cached && !forced && !this.due(cached)) return cached;
    if (this.pending) return this.pending;
    if (forced) this.cached = undefined;
    this.pending = this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private due(token: AzureToken): boolean {
    const nowS = this.deps.now() / 1000;
    const lifetime = token.expiresAt - this.issuedAt;
    const skew = Math.min(ENTRA_REFRESH_SKEW_S, Math.max(0, lifetime / 2));
    return token.expiresAt - skew <= nowS;
  }

  private async fetchToken(): Promise<AzureToken> {
    const chain = this.winner ? [this.winner, ...this.chain.filter((s) => s !== this.winner)] : this.chain;
    const token = await chainToken(this.scope, this.deps, chain);
    this.winner = this.chain.find((s) => token.source.startsWith(s.label));
    this.issuedAt = this.deps.now() / 1000;
    this.cached = token;
    // The bearer is a secret for everything this process writes (logs, state.db, tool output).
    processRedactor().addSecret(token.token, "AZURE_ENTRA_TOKEN");
    return token;
  }
}

const shared = new Map<string, AzureTokenProvider>();
/** The provider made last for each scope: what a caller without an environment of its own shares. */
const lastForScope = new Map<string, AzureTokenProvider>();

/**
 * The process's provider for `scope` under this environment's identity (tenant, client id,
 * authority, identity endpoint): the main model, a fallback and the auxiliary models share one
 * token. Without `env` (a side task's transport built with no environment) it is the provider the
 * session made for the scope, so `.env`'s credentials still apply; else one over `process.env`.
 */
export function sharedAzureTokenProvider(scope: string, env?: Env): AzureTokenProvider {
  if (!env) {
    const last = lastForScope.get(scope);
    if (last) return last;
  }
  const from = env ?? process.env;
  const identity = ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_AUTHORITY_HOST", "IDENTITY_ENDPOINT"];
  const key = [scope, ...identity.map((name) => from[name] ?? "")].join("\u0000");
  let provider = shared.get(key);
  if (!provider) {
    // Client secrets are secrets for the redactor whether or not `.env` held them.
    processRedactor().addSecret(from["AZURE_CLIENT_SECRET"], "AZURE_CLIENT_SECRET");
    provider = new AzureTokenProvider(scope, defaultAzureDeps(from));
    shared.set(key, provider);
  }
  lastForScope.set(scope, provider);
  return provider;
}

/** An Entra failure as the error the classifier and the user read: 401 unless it may pass by itself. */
export function entraProviderError(error: unknown, baseUrl: string): unknown {
  if (!(error instanceof EntraError)) return error;
  return new ProviderError(error.message, {
    status: error.transient ? undefined : 401,
    transport: error.transient,
    baseUrl,
    cause: error,
    ...(error.hint ? { hint: error.hint } : {}),
  });
}

/** The source shape the OAuth transport renews from (oauth/transport.ts), over an Entra provider. */
export function entraCredentialSource(provider: AzureTokenProvider, baseUrl: string) {
  return {
    async current(options: { force?: boolean; stale?: string } = {}): Promise<OAuthCredential> {
      try {
        const token = await provider.token(options);
        return { accessToken: token.token, expiresAt: token.expiresAt };
      } catch (error) {
        throw entraProviderError(error, baseUrl);
      }
    },
  };
}

/**
 * A transport sending Entra ID bearers (Azure AI Foundry, `model.auth_mode: entra_id`): the
 * process's token for the scope, renewed before it expires and once after a 401; `build` makes
 * the wire client for each new bearer (resolve.ts builds it through `createTransport`, redacted).
 */
export async function createEntraTransport(input: {
  scope: string;
  env: Env | undefined;
  apiMode: ApiMode;
  baseUrl: string;
  build: (bearer: string) => Promise<Transport>;
}): Promise<Transport> {
  const { createOAuthTransport } = await import("./transport.js");
  const provider = sharedAzureTokenProvider(input.scope, input.env);
  return createOAuthTransport({
    apiMode: input.apiMode,
    baseUrl: input.baseUrl,
    source: entraCredentialSource(provider, input.baseUrl),
    build: (credential) => input.build(credential.accessToken),
  });
}
