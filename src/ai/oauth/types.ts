/**
 * What every OAuth login shares: the providers that have one, the credential a login yields for
 * model calls, the error a flow fails with, and the injected world (clock, sleep, fetch).
 */

/** Providers Hermes can log into with OAuth (ids as upstream spells them). */
export type OAuthProviderId =
  | "nous"
  | "openai-codex"
  | "anthropic"
  | "copilot"
  | "xai-oauth"
  | "qwen-oauth"
  | "minimax-oauth";

export const OAUTH_PROVIDERS: readonly OAuthProviderId[] = [
  "nous",
  "openai-codex",
  "anthropic",
  "copilot",
  "xai-oauth",
  "qwen-oauth",
  "minimax-oauth",
];

/**
 * Logins kept in auth.json's `providers[id]` (renewed there by source.ts); the others live in
 * `.anthropic_oauth.json` (Claude) and `.env` (Copilot's GitHub token).
 */
export type StoredLoginProvider = "nous" | "openai-codex" | "xai-oauth" | "qwen-oauth" | "minimax-oauth";

export const STORED_LOGIN_PROVIDERS: readonly StoredLoginProvider[] = [
  "nous",
  "openai-codex",
  "xai-oauth",
  "qwen-oauth",
  "minimax-oauth",
];

export function isStoredLoginProvider(id: string): id is StoredLoginProvider {
  return (STORED_LOGIN_PROVIDERS as readonly string[]).includes(id);
}

/**
 * Providers whose OAuth credential-pool entries can be renewed (their refresh needs only the
 * entry; oauth/pool-refresh.ts). Kept here so the pool can ask without loading the flows.
 */
export const POOL_REFRESH_PROVIDERS: readonly string[] = STORED_LOGIN_PROVIDERS;

export function isOAuthProvider(id: string): id is OAuthProviderId {
  return (OAUTH_PROVIDERS as readonly string[]).includes(id);
}

export type Env = Readonly<Record<string, string | undefined>>;

/** What a model call needs from a login: the bearer, and where and how to send it. */
export interface OAuthCredential {
  /** Sent as the provider's key (bearer). Never printed. */
  accessToken: string;
  /** Where the login says requests go (Nous's inference host, Copilot's account endpoint). */
  baseUrl?: string | undefined;
  /** Extra request headers the provider wants with this credential. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Epoch seconds when the bearer stops working; undefined when not known. */
  expiresAt?: number | undefined;
}

/**
 * A login or refresh that failed. `relogin` says the stored login is unusable and the user must log
 * in again (the message names the command); otherwise trying again later may work.
 */
export class OAuthError extends Error {
  readonly provider: OAuthProviderId;
  readonly code: string;
  readonly relogin: boolean;
  constructor(
    provider: OAuthProviderId,
    message: string,
    options: { code?: string; relogin?: boolean } = {},
  ) {
    super(message);
    this.name = "OAuthError";
    this.provider = provider;
    this.code = options.code ?? "oauth_failed";
    this.relogin = options.relogin ?? false;
  }
}

/** The command that logs into `provider` again, for messages. */
export function loginCommand(provider: OAuthProviderId): string {
  return `hermes auth add ${provider} --type oauth`;
}

/** The world a flow talks to; tests inject every part. */
export interface OAuthDeps {
  fetch: typeof fetch;
  /** Epoch milliseconds. */
  now: () => number;
  /** Waits `ms` (a device-code poll interval); rejects when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  env: Env;
  /** Per HTTP request (default 15 s). */
  timeoutMs?: number | undefined;
}

/** The real world: global fetch, the wall clock, timers. */
export function defaultOAuthDeps(env: Env): OAuthDeps {
  return {
    fetch: globalThis.fetch,
    now: Date.now,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      }),
    env,
  };
}

/** What a device-code login shows the user: where to go and what to type there. */
export interface DeviceCodePrompt {
  verificationUri: string;
  /** The URI with the code filled in, when the provider gives one. */
  verificationUriComplete?: string | undefined;
  userCode: string;
  /** Seconds until the code expires. */
  expiresIn: number;
}

/** The claims of a JWT (unverified: only to read `exp` and account ids), or {} when not a JWT. */
export function jwtClaims(token: string): Record<string, unknown> {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[1]) return {};
  try {
    const json = Buffer.from(parts[1], "base64url").toString("utf8");
    const claims: unknown = JSON.parse(json);
    return typeof claims === "object" && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** A non-empty trimmed string, or undefined. */
export function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** A finite positive number (numeric strings too), or undefined. */
export function positive(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
