/**
 * A test CA made with `openssl`, and an HTTPS MCP server (Streamable HTTP, stateless) on loopback
 * that demands a client certificate signed by that CA. Also a second CA whose client certificate
 * the server must refuse.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);

export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Client cert and key in one PEM file. */
  clientCombined: string;
  /** A client certificate from another CA (the server must refuse it). */
  strangerCert: string;
  strangerKey: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: "pipe" });
}

/** Makes a CA, a server cert for 127.0.0.1, a client cert, and a stranger's cert from another CA. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "hermes-pki-"));
  const ca = (name: string) =>
    openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        `/CN=${name}`,
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.crt`,
      ],
      dir,
    );
  const leaf = (name: string, issuer: string, ext: string) => {
    openssl(
      [
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        `/CN=${name}`,
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
      ],
      dir,
    );
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${issuer}.crt`,
        "-CAkey",
        `${issuer}.key`,
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        `${name}.crt`,
        "-extfile",
        `${name}.ext`,
      ],
      dir,
    );
  };
  ca("test-ca");
  ca("stranger-ca");
  leaf("server", "test-ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  leaf("client", "test-ca", "extendedKeyUsage=clientAuth\n");
  leaf("stranger", "stranger-ca", "extendedKeyUsage=clientAuth\n");
  const p = (f: string) => join(dir, f);
  writeFileSync(
    p("client-combined.pem"),
    readFileSync(p("client.crt"), "utf8") + readFileSync(p("client.key"), "utf8"),
  );
  return {
    dir,
    caCert: p("test-ca.crt"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    clientCert: p("client.crt"),
    clientKey: p("client.key"),
    clientCombined: p("client-combined.pem"),
    strangerCert: p("stranger.crt"),
    strangerKey: p("stranger.key"),
  };
}

export interface MtlsMcpServer {
  url: string;
  /** Common names of the client certificates the server accepted, in order. */
  clients: string[];
  close(): Promise<void>;
}

/** An HTTPS MCP server on 127.0.0.1 that requires a client certificate from `pki`'s CA. */
export async function startMtlsMcpServer(pki: TestPki): Promise<MtlsMcpServer> {
  const { McpServer } =
    require("@modelcontextprotocol/sdk/server/mcp.js") as typeof import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } =
    require("@modelcontextprotocol/sdk/server/streamableHttp.js") as typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const clients: string[] = [];
  const server: Server = createServer(
    {
      cert: readFileSync(pki.serverCert),
      key: readFileSync(pki.serverKey),
      ca: readFileSync(pki.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    async (req, res) => {
      if (req.method !== "POST") {
        res.writeHead(405).end();
        return;
      }
      const peer = (req.socket as import("node:tls").TLSSocket).getPeerCertificate();
      clients.push(String(peer.subject?.CN ?? ""));
      const mcp = new McpServer({ name: "mtls-server", version: "1.0.0" });
      mcp.registerTool("hello", { description: "Greet the client certificate." }, async () => ({
        content: [{ type: "text", text: `hello ${String(peer.subject?.CN ?? "nobody")}` }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/mcp`,
    clients,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
