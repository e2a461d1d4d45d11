/**
 * OAuth 2.1 for HTTP MCP servers (`auth: oauth`), through the MCP SDK's client auth: discovery,
 * dynamic client registration, authorization code with PKCE, refresh. This file supplies what the
 * SDK leaves to the application: where tokens live (oauth-store.ts), and the browser step.
 *
 * Two modes. A connection (chat, gateway, `mcp test`) uses stored tokens and lets the SDK refresh
 * them after a 401; it never starts a browser flow: when a new sign-in is needed it fails with
 * {@link McpLoginRequiredError} ("run hermes mcp login NAME"). `hermes mcp login NAME`
 * ({@link loginMcpServer}) runs the browser flow: a loopback listener on 127.0.0.1, the URL printed
 * (and opened when a browser is there), the code exchanged, tokens written 0600.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type * as AuthModule from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpOAuthConfig } from "./config-options.js";
import { McpTokenStore } from "./oauth-store.js";

/** The server needs a (new) sign-in, which only `hermes mcp login NAME` may start. */
export class McpLoginRequiredError extends Error {
  constructor(readonly server: string) {
    super(
      `MCP server "${server}" needs you to sign in (OAuth): run hermes mcp login ${server}, then /reload-mcp or start a new session`,
    );
    this.name = "McpLoginRequiredError";
  }
}

/** The login did not finish: refused in the browser, timed out, or the server misbehaved. */
export class McpLoginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpLoginError";
  }
}

let authModule: typeof AuthModule | undefined;

/** The SDK's auth helpers, loaded on first use (the CLI bundle keeps the SDK external). */
export function loadMcpAuth(): typeof AuthModule {
  authModule ??= createRequire(import.meta.url)(
    "@modelcontextprotocol/sdk/client/auth.js",
  ) as typeof AuthModule;
  return authModule;
}

const CALLBACK_PATH = "/callback";
/** Used when nothing registered a redirect yet: a connection never receives it (it never redirects). */
const UNUSED_REDIRECT = `http://127.0.0.1${CALLBACK_PATH}`;

interface ProviderOptions {
  server: string;
  oauth: McpOAuthConfig;
  store: McpTokenStore;
  /** Login: the loopback listener's URL. Absent: a connection, which never redirects. */
  redirectUrl?: string;
  /** Login: called with the authorization URL instead of failing. */
  onRedirect?: (url: URL) => void;
}

/** The SDK's view of one server's OAuth state; see the file comment for the two modes. */
export class HermesOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined;
  private readonly stateValue = randomBytes(16).toString("hex");
  /** Login ignores stored tokens (a fresh sign-in) until it saves new ones. */
  private ignoreStoredTokens: boolean;

  constructor(private readonly options: ProviderOptions) {
    this.ignoreStoredTokens = options.onRedirect !== undefined;
  }

  get redirectUrl(): string {
    if (this.options.redirectUrl) return this.options.redirectUrl;
    const registered = registeredLoopbackRedirect(this.options.store.readClient());
    return registered ?? UNUSED_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { oauth } = this.options;
    return {
      client_name: oauth.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: oauth.clientSecret ? "client_secret_post" : "none",
      ...(oauth.scope ? { scope: oauth.scope } : {}),
    };
  }

  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const { oauth, store } = this.options;
    if (oauth.clientId) {
      return {
        client_id: oauth.clientId,
        ...(oauth.clientSecret ? { client_secret: oauth.clientSecret } : {}),
      };
    }
    const stored = store.readClient();
    // A registration is bound to its redirect URI: at login on another port, register again.
    if (stored && this.options.redirectUrl && !registeredUris(stored).includes(this.options.redirectUrl)) {
      return undefined;
    }
    return stored;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    if (this.options.oauth.clientId) return; // pre-registered in config.yaml: nothing to keep
    this.options.store.writeClient(info);
  }

  tokens(): OAuthTokens | undefined {
    if (this.ignoreStoredTokens) return undefined;
    return this.options.store.readTokens()?.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.options.store.writeTokens(tokens);
    this.ignoreStoredTokens = false;
  }

  redirectToAuthorization(url: URL): void {
    if (!this.options.onRedirect) throw new McpLoginRequiredError(this.options.server);
    this.options.onRedirect(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier)
      throw new McpLoginError("no PKCE verifier: the login was not started by this process");
    return this.verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    const { store } = this.options;
    if (scope === "all" || scope === "tokens") store.removeTokens();
    if (scope === "all" || scope === "client") store.removeClient();
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
  }
}

/** The OAuth provider a connection to `server` uses: stored tokens, refresh, never a browser. */
export function connectionAuthProvider(
  server: string,
  oauth: McpOAuthConfig,
  home: string,
): HermesOAuthProvider {
  return new HermesOAuthProvider({ server, oauth, store: new McpTokenStore(home, server) });
}

export interface LoginOptions {
  server: string;
  url: string;
  oauth: McpOAuthConfig;
  home: string;
  /** The fetch for the server and its authorization server (mTLS settings apply). */
  fetchFn?: typeof fetch;
  /** Shows the authorization URL to the user (and opens a browser when there is one). */
  showUrl: (url: string) => void;
  /** Ctrl-C. */
  signal?: AbortSignal;
}

