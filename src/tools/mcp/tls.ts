/**
 * TLS for an HTTP MCP server: a client certificate (mTLS), a private CA, or no verification, as
 * `ssl_verify` / `client_cert` / `client_key` say. The files are read when the server connects, so
 * a missing or unreadable one fails that server with a message naming the key and the path, never
 * as an opaque handshake error.
 */
import { readFileSync } from "node:fs";
import type * as Https from "node:https";
import { createRequire } from "node:module";
import { httpFetchWithAgent } from "../../util/http-fetch.js";
import type { McpTlsConfig } from "./config-options.js";

/** A TLS setting that cannot be used (a file missing, unreadable, or not PEM); ready to show. */
export class McpTlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpTlsError";
  }
}

/** Options for an https agent; reads the files now. Throws {@link McpTlsError}. */
export function tlsAgentOptions(server: string, tls: McpTlsConfig): Https.AgentOptions {
  const options: Https.AgentOptions = { keepAlive: true };
  if (!tls.verify) options.rejectUnauthorized = false;
  if (tls.caFile) options.ca = readPem(server, "ssl_verify", tls.caFile, "CERTIFICATE");
  if (tls.certFile) {
    const cert = readPem(server, "client_cert", tls.certFile, "CERTIFICATE");
    options.cert = cert;
    // A combined file holds the key as well; a separate key file wins.
    options.key = tls.keyFile
      ? readPem(server, "client_key", tls.keyFile, "PRIVATE KEY")
      : hasBlock(cert, "PRIVATE KEY")
        ? cert
        : fail(
            server,
            "client_cert",
            `${tls.certFile} holds no private key; add client_key or use a combined PEM`,
          );
    if (tls.passphrase) options.passphrase = tls.passphrase;
  }
  return options;
}

/** A fetch for the MCP SDK's transports that speaks TLS as the server's settings say. */
export function tlsFetch(server: string, tls: McpTlsConfig): typeof fetch {
  const https = createRequire(import.meta.url)("node:https") as typeof Https;
  const agent = new https.Agent(tlsAgentOptions(server, tls));
  return httpFetchWithAgent(agent) as typeof fetch;
}

function readPem(server: string, key: string, path: string, kind: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "does not exist"
        : code === "EACCES"
          ? "cannot be read (permissions)"
          : String(error);
    return fail(server, key, `${path} ${why}`);
  }
  if (!hasBlock(text, kind))
    return fail(server, key, `${path} is not a PEM file with a ${kind.toLowerCase()}`);
  return text;
}

function hasBlock(text: string, kind: string): boolean {
  return new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text);
}

function fail(server: string, key: string, detail: string): never {
  throw new McpTlsError(`mcp_servers.${server}.${key}: ${detail}`);
}

/** Whether a connection error is a TLS failure; the text to add to its message when it is. */
export function describeTlsFailure(server: string, error: unknown): string | undefined {
  const keys = `mcp_servers.${server}.client_cert, client_key and ssl_verify`;
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = String((e as { code?: unknown }).code ?? "");
    const message = e instanceof Error ? e.message : "";
    if (/certificate required/i.test(message)) {
      return `TLS failed: the server requires a client certificate (set mcp_servers.${server}.client_cert)`;
    }
    if (/unknown ca|bad certificate|certificate unknown|decrypt error/i.test(message)) {
      return `TLS failed: the server refused the client certificate (check ${keys})`;
    }
    if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_UNTRUSTED/.test(code)) {
      return `TLS failed: the server's certificate is not trusted: ${message || code} (set mcp_servers.${server}.ssl_verify to its CA bundle)`;
    }
    if (/CERT|ERR_TLS|ERR_SSL/.test(code) || /certificate|handshake|SSL routines/i.test(message)) {
      // OpenSSL's messages carry a file and line; the reason is what follows the last routine name.
      const reason = message.replace(/^.*SSL routines:[^:]*:/s, "").replace(/:\.\.\/deps\/.*$/s, "");
      return `TLS failed: ${reason || code} (check ${keys})`;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
