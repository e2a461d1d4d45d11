/**
 * A loopback fake of every OAuth endpoint Hermes logs in through, on one server: Nous Portal's
 * device code and token endpoints, ChatGPT's device auth and token endpoints, Anthropic's
 * authorize page (which answers `code#state`, as its callback page shows) and token endpoint
 * (checking PKCE), and GitHub's device flow with the Copilot token exchange.
 *
 * Device codes stay pending for `pendingPolls` polls, then are approved. Access tokens are numbered
 * (`<kind>-access-N`, JWT-shaped for Nous and Codex with an `exp`), refresh tokens are single use
 * (a spent one answers `invalid_grant`), and every request is recorded.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeOAuthRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** Form or JSON body as an object ({} when none). */
  body: Record<string, string>;
}

export interface FakeOAuthOptions {
  /** Polls answered "pending" before a device code is approved (default 1). */
  pendingPolls?: number;
  /** Lifetime of issued access tokens in seconds (default 3600). */
  expiresIn?: number;
  /** Answer the device poll with access_denied instead of approving. */
  deny?: boolean;
}

export interface FakeOAuth {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly requests: FakeOAuthRequest[];
  options: FakeOAuthOptions;
  /** Refresh tokens that were redeemed (each works once). */
  readonly spentRefreshTokens: Set<string>;
  /** Makes every refresh token invalid from now on (a revoked login). */
  revokeAll(): void;
  /** The number of token answers issued per kind. */
  issued(kind: "nous" | "codex" | "anthropic" | "github" | "copilot"): number;
  /** The requests to one path. */
  to(path: string): FakeOAuthRequest[];
  close(): Promise<void>;
}

