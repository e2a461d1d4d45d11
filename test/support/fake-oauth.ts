/**
 * A loopback fake of every OAuth endpoint Hermes logs in through, on one server: Nous Portal's
 * device code and token endpoints, ChatGPT's device auth and token endpoints, Anthropic's
 * authorize page (which answers `code#state`, as its callback page shows) and token endpoint
 * (checking PKCE), GitHub's device flow with the Copilot token exchange, xAI's OIDC discovery and
 * device code (under `/xai`), Qwen's PKCE device code (under `/api/v1/oauth2`, checking the
 * verifier) and MiniMax's user-code grant (under `/minimax`, checking the verifier and `state`).
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
  /** Accepts `token` once as a refresh token (a login made elsewhere, e.g. by the Qwen CLI). */
  grantRefreshToken(token: string): void;
  /** The number of token answers issued per kind. */
  issued(kind: "nous" | "codex" | "anthropic" | "github" | "copilot" | "xai" | "qwen" | "minimax"): number;
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
  const counters = { nous: 0, codex: 0, anthropic: 0, github: 0, copilot: 0, xai: 0, qwen: 0, minimax: 0 };
  const qwenChallenges = new Map<string, string>();
  const minimaxChallenges = new Map<string, string>();
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

  const xaiTokens = () => {
    counters.xai++;
    const exp = Math.floor(Date.now() / 1000) + expiresIn();
    return {
      access_token: fakeJwt({ sub: "grok-user", exp, n: counters.xai }),
      refresh_token: refresh("xai"),
      id_token: fakeJwt({ email: "grok@example.com" }),
      expires_in: expiresIn(),
      token_type: "Bearer",
    };
  };
  const qwenTokens = () => {
    counters.qwen++;
    return {
      access_token: `qwen-access-${counters.qwen}`,
      refresh_token: refresh("qwen"),
      token_type: "Bearer",
      expires_in: expiresIn(),
      resource_url: "portal.qwen.ai",
    };
  };
  const minimaxTokens = () => {
    counters.minimax++;
    return {
      status: "success",
      access_token: `minimax-access-${counters.minimax}`,
      refresh_token: refresh("minimax"),
      token_type: "Bearer",
      expired_in: expiresIn(),
    };
  };
  const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

  const routes: Record<string, (req: FakeOAuthRequest, res: ServerResponse, url: URL) => void> = {
    // xAI (issuer at /xai)
    "GET /xai/.well-known/openid-configuration": (_req, res) =>
      json(res, 200, {
        issuer: `${base()}/xai`,
        authorization_endpoint: `${base()}/xai/oauth2/authorize`,
        token_endpoint: `${base()}/xai/oauth2/token`,
      }),
    "POST /xai/oauth2/device/code": (_req, res) =>
      json(res, 200, {
        device_code: "xai-device-1",
        user_code: "XAI-CODE",
        verification_uri: `${base()}/xai/device`,
        verification_uri_complete: `${base()}/xai/device?user_code=XAI-CODE`,
        expires_in: 600,
        interval: 0,
      }),
    "POST /xai/oauth2/token": (req, res) => {
      if (req.body["grant_type"] === "urn:ietf:params:oauth:grant-type:device_code") {
        if (state.options.deny) return json(res, 400, { error: "access_denied" });
        if (!approved(req.body["device_code"] ?? ""))
          return json(res, 400, { error: "authorization_pending" });
        return json(res, 200, xaiTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, xaiTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
    // Qwen
    "POST /api/v1/oauth2/device/code": (req, res) => {
      const device = `qwen-device-${qwenChallenges.size + 1}`;
      qwenChallenges.set(device, req.body["code_challenge"] ?? "");
      json(res, 200, {
        device_code: device,
        user_code: "QWEN-CODE",
        verification_uri: `${base()}/authorize`,
        verification_uri_complete: `${base()}/authorize?user_code=QWEN-CODE&client=qwen-code`,
        expires_in: 600,
        interval: 0,
      });
    },
    "POST /api/v1/oauth2/token": (req, res) => {
      if (req.body["grant_type"] === "urn:ietf:params:oauth:grant-type:device_code") {
        const device = req.body["device_code"] ?? "";
        if (s256(req.body["code_verifier"] ?? "") !== qwenChallenges.get(device)) {
          return json(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
        }
        if (state.options.deny) return json(res, 400, { error: "access_denied" });
        if (!approved(device)) return json(res, 400, { error: "authorization_pending" });
        return json(res, 200, qwenTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, qwenTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
    // MiniMax (portal at /minimax)
    "POST /minimax/oauth/code": (req, res) => {
      const code = `MM-CODE-${minimaxChallenges.size + 1}`;
      minimaxChallenges.set(code, req.body["code_challenge"] ?? "");
      json(res, 200, {
        user_code: code,
        verification_uri: `https://www.minimaxi.io/oauth-authorize?user_code=${code}`,
        expired_in: 600,
        interval: 10,
        state: req.body["state"],
      });
    },
    "POST /minimax/oauth/token": (req, res) => {
      if (req.body["grant_type"] === "urn:ietf:params:oauth:grant-type:user_code") {
        const code = req.body["user_code"] ?? "";
        if (s256(req.body["code_verifier"] ?? "") !== minimaxChallenges.get(code)) {
          return json(res, 400, { base_resp: { status_code: 1004, status_msg: "code_verifier mismatch" } });
        }
        if (state.options.deny) return json(res, 200, { status: "error" });
        if (!approved(code)) return json(res, 200, { status: "pending" });
        return json(res, 200, minimaxTokens());
      }
      if (req.body["grant_type"] === "refresh_token") {
        if (!redeem(req.body["refresh_token"])) return json(res, 400, { error: "invalid_grant" });
        return json(res, 200, minimaxTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    },
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
    grantRefreshToken: (token) => {
      live.add(token);
    },
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
    HERMES_XAI_OAUTH_ISSUER: `${fake.url}/xai`,
    HERMES_QWEN_OAUTH_URL: fake.url,
    HERMES_MINIMAX_OAUTH_BASE_URL: `${fake.url}/minimax`,
  };
}
