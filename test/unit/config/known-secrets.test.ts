import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  collectKnownSecrets,
  isSecretEnvName,
  redactionEnabled,
  registerKnownSecrets,
} from "../../../src/config/known-secrets.js";
import { terminalEnv } from "../../../src/util/env-scrub.js";
import { Redactor } from "../../../src/util/redact.js";

describe("isSecretEnvName", () => {
  it.each([
    "GITHUB_TOKEN",
    "OPENROUTER_API_KEY",
    "MY_SERVICE_PASSWORD",
    "DB_PASSWD",
    "DB_PASS",
    "AWS_SECRET_ACCESS_KEY",
    "GOOGLE_CREDENTIALS",
    "NODE_AUTH_TOKEN",
    "BASIC_AUTH",
    "APIKEY",
    "SLACK_SIGNING_SECRET",
    "hf_token",
  ])("%s is secret", (name) => expect(isSecretEnvName(name)).toBe(true));
  it.each([
    "GIT_AUTHOR_NAME",
    "KEYBOARD_LAYOUT",
    "MAX_TOKENS",
    "PATH",
    "PORT",
    "SSH_AUTH_SOCK",
    "PWD",
    "GOOGLE_APPLICATION_CREDENTIALS_FILE",
    "TOKENIZERS_PARALLELISM",
    "MONKEY",
  ])("%s is not", (name) => expect(isSecretEnvName(name)).toBe(false));
});

describe("collectKnownSecrets", () => {
  it("takes secret-named env values of 8+ characters, config secrets and auth.json tokens", () => {
    const found = collectKnownSecrets({
      env: { GITHUB_TOKEN: "ghp_value_123456", SMTP_PASSWORD: "short", PORT: "587", HOME: "/home/user" },
      config: {
        model: { api_key: "cfg-key-0123456789", max_tokens: 4096 },
        mcp_servers: {
          gh: {
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: "mcp-token-abcdefgh" },
            headers: { Authorization: "Bearer hdr-token-123456" },
          },
        },
        auxiliary: { vision: { api_key: "aux-key-abcdefgh" } },
        credential_pool_strategies: { openrouter: "round_robin" },
        platforms: { telegram: { token: "123456:tg-token-abcdef" } },
      },
      auth: {
        credential_pool: { openrouter: [{ id: "a1", label: "work", access_token: "sk-or-pool-0123456789" }] },
      },
    });
    const values = found.map((s) => s.value);
    expect(values).toEqual(
      expect.arrayContaining([
        "ghp_value_123456",
        "cfg-key-0123456789",
        "mcp-token-abcdefgh",
        "Bearer hdr-token-123456",
        "hdr-token-123456",
        "aux-key-abcdefgh",
        "123456:tg-token-abcdef",
        "sk-or-pool-0123456789",
      ]),
    );
    expect(values).not.toContain("short");
    expect(values).not.toContain("587");
    expect(values).not.toContain("/home/user");
    expect(values).not.toContain("round_robin");
    expect(values).not.toContain("work");
  });
});

describe("redactionEnabled", () => {
  it("defaults on; config and HERMES_REDACT_SECRETS turn it off", () => {
    expect(redactionEnabled({}, {})).toBe(true);
    expect(redactionEnabled({ security: { redact_secrets: false } }, {})).toBe(false);
    expect(redactionEnabled({}, { HERMES_REDACT_SECRETS: "0" })).toBe(false);
    expect(redactionEnabled({}, { HERMES_REDACT_SECRETS: "false" })).toBe(false);
    expect(redactionEnabled({ security: { redact_secrets: false } }, { HERMES_REDACT_SECRETS: "1" })).toBe(
      true,
    );
  });

  it("registerKnownSecrets reads auth.json and applies the switch", () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-known-"));
    writeFileSync(
      join(home, "auth.json"),
      JSON.stringify({ providers: { nous: { access_token: "oauth-access-123456" } } }),
    );
    const r = new Redactor();
    registerKnownSecrets({ home, env: { X_API_KEY: "env-key-abcdefgh" }, config: {}, redactor: r });
    expect(r.redact("oauth-access-123456 env-key-abcdefgh")).toBe(
      "[REDACTED:auth.providers.nous.access_token] [REDACTED:X_API_KEY]",
    );
    registerKnownSecrets({ home, env: { HERMES_REDACT_SECRETS: "off" }, config: {}, redactor: r });
    expect(r.enabled).toBe(false);
  });

  it("registerKnownSecrets reads every honcho.json Honcho may use: the key and OAuth tokens, not the rest", () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-known-honcho-"));
    const home = join(root, "home");
    mkdirSync(join(root, ".honcho"), { recursive: true });
    mkdirSync(home);
    writeFileSync(
      join(home, "honcho.json"),
      JSON.stringify({ hosts: { hermes: { apiKey: "hch-profile-key-1234", peerName: "alice-long-name" } } }),
    );
    writeFileSync(
      join(root, ".honcho", "config.json"),
      JSON.stringify({ apiKey: "hch-global-key-5678", oauth: { refresh_token: "refresh-token-abcdef" } }),
    );
    const r = new Redactor();
    registerKnownSecrets({ home, env: { HOME: root }, config: {}, redactor: r });
    expect(r.redact("hch-profile-key-1234 hch-global-key-5678 refresh-token-abcdef alice-long-name")).toBe(
      "[REDACTED:honcho.hosts.hermes.apiKey] [REDACTED:honcho.apiKey] [REDACTED:honcho.oauth.refresh_token] alice-long-name",
    );
    // HONCHO_API_KEY in the environment is a secret by its name.
    expect(isSecretEnvName("HONCHO_API_KEY")).toBe(true);
  });
});

describe("terminalEnv", () => {
  it("withholds what Hermes loaded unless passed through; keeps what the shell exported", () => {
    const env = {
      PATH: "/bin",
      GITHUB_TOKEN: "from-dotenv",
      OPENAI_API_KEY: "exported-by-user",
      KEEP_ME_TOKEN: "x",
    };
    const out = terminalEnv(env, {
      withheld: ["GITHUB_TOKEN", "KEEP_ME_TOKEN"],
      passthrough: ["KEEP_ME_TOKEN"],
    });
    expect(out).toEqual({ PATH: "/bin", OPENAI_API_KEY: "exported-by-user", KEEP_ME_TOKEN: "x" });
  });
});
