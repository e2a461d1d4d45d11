/**
 * A loopback fake of the Microsoft identity endpoints an Entra ID credential chain talks to:
 *
 * - `POST /<tenant>/oauth2/v2.0/token`: the authority's token endpoint (client secret or client
 *   assertion), answering `{token_type, expires_in, access_token}` as login.microsoftonline.com does;
 * - `GET /msi/token?api-version=2019-08-01&resource=…` with `X-IDENTITY-HEADER`: App Service's
 *   managed-identity endpoint (IDENTITY_ENDPOINT), answering `expires_on` in epoch seconds;
 * - `GET /metadata/identity/oauth2/token?…` with `Metadata: true`: the instance metadata service.
 *
 * Each endpoint hands out `<prefix>-<n>` tokens unless a scripted answer is queued: a status with
 * a JSON body, raw text, or a hang (the socket stays open, no answer).
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type EntraEndpoint = "authority" | "identity" | "imds";

export type FakeAnswer =
  | { kind: "json"; status: number; body: unknown }
  | { kind: "raw"; status: number; text: string }
  | { kind: "hang" };

export interface EntraRequest {
  endpoint: EntraEndpoint;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The form fields of a token POST. */
  form: Record<string, string>;
}

export interface FakeEntra {
  /** `http://127.0.0.1:<port>`: AZURE_AUTHORITY_HOST and AZURE_POD_IDENTITY_AUTHORITY_HOST. */
  url: string;
  /** IDENTITY_ENDPOINT. */
  identityEndpoint: string;
  requests: EntraRequest[];
  /** The next answer of `endpoint` (then back to minting tokens). */
  script(endpoint: EntraEndpoint, answer: FakeAnswer): void;
  /** Lifetime in seconds of minted tokens (default 3600). */
  lifetime: number;
  close(): Promise<void>;
}

export async function startFakeEntra(options: { prefix?: string } = {}): Promise<FakeEntra> {
  const prefix = options.prefix ?? "entra-token";
  const scripted: Record<EntraEndpoint, FakeAnswer[]> = { authority: [], identity: [], imds: [] };
  const requests: EntraRequest[] = [];
  const sockets = new Set<Socket>();
  let minted = 0;
  const fake: FakeEntra = {
    url: "",
    identityEndpoint: "",
    requests,
    lifetime: 3600,
    script: (endpoint, answer) => scripted[endpoint].push(answer),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const endpoint: EntraEndpoint | undefined = /\/oauth2\/v2\.0\/token$/.test(url.pathname)
        ? "authority"
        : url.pathname === "/msi/token"
          ? "identity"
          : url.pathname === "/metadata/identity/oauth2/token"
            ? "imds"
            : undefined;
      if (!endpoint) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not_found"}');
        return;
      }
      const body = Buffer.concat(chunks).toString("utf8");
      const form = Object.fromEntries(new URLSearchParams(body));
      requests.push({
        endpoint,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        form,
      });
      const answer = scripted[endpoint].shift();
      if (answer?.kind === "hang") return;
      if (answer?.kind === "raw") {
        res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.text);
        return;
      }
      if (answer?.kind === "json") {
        res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
        return;
      }
      minted += 1;
      const token = `${prefix}-${endpoint}-${minted}`;
      const nowS = Math.floor(Date.now() / 1000);
      const payload =
        endpoint === "authority"
          ? {
              token_type: "Bearer",
              expires_in: fake.lifetime,
              ext_expires_in: fake.lifetime,
              access_token: token,
            }
          : {
              access_token: token,
              expires_on: String(nowS + fake.lifetime),
              resource: url.searchParams.get("resource"),
              token_type: "Bearer",
            };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(payload));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${port}`;
  fake.identityEndpoint = `${fake.url}/msi/token`;
  return fake;
}

/**
 * A fake `az` for PATH: prints `stdout` and `stderr` and exits with `code`; with `recordTo` it
 * first appends its arguments and its environment's AZURE_CLIENT_SECRET (or "-") to that file.
 */
export function fakeAzScript(options: {
  stdout?: string;
  stderr?: string;
  code?: number;
  recordTo?: string;
  sleepSeconds?: number;
}): string {
  const lines = ["#!/bin/sh"];
  if (options.recordTo) {
    lines.push(`printf '%s\\n' "$*" >> '${options.recordTo}'`);
    lines.push(`printf 'secret=%s\\n' "\${AZURE_CLIENT_SECRET:--}" >> '${options.recordTo}'`);
  }
  if (options.sleepSeconds) lines.push(`sleep ${options.sleepSeconds}`);
  if (options.stdout !== undefined) lines.push(`cat <<'JSON_END'\n${options.stdout}\nJSON_END`);
  if (options.stderr) lines.push(`printf '%s\\n' '${options.stderr.replace(/'/g, "'\\''")}' >&2`);
  lines.push(`exit ${options.code ?? 0}`);
  return `${lines.join("\n")}\n`;
}
