/**
 * A loopback OAuth 2.1 authorization server in front of a real MCP server over Streamable HTTP,
 * built from the MCP SDK's own server pieces: `mcpAuthRouter` (metadata, dynamic client
 * registration, /authorize with PKCE, /token, /revoke) and `requireBearerAuth` on `/mcp`, which
 * answers 401 with the protected-resource metadata URL for a missing, unknown or expired token.
 *
 * The "user" approves at once: /authorize redirects straight back with a code, so a test plays
 * the browser by fetching the printed URL. Knobs: `accessTtlS` (token lifetime), `expireAll()`,
 * `revokeAll()` (access and refresh tokens die: the next refresh fails with invalid_grant),
 * `denyNext()` (the next /authorize answers error=access_denied). Counters say what happened.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { Response } from "express";

const require = createRequire(import.meta.url);

interface Grant {
  clientId: string;
  challenge: string;
  redirectUri: string;
  scopes: string[];
}

interface Token {
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

export interface FakeMcpOAuth {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  origin: string;
  counts: {
    registrations: number;
    authorizations: number;
    codeExchanges: number;
    refreshes: number;
    mcpCalls: number;
    unauthorized: number;
  };
  /** Access tokens issued, in order. */
  issued: string[];
  /** Access tokens given to /mcp with a valid bearer, in order. */
  seen: string[];
  expireAll(): void;
  revokeAll(): void;
  denyNext(): void;
  close(): Promise<void>;
}

export async function startFakeMcpOAuth(options: { accessTtlS?: number } = {}): Promise<FakeMcpOAuth> {
  const express = require("express") as typeof import("express");
  const { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } =
    require("@modelcontextprotocol/sdk/server/auth/router.js") as typeof import("@modelcontextprotocol/sdk/server/auth/router.js");
  const { requireBearerAuth } =
    require("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js") as typeof import("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js");
  const { InvalidTokenError, InvalidGrantError } =
    require("@modelcontextprotocol/sdk/server/auth/errors.js") as typeof import("@modelcontextprotocol/sdk/server/auth/errors.js");
  const { McpServer } =
    require("@modelcontextprotocol/sdk/server/mcp.js") as typeof import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } =
    require("@modelcontextprotocol/sdk/server/streamableHttp.js") as typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  type ClientInfo = import("@modelcontextprotocol/sdk/shared/auth.js").OAuthClientInformationFull;

  const ttl = options.accessTtlS ?? 3600;
  const clients = new Map<string, ClientInfo>();
  const codes = new Map<string, Grant>();
  const access = new Map<string, Token>();
  const refresh = new Map<string, { clientId: string; scopes: string[] }>();
  let deny = false;
  const counts = {
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    mcpCalls: 0,
    unauthorized: 0,
  };
  const issued: string[] = [];
  const seen: string[] = [];
  const now = () => Math.floor(Date.now() / 1000);
  const mint = (clientId: string, scopes: string[]) => {
    const accessToken = `at_${randomBytes(12).toString("hex")}`;
    const refreshToken = `rt_${randomBytes(12).toString("hex")}`;
    access.set(accessToken, { clientId, scopes, expiresAt: now() + ttl });
    refresh.set(refreshToken, { clientId, scopes });
    issued.push(accessToken);
    return {
      access_token: accessToken,
      token_type: "bearer",
      expires_in: ttl,
      refresh_token: refreshToken,
      scope: scopes.join(" "),
    };
  };

  const provider = {
    clientsStore: {
      getClient: (id: string) => clients.get(id),
      registerClient: (client: Omit<ClientInfo, "client_id" | "client_id_issued_at">) => {
        counts.registrations++;
        const full = {
          ...client,
          client_id: `client_${randomBytes(6).toString("hex")}`,
          client_id_issued_at: now(),
        } as ClientInfo;
        clients.set(full.client_id, full);
        return full;
      },
    },
    async authorize(
      client: ClientInfo,
      params: { state?: string; scopes?: string[]; codeChallenge: string; redirectUri: string },
      res: Response,
    ) {
      counts.authorizations++;
      const target = new URL(params.redirectUri);
      if (params.state) target.searchParams.set("state", params.state);
      if (deny) {
        deny = false;
        target.searchParams.set("error", "access_denied");
        target.searchParams.set("error_description", "the user said no");
      } else {
        const code = `code_${randomBytes(8).toString("hex")}`;
        codes.set(code, {
          clientId: client.client_id,
          challenge: params.codeChallenge,
          redirectUri: params.redirectUri,
          scopes: params.scopes ?? [],
        });
        target.searchParams.set("code", code);
      }
      res.redirect(302, target.toString());
    },
    async challengeForAuthorizationCode(_client: ClientInfo, code: string) {
      const grant = codes.get(code);
      if (!grant) throw new InvalidGrantError("unknown authorization code");
      return grant.challenge;
    },
    async exchangeAuthorizationCode(client: ClientInfo, code: string) {
      const grant = codes.get(code);
      if (!grant || grant.clientId !== client.client_id)
        throw new InvalidGrantError("unknown authorization code");
      codes.delete(code);
      counts.codeExchanges++;
      return mint(client.client_id, grant.scopes);
    },
    async exchangeRefreshToken(client: ClientInfo, token: string) {
      const entry = refresh.get(token);
      if (!entry || entry.clientId !== client.client_id)
        throw new InvalidGrantError("refresh token revoked or unknown");
      refresh.delete(token);
      counts.refreshes++;
      return mint(client.client_id, entry.scopes);
    },
    async verifyAccessToken(token: string) {
      const entry = access.get(token);
      if (!entry) throw new InvalidTokenError("unknown or revoked token");
      return { token, clientId: entry.clientId, scopes: entry.scopes, expiresAt: entry.expiresAt };
    },
  };

  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const address = server.address();
  const origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const mcpUrl = new URL("/mcp", origin);
  app.use(
    mcpAuthRouter({
      provider: provider as never,
      issuerUrl: new URL(origin),
      resourceServerUrl: mcpUrl,
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  app.post(
    "/mcp",
    (_req, res, next) => {
      res.on("finish", () => {
        if (res.statusCode === 401) counts.unauthorized++;
      });
      next();
    },
    bearer,
    express.json(),
    async (req, res) => {
      counts.mcpCalls++;
      const token = (req as { auth?: { token: string } }).auth?.token;
      if (token) seen.push(token);
      // Stateless: a server and transport per request.
      const mcp = new McpServer({ name: "oauth-protected", version: "1.0.0" });
      mcp.registerTool("whoami", { description: "Say which token the call carried." }, async () => ({
        content: [{ type: "text", text: `token ${issued.indexOf(token ?? "") + 1}` }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  app.get("/mcp", (_req, res) => res.status(405).end());

  return {
    url: mcpUrl.toString(),
    origin,
    counts,
    issued,
    seen,
    expireAll() {
      for (const entry of access.values()) entry.expiresAt = now() - 1;
    },
    revokeAll() {
      access.clear();
      refresh.clear();
    },
    denyNext() {
      deny = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
