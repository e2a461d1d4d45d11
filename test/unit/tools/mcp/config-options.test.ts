// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { describe, expect, it } from "vitest";
import { parseMcpServer, parseMcpServers } from "../../../../src/tools/mcp/config.js";

const env = { HOME: "/home/ada", KEY_PASS: "s3cret", OAUTH_SECRET: "cs" };

function http(extra: Record<string, unknown>) {
  const server = parseMcpServer("api", { url: "https://mcp.example.com/mcp", ...extra }, env);
  if (server.transport !== "http") throw new Error("expected an http server");
  return server;
}

describe("mcp_servers OAuth keys", () => {
  it("reads auth: oauth with the oauth mapping, expanding the secret", () => {
    const server = http({
      auth: "OAuth",
      oauth: {
        client_id: "abc",
        client_secret: "${OAUTH_SECRET}",
        scope: "read write",
        redirect_port: 27890,
        timeout: 60,
      },
    });
    expect(server.oauth).toEqual({
      clientId: "abc",
      clientSecret: "cs",
      scope: "read write",
      redirectPort: 27890,
      clientName: "Hermes Agent",
      timeoutMs: 60_000,
    });
  });

  it("leaves OAuth off for auth: header or no auth", () => {
    expect(http({ auth: "header" }).oauth).toBeUndefined();
    expect(http({}).oauth).toBeUndefined();
  });

  it("names the key and the bad value", () => {
    expect(() => http({ auth: "kerberos" })).toThrow(
      /mcp_servers\.api\.auth: expected "oauth" or "header", got "kerberos"/,
    );
    expect(() => http({ auth: "oauth", oauth: { redirect_port: 70000 } })).toThrow(
      /mcp_servers\.api\.oauth\.redirect_port: expected a port number/,
    );
    expect(() => http({ auth: "oauth", oauth: "yes" })).toThrow(
      /mcp_servers\.api\.oauth: expected a mapping/,
    );
  });

  it("warns, without failing, about oauth on a stdio server", () => {
    const parsed = parseMcpServers({ fs: { command: "x", auth: "oauth" } });
    expect(parsed.servers).toHaveLength(1);
    expect(parsed.warnings[0]).toMatch(/auth: oauth applies to url servers only/);
  });
});

describe("mcp_servers TLS keys", () => {
  it("reads a combined PEM, a pair and a triple with a passphrase; ~ is the home", () => {
    expect(http({ client_cert: "~/c.pem" }).tls).toEqual({ verify: true, certFile: "/home/ada/c.pem" });
    expect(http({ client_cert: ["/c.crt", "/c.key"] }).tls).toEqual({
      verify: true,
      certFile: "/c.crt",
      keyFile: "/c.key",
    });
    expect(http({ client_cert: ["/c.crt", "/c.key", "${KEY_PASS}"] }).tls?.passphrase).toBe("s3cret");
    expect(http({ client_cert: "/c.crt", client_key: "~/k.pem" }).tls?.keyFile).toBe("/home/ada/k.pem");
  });

  it("reads ssl_verify as a flag or a CA bundle path", () => {
    expect(http({ ssl_verify: false }).tls).toEqual({ verify: false });
    expect(http({ ssl_verify: "~/ca.pem" }).tls).toEqual({ verify: true, caFile: "/home/ada/ca.pem" });
    expect(http({}).tls).toBeUndefined();
  });

  it("refuses shapes that cannot be meant", () => {
    expect(() => http({ client_cert: 42 })).toThrow(/client_cert: expected a PEM path/);
    expect(() => http({ client_cert: ["/a", "/b", "p", "extra"] })).toThrow(/client_cert/);
    expect(() => http({ client_key: "/k.pem" })).toThrow(/client_key: needs client_cert/);
    expect(() => http({ client_cert: ["/c", "/k"], client_key: "/k2" })).toThrow(
      /client_key: the key is already/,
    );
    expect(() => http({ ssl_verify: 3 })).toThrow(/ssl_verify: expected true, false or the path/);
  });

  it("warns when TLS keys are set on a plain-http url", () => {
    const parsed = parseMcpServers({ a: { url: "http://127.0.0.1/mcp", client_cert: "/c.pem" } }, env);
    expect(parsed.warnings[0]).toMatch(/apply to https:\/\/ urls/);
  });
});

describe("mcp_servers sampling keys", () => {
  it("allows sampling by default with upstream's limits", () => {
    const server = parseMcpServer("s", { command: "x" });
    expect(server.sampling).toEqual({
      enabled: true,
      maxTokensCap: 4096,
      timeoutMs: 30_000,
      maxRpm: 10,
      allowedModels: [],
    });
  });

  it("reads every key, and false alone turns it off", () => {
    const server = parseMcpServer("s", {
      command: "x",
      sampling: {
        enabled: "no",
        model: "gpt-x",
        max_tokens_cap: 100,
        timeout: 5,
        max_rpm: 2,
        allowed_models: ["a", "b"],
      },
    });
    expect(server.sampling).toEqual({
      enabled: false,
      model: "gpt-x",
      maxTokensCap: 100,
      timeoutMs: 5000,
      maxRpm: 2,
      allowedModels: ["a", "b"],
    });
    expect(parseMcpServer("s", { command: "x", sampling: false }).sampling.enabled).toBe(false);
  });

  it("names a bad sampling value", () => {
    expect(() => parseMcpServer("s", { command: "x", sampling: { max_rpm: 0 } })).toThrow(
      /mcp_servers\.s\.sampling\.max_rpm: expected a positive number/,
    );
    expect(() => parseMcpServer("s", { command: "x", sampling: { enabled: "maybe" } })).toThrow(
      /sampling\.enabled: expected true or false/,
    );
    expect(() => parseMcpServer("s", { command: "x", sampling: "on" })).toThrow(
      /sampling: expected a mapping/,
    );
  });
});
