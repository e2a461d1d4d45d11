import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type McpManager, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import {
  type MtlsMcpServer,
  makeTestPki,
  startMtlsMcpServer,
  type TestPki,
} from "../../../support/mcp-tls.js";
import { makeToolContext } from "../../../support/tool-context.js";

let pki: TestPki;
let server: MtlsMcpServer;
beforeAll(async () => {
  pki = makeTestPki();
  server = await startMtlsMcpServer(pki);
});
afterAll(async () => {
  await server.close();
});
const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

async function connect(extra: Record<string, unknown>) {
  const registry = new ToolRegistry();
  const manager = startMcpServers({
    config: { secure: { url: server.url, connect_timeout: 20, ...extra } },
    registry,
    env: { HOME: pki.dir },
  });
  managers.push(manager);
  await manager.ready;
  const [status] = manager.status();
  const hello = async () => (await registry.execute("mcp_secure_hello", {}, makeToolContext())).content;
  return { status, hello };
}

describe("MCP over mutual TLS", () => {
  it("connects with the client certificate and key as separate files, trusting the test CA", async () => {
    const { status, hello } = await connect({
      ssl_verify: pki.caCert,
      client_cert: pki.clientCert,
      client_key: pki.clientKey,
    });
    expect(status?.error).toBeUndefined();
    expect(status?.state).toBe("connected");
    expect(await hello()).toBe("hello client");
  });

  it("connects with a combined PEM and with the [cert, key] list form", async () => {
    expect((await connect({ ssl_verify: pki.caCert, client_cert: pki.clientCombined })).status?.state).toBe(
      "connected",
    );
    expect(
      (await connect({ ssl_verify: pki.caCert, client_cert: [pki.clientCert, pki.clientKey] })).status?.state,
    ).toBe("connected");
  });

  it("is refused without a client certificate", async () => {
    const { status } = await connect({ ssl_verify: pki.caCert });
    expect(status?.state).toBe("failed");
    expect(status?.error).toBe(
      "TLS failed: the server requires a client certificate (set mcp_servers.secure.client_cert)",
    );
  });

  it("is refused with a certificate from another CA", async () => {
    const { status } = await connect({
      ssl_verify: pki.caCert,
      client_cert: pki.strangerCert,
      client_key: pki.strangerKey,
    });
    expect(status?.state).toBe("failed");
  });

  it("does not trust the server's private CA unless told to", async () => {
    const { status } = await connect({ client_cert: pki.clientCert, client_key: pki.clientKey });
    expect(status?.state).toBe("failed");
    expect(status?.error).toMatch(
      /^TLS failed: the server's certificate is not trusted: .* \(set mcp_servers\.secure\.ssl_verify to its CA bundle\)$/,
    );
  });

  it("connects to the untrusted server only with ssl_verify: false, said in so many words", async () => {
    const { status } = await connect({ ssl_verify: false, client_cert: pki.clientCombined });
    expect(status?.state).toBe("connected");
  });

  it("names the key and the path of a missing or wrong file", async () => {
    const missing = await connect({ ssl_verify: pki.caCert, client_cert: `${pki.dir}/nope.pem` });
    expect(missing.status?.error).toBe(`mcp_servers.secure.client_cert: ${pki.dir}/nope.pem does not exist`);
    const noKey = await connect({ ssl_verify: pki.caCert, client_cert: pki.clientCert });
    expect(noKey.status?.error).toMatch(/client_cert: .* holds no private key; add client_key/);
    const notPem = await connect({ ssl_verify: pki.clientKey, client_cert: pki.clientCombined });
    expect(notPem.status?.error).toMatch(/ssl_verify: .* is not a PEM file with a certificate/);
  });
});
