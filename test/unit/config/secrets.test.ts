import { describe, expect, it } from "vitest";
import { isSecretKey, maskSecret, redactSecrets } from "../../../src/config/secrets.js";

describe("isSecretKey", () => {
  it.each([
    "api_key",
    "OPENROUTER_API_KEY",
    "token",
    "bot_token",
    "hf_token",
    "password",
    "client_secret",
    "secret",
    "Authorization",
    "X-Api-Key",
    "fal_key",
    "key",
  ])("%s is a secret", (name) => expect(isSecretKey(name)).toBe(true));
  it.each([
    "max_tokens",
    "record_key",
    "ssh_key",
    "session_key",
    "secrets",
    "access_token_env",
    "default",
    "keys",
  ])("%s is not a secret", (name) => expect(isSecretKey(name)).toBe(false));
});

describe("maskSecret and redactSecrets", () => {
  it("keeps the first 4 characters of long values only", () => {
    expect(maskSecret("sk-or-v1-abcdef")).toBe("sk-o****");
    expect(maskSecret("short")).toBe("****");
    expect(maskSecret("")).toBe("");
  });

  it("masks nested secret values and leaves everything else", () => {
    const input = {
      model: { api_key: "sk-1234567890", max_tokens: 5 },
      servers: [{ env: { GH_TOKEN: "ghp_123456789" } }],
    };
    expect(redactSecrets(input)).toEqual({
      model: { api_key: "sk-1****", max_tokens: 5 },
      servers: [{ env: { GH_TOKEN: "ghp_****" } }],
    });
    expect(input.model.api_key).toBe("sk-1234567890");
  });
});