/** An unsigned JWT with `claims` (Hermes only reads them). */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.sig`;
}

export async function startFakeOAuth(initial: FakeOAuthOptions = {}): Promise<FakeOAuth> {
  const requests: FakeOAuthRequest[] = [];
  const counters = { nous: 0, codex: 0, anthropic: 0, github: 0, copilot: 0 };
  const spent = new Set<string>();
  const live = new Set<string>();
  const polls = new Map<string, number>();
  const codeVerifiers = new Map<string, string>();
  let revoked = false;
  const state = { options: initial };

  const approved = (device: string): boolean => {
    const n = (polls.get(device) ?? 0) + 1;
    polls.set(device, n);
    return n > (state.options.pendingPolls ?? 1);
  };
  const expiresIn = () => state.options.expiresIn ?? 3600;
  const refresh = (kind: string) => {
    const token = `${kind}-refresh-${counters[kind as keyof typeof counters]}`;
    live.add(token);
    return token;
  };
  const redeem = (token: string | undefined): boolean => {
    if (!token || revoked || !live.has(token)) return false;
    live.delete(token);
    spent.add(token);
    return true;
  };
  const nousTokens = () => {
    counters.nous++;
    const exp = Math.floor(Date.now() / 1000) + expiresIn();
    return {
      access_token: fakeJwt({ sub: "user", scope: "inference:invoke", exp, n: counters.nous }),
      refresh_token: refresh("nous"),
      token_type: "Bearer",
      expires_in: expiresIn(),
      scope: "inference:invoke",
    };
  };
  const codexTokens = () => {
    counters.codex++;
    const exp = Math.floor(Date.now() / 1000) + expiresIn();
    return {
      access_token: fakeJwt({
        exp,
        n: counters.codex,
        "https://api.openai.com/auth": { chatgpt_account_id: "acct-fake-1" },
      }),
      refresh_token: refresh("codex"),
      id_token: fakeJwt({ email: "user@example.com" }),
    };
  };
  const anthropicTokens = () => {
    counters.anthropic++;
    return {
      access_token: `sk-ant-oat01-fake-access-${counters.anthropic}`,
      refresh_token: refresh("anthropic"),
      expires_in: expiresIn(),
      token_type: "Bearer",
    };
  };

  const routes: Record<string, (req: FakeOAuthRequest, res: ServerResponse, url: URL) => void> = {
    // Nous Portal
    "POST /api/oauth/device/code": (_req, res) =>
      json(res, 200, {
        device_code: "nous-device-1",
        user_code: "NOUS-CODE",
        verification_uri: `${base()}/device`,
        verification_uri_complete: `${base()}/device?user_code=NOUS-CODE`,
        expires_in: 600,
        interval: 0,
      }),
    "POST /api/oauth/token": (req, res) => {
      if (req.body["grant_type"] === "urn:ietf:params:oauth:grant-type:device_code") {
        if (state.options.deny) return json(res, 400, { error: "access_denied" });
        if (!approved(req.body["device_code"] ?? ""))
          return json(res, 400, { error: "authorization_pending" });
        return json(res, 200, nousTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, nousTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
    // ChatGPT (Codex)
    "POST /api/accounts/deviceauth/usercode": (_req, res) =>
      json(res, 200, { device_auth_id: "codex-device-1", user_code: "CODEX-CODE", interval: "0" }),
    "POST /api/accounts/deviceauth/token": (req, res) => {
      if (state.options.deny) return json(res, 400, { error: "access_denied" });
      if (!approved(req.body["device_auth_id"] ?? "")) return json(res, 403, { error: "pending" });
      codeVerifiers.set("codex-auth-code", "codex-verifier");
      return json(res, 200, { authorization_code: "codex-auth-code", code_verifier: "codex-verifier" });
    },
    "POST /oauth/token": (req, res) => {
      if (req.body["grant_type"] === "authorization_code") {
        if (req.body["code"] !== "codex-auth-code" || req.body["code_verifier"] !== "codex-verifier") {
          return json(res, 400, { error: "invalid_grant" });
        }
        return json(res, 200, codexTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 401, { error: "invalid_grant" });
        return json(res, 200, codexTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
    // Anthropic: the authorize page answers what its callback page would show.
    "GET /oauth/authorize": (_req, res, url) => {
      const challenge = url.searchParams.get("code_challenge") ?? "";
      codeVerifiers.set(`anthropic-code-${challenge.slice(0, 8)}`, challenge);
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end(`anthropic-code-${challenge.slice(0, 8)}#${url.searchParams.get("state") ?? ""}`);
    },
    "POST /v1/oauth/token": (req, res) => {
      if (req.body["grant_type"] === "authorization_code") {
        const challenge = codeVerifiers.get(req.body["code"] ?? "");
        const verifier = req.body["code_verifier"] ?? "";
        const computed = createHash("sha256").update(verifier).digest("base64url");
        if (!challenge || computed !== challenge) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, anthropicTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, anthropicTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
    // GitHub + Copilot
    "POST /login/device/code": (_req, res) =>
      json(res, 200, {
        device_code: "gh-device-1",
        user_code: "GH-CODE",
        verification_uri: `${base()}/login/device`,
        expires_in: 900,
        interval: 0,
      }),
    "POST /login/oauth/access_token": (req, res) => {
      if (state.options.deny) return json(res, 200, { error: "access_denied" });
      if (!approved(req.body["device_code"] ?? "")) return json(res, 200, { error: "authorization_pending" });
      counters.github++;
      return json(res, 200, { access_token: `ghu_fakegithubtoken${counters.github}`, token_type: "bearer" });
    },
    "GET /copilot_internal/v2/token": (req, res) => {
      const auth = String(req.headers["authorization"] ?? "");
      if (!auth.startsWith("token ghu_")) return json(res, 401, { message: "Bad credentials" });
      counters.copilot++;
      return json(res, 200, {
        token: `copilot-token-${counters.copilot}`,
        expires_at: Math.floor(Date.now() / 1000) + expiresIn(),
        endpoints: { api: "https://api.individual.githubcopilot.com" },
      });
    },
  };

  const server = createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (c: Buffer) => chunks.push(c));
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(incoming.url ?? "/", base());
      const type = String(incoming.headers["content-type"] ?? "");
      let body: Record<string, string> = {};
      if (type.includes("json") && raw) body = JSON.parse(raw) as Record<string, string>;
      else if (raw) body = Object.fromEntries(new URLSearchParams(raw));
      const req: FakeOAuthRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        headers: incoming.headers,
        body,
      };
      requests.push(req);
      const route = routes[`${req.method} ${url.pathname}`];
      if (!route) return json(res, 404, { error: "not_found" });
      route(req, res, url);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  function base(): string {
    return `http://127.0.0.1:${port}`;
  }

  return {
    url: base(),
    requests,
    get options() {
      return state.options;
    },
    set options(value: FakeOAuthOptions) {
      state.options = value;
    },
    spentRefreshTokens: spent,
    revokeAll: () => {
      revoked = true;
    },
    issued: (kind) => counters[kind],
    to: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The environment that points every Hermes OAuth flow at `fake`. */
export function fakeOAuthEnv(fake: FakeOAuth): Record<string, string> {
  return {
    HERMES_PORTAL_BASE_URL: fake.url,
    HERMES_CODEX_ISSUER: fake.url,
    HERMES_ANTHROPIC_OAUTH_BASE_URL: fake.url,
    HERMES_GITHUB_BASE_URL: fake.url,
    HERMES_GITHUB_API_URL: fake.url,
  };
}
