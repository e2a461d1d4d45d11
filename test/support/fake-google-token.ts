/**
 * A loopback stand-in for Google's OAuth token endpoint (`https://oauth2.googleapis.com/token`),
 * speaking its two grants as Google does:
 *
 * - `urn:ietf:params:oauth:grant-type:jwt-bearer`: the `assertion` must be an RS256 JWT whose
 *   signature verifies with the service account's public key, issued by its email, addressed to
 *   this endpoint (`aud`), for the cloud-platform scope, valid for at most an hour;
 * - `refresh_token`: client id, secret and refresh token must be the user's.
 *
 * Anything else gets Google's `400 {"error":"invalid_grant"}`. Each accepted request yields a new
 * `ya29.` token; `mode` scripts refusals and hangs.
 */
import { generateKeyPairSync, type KeyObject, verify } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ServiceAccountFixture {
  clientEmail: string;
  privateKeyPem: string;
  publicKey: KeyObject;
  privateKeyId: string;
}

/** A fresh RSA key pair for a service account named `name`. */
export function serviceAccountFixture(name = "hermes-test"): ServiceAccountFixture {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    clientEmail: `${name}@test-project.iam.gserviceaccount.com`,
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKey,
    privateKeyId: "0123456789abcdef0123456789abcdef01234567",
  };
}

/** The JSON key file Google's console downloads for `sa`, with `tokenUri` as its `token_uri`. */
export function serviceAccountJson(
  sa: ServiceAccountFixture,
  tokenUri: string,
  projectId = "key-project",
): string {
  return JSON.stringify(
    {
      type: "service_account",
      project_id: projectId,
      private_key_id: sa.privateKeyId,
      private_key: sa.privateKeyPem,
      client_email: sa.clientEmail,
      client_id: "104512345678901234567",
      auth_uri: "https://accounts.google.com/o/oauth2/auth",
      token_uri: tokenUri,
    },
    null,
    2,
  );
}

export interface AuthorizedUserFixture {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export const GCLOUD_USER: AuthorizedUserFixture = {
  clientId: "100000000001-hermestestclient.apps.googleusercontent.com",
  clientSecret: "hermes-test-client-secret-4f1c",
  refreshToken: "1//0gLq7fake-refresh-token-for-hermes-tests-Zx9",
};

export interface TokenRequest {
  grant: string;
  form: Record<string, string>;
  /** The JWT's claims, for a jwt-bearer grant that verified. */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
}

export type TokenMode = "ok" | "refuse" | "hang" | "server_error";

export interface FakeGoogleToken {
  /** The token endpoint's URL. */
  readonly url: string;
  readonly requests: TokenRequest[];
  /** Every access token issued, in order. */
  readonly issued: string[];
  mode: TokenMode;
  /** `expires_in` of the next tokens (seconds). */
  expiresIn: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

function decode(part: string | undefined): Record<string, unknown> | undefined {
  try {
    return JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export async function startFakeGoogleToken(options: {
  serviceAccount?: ServiceAccountFixture;
  user?: AuthorizedUserFixture;
  path?: string;
}): Promise<FakeGoogleToken> {
  const path = options.path ?? "/token";
  const sockets = new Set<Socket>();
  let counter = 0;
  const state = { mode: "ok" as TokenMode, expiresIn: 3599 };
  const requests: TokenRequest[] = [];
  const issued: string[] = [];
  let url = "";

  const server = createServer((req, res) => {
    void (async () => {
      const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
      const record: TokenRequest = { grant: form["grant_type"] ?? "", form };
      requests.push(record);
      if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== path) {
        send(res, 404, { error: "not_found" });
        return;
      }
      if (state.mode === "hang") return;
      if (state.mode === "server_error") {
        send(res, 503, { error: "temporarily_unavailable" });
        return;
      }
      const refuse = (why: string) => send(res, 400, { error: "invalid_grant", error_description: why });
      if (state.mode === "refuse") return refuse("Invalid JWT Signature.");
      if (record.grant === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        const sa = options.serviceAccount;
        const [h, c, sig] = (form["assertion"] ?? "").split(".");
        const header = decode(h);
        const claims = decode(c);
        if (!sa || !header || !claims || !sig) return refuse("Invalid JWT.");
        const good = verify("sha256", Buffer.from(`${h}.${c}`), sa.publicKey, Buffer.from(sig, "base64url"));
        if (!good || header["alg"] !== "RS256") return refuse("Invalid JWT Signature.");
        const iat = Number(claims["iat"]);
        const exp = Number(claims["exp"]);
        if (claims["iss"] !== sa.clientEmail || claims["aud"] !== url || exp - iat > 3600 || exp <= iat) {
          return refuse("Invalid JWT: claims.");
        }
        if (claims["scope"] !== "https://www.googleapis.com/auth/cloud-platform") return refuse("Bad scope.");
        record.claims = claims;
        record.header = header;
      } else if (record.grant === "refresh_token") {
        const user = options.user;
        if (
          !user ||
          form["refresh_token"] !== user.refreshToken ||
          form["client_id"] !== user.clientId ||
          form["client_secret"] !== user.clientSecret
        ) {
          return refuse("Token has been expired or revoked.");
        }
      } else {
        send(res, 400, { error: "unsupported_grant_type" });
        return;
      }
      counter++;
      const token = `ya29.fake-access-${counter}-${Math.random().toString(36).slice(2, 12)}`;
      issued.push(token);
      send(res, 200, { access_token: token, expires_in: state.expiresIn, token_type: "Bearer" });
    })().catch(() => res.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}${path}`;
  return {
    url,
    requests,
    issued,
    get mode() {
      return state.mode;
    },
    set mode(value: TokenMode) {
      state.mode = value;
    },
    get expiresIn() {
      return state.expiresIn;
    },
    set expiresIn(value: number) {
      state.expiresIn = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