/**
 * The browser sign-in: registers the client if needed, waits (at most `oauth.timeout`) for the
 * redirect to the loopback listener, checks its `state`, exchanges the code, and stores the tokens.
 * Tokens stored before are replaced only when the new sign-in succeeds. Throws
 * {@link McpLoginError} with what went wrong.
 */
export async function loginMcpServer(options: LoginOptions): Promise<void> {
  const { auth } = loadMcpAuth();
  const store = new McpTokenStore(options.home, options.server);
  const listener = await listen(preferredPort(options.oauth, store));
  try {
    const redirectUrl = `http://127.0.0.1:${listener.port}${CALLBACK_PATH}`;
    let authorizationUrl: URL | undefined;
    const provider = new HermesOAuthProvider({
      server: options.server,
      oauth: options.oauth,
      store,
      redirectUrl,
      onRedirect: (url) => {
        authorizationUrl = url;
      },
    });
    const fetchFn = options.fetchFn ? { fetchFn: options.fetchFn } : {};
    const first = await auth(provider, { serverUrl: options.url, ...fetchFn }).catch((error: unknown) => {
      throw new McpLoginError(`could not start the sign-in with ${options.url}: ${describeAuthError(error)}`);
    });
    if (first === "AUTHORIZED") return;
    if (!authorizationUrl) throw new McpLoginError("the SDK asked for a redirect without giving its URL");
    const wait = listener.next(provider.state(), options.oauth.timeoutMs, options.signal);
    options.showUrl(authorizationUrl.toString());
    const code = await wait;
    await auth(provider, { serverUrl: options.url, authorizationCode: code, ...fetchFn }).catch(
      (error: unknown) => {
        throw new McpLoginError(`the authorization server refused the code: ${describeAuthError(error)}`);
      },
    );
  } finally {
    await listener.close();
  }
}

/** Removes the stored tokens and client registration; whether there was anything. */
export function logoutMcpServer(home: string, server: string): boolean {
  const store = new McpTokenStore(home, server);
  const tokens = store.removeTokens();
  const client = store.removeClient();
  return tokens || client;
}

/** A message for an error thrown by the SDK's auth helpers (OAuth errors carry a code). */
export function describeAuthError(error: unknown): string {
  if (error instanceof McpLoginRequiredError || error instanceof McpLoginError) return error.message;
  const code = (error as { errorCode?: unknown } | null)?.errorCode;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

function preferredPort(oauth: McpOAuthConfig, store: McpTokenStore): number {
  if (oauth.redirectPort) return oauth.redirectPort;
  const registered = registeredLoopbackRedirect(store.readClient());
  // A registration is bound to its redirect URI; reuse its port so it stays valid.
  return registered ? Number(new URL(registered).port) || 0 : 0;
}

function registeredUris(info: OAuthClientInformationMixed | undefined): string[] {
  const uris = (info as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  return Array.isArray(uris) ? uris.map(String) : [];
}

function registeredLoopbackRedirect(info: OAuthClientInformationMixed | undefined): string | undefined {
  return registeredUris(info).find((uri) => {
    try {
      const url = new URL(uri);
      return (
        url.protocol === "http:" && url.hostname === "127.0.0.1" && url.pathname === CALLBACK_PATH && url.port
      );
    } catch {
      return false;
    }
  });
}

interface Listener {
  port: number;
  /** The code of the next redirect carrying `state`; rejects on an error redirect, timeout or abort. */
  next(state: string, timeoutMs: number, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

/** The loopback redirect listener: 127.0.0.1 only, on `port` (or a free one when it is taken). */
async function listen(port: number): Promise<Listener> {
  let deliver: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== CALLBACK_PATH || !deliver) {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
      return;
    }
    deliver(request, response);
  });
  const bound = await bind(server, port).catch(async (error: NodeJS.ErrnoException) => {
    if (port === 0 || error.code !== "EADDRINUSE") throw error;
    return bind(server, 0);
  });
  return {
    port: bound,
    next(state, timeoutMs, signal) {
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          finish();
          reject(
            new McpLoginError(
              `no answer from the browser within ${Math.round(timeoutMs / 1000)} s (oauth.timeout)`,
            ),
          );
        }, timeoutMs);
        const onAbort = () => {
          finish();
          reject(new McpLoginError("the sign-in was cancelled"));
        };
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          deliver = undefined;
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        deliver = (request, response) => {
          const query = new URL(request.url ?? "/", "http://127.0.0.1").searchParams;
          // A redirect without our state is not the answer to our request (another tab, a forgery).
          if (query.get("state") !== state) {
            page(response, 400, "This sign-in link does not belong to the running hermes mcp login.");
            return;
          }
          const error = query.get("error");
          const code = query.get("code");
          finish();
          if (error) {
            page(response, 400, `Sign-in failed: ${error}. You can close this tab.`);
            const detail = query.get("error_description");
            reject(
              new McpLoginError(`the authorization server answered ${error}${detail ? `: ${detail}` : ""}`),
            );
          } else if (!code) {
            page(response, 400, "The redirect carried no code.");
            reject(new McpLoginError("the redirect carried no authorization code"));
          } else {
            page(response, 200, "Signed in. You can close this tab and go back to the terminal.");
            resolve(code);
          }
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function bind(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

function page(response: ServerResponse, status: number, text: string): void {
  const escaped = text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  response
    .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
    .end(`<!doctype html><title>Hermes</title><p>${escaped}</p>\n`);
}
