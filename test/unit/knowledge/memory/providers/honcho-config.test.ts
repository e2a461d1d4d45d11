import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  honchoHostKey,
  profileOfHome,
  readHonchoFile,
  resolveHonchoSettings,
  writeHonchoHostSettings,
} from "../../../../../src/knowledge/memory/providers/honcho/config.js";

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "hermes-honcho-config-"));
  const user = join(root, "user");
  const home = join(user, ".hermes", "profiles", "coder");
  mkdirSync(home, { recursive: true });
  return { root, user, home, env: { HOME: user } };
}

describe("honcho.json resolution", () => {
  it("takes each key from the host block, then the root, then the environment, then the default", () => {
    const s = resolveHonchoSettings(
      {
        apiKey: "root-key-123456",
        workspace: "shared",
        recallMode: "tools",
        hosts: { hermes: { recallMode: "context" } },
      },
      "hermes",
      { HONCHO_API_KEY: "env-key-123456", HONCHO_BASE_URL: "http://127.0.0.1:9" },
    );
    expect(s.recallMode).toBe("context");
    expect(s.workspace).toBe("shared");
    expect(s.apiKey).toBe("root-key-123456");
    expect(s.apiKeySource).toBe("honcho.json apiKey");
    expect(s.baseUrl).toBe("http://127.0.0.1:9");
    expect(s.aiPeer).toBe("hermes");
    expect(s.sessionStrategy).toBe("per-directory");
    expect(s.enabled).toBe(true);
    expect(s.timeoutSeconds).toBe(5);
  });

  it("is off without a key or base URL, and `enabled: false` wins over a key", () => {
    expect(resolveHonchoSettings(undefined, "hermes", {}).enabled).toBe(false);
    expect(resolveHonchoSettings({ apiKey: "k-123456789", enabled: false }, "hermes", {}).enabled).toBe(
      false,
    );
    expect(resolveHonchoSettings(undefined, "hermes", { HONCHO_API_KEY: "k-123456789" }).apiKeySource).toBe(
      "HONCHO_API_KEY",
    );
  });

  it("reports values it cannot use and keeps the defaults", () => {
    const s = resolveHonchoSettings(
      { recallMode: "everything", saveMessages: "yes", contextCadence: 0, dialecticReasoningLevel: "huge" },
      "hermes",
      {},
    );
    expect(s.recallMode).toBe("hybrid");
    expect(s.saveMessages).toBe(true);
    expect(s.contextCadence).toBe(1);
    expect(s.dialecticReasoningLevel).toBe("low");
    const problems = s.problems.join("\n");
    for (const word of [
      'recallMode: expected one of hybrid, context, tools, got "everything"',
      "saveMessages",
      "contextCadence",
      "dialecticReasoningLevel",
    ]) {
      expect(problems).toContain(word);
    }
    expect(resolveHonchoSettings({ recallMode: "auto" }, "hermes", {}).recallMode).toBe("hybrid");
  });

  it("derives the host key from the profile, overridable by HERMES_HONCHO_HOST", () => {
    const { home } = dirs();
    expect(profileOfHome(home)).toBe("coder");
    expect(honchoHostKey({}, "coder")).toBe("hermes_coder");
    expect(honchoHostKey({}, undefined)).toBe("hermes");
    expect(honchoHostKey({ HERMES_HONCHO_HOST: "custom" }, "coder")).toBe("custom");
  });

  it("reads the home's file first, then ~/.hermes/honcho.json, then ~/.honcho/config.json", () => {
    const { user, home, env } = dirs();
    mkdirSync(join(user, ".honcho"), { recursive: true });
    writeFileSync(join(user, ".honcho", "config.json"), JSON.stringify({ workspace: "global" }));
    expect(readHonchoFile(home, env)?.data).toEqual({ workspace: "global" });
    writeFileSync(join(user, ".hermes", "honcho.json"), JSON.stringify({ workspace: "default-profile" }));
    expect(readHonchoFile(home, env)?.data).toEqual({ workspace: "default-profile" });
    writeFileSync(join(home, "honcho.json"), JSON.stringify({ workspace: "local" }));
    expect(readHonchoFile(home, env)?.path).toBe(join(home, "honcho.json"));
    writeFileSync(join(home, "honcho.json"), "{ not json");
    expect(() => readHonchoFile(home, env)).toThrow(/honcho\.json is not valid JSON/);
    writeFileSync(join(home, "honcho.json"), "[1]");
    expect(() => readHonchoFile(home, env)).toThrow(/must hold a JSON object/);
  });

  it("writes the host block only, keeps other keys, and creates the file owner-only", () => {
    const { home } = dirs();
    writeFileSync(
      join(home, "honcho.json"),
      JSON.stringify({ apiKey: "keep-me-123", hosts: { other: { aiPeer: "x" } } }),
    );
    const path = writeHonchoHostSettings(home, "hermes_coder", { peerName: "alice", enabled: true });
    const data = JSON.parse(readFileSync(path, "utf8"));
    expect(data).toEqual({
      apiKey: "keep-me-123",
      hosts: { other: { aiPeer: "x" }, hermes_coder: { peerName: "alice", enabled: true } },
    });
    writeHonchoHostSettings(home, "hermes_coder", { enabled: null });
    expect(JSON.parse(readFileSync(path, "utf8")).hosts.hermes_coder).toEqual({ peerName: "alice" });
    const fresh = dirs();
    const created = writeHonchoHostSettings(fresh.home, "hermes", { peerName: "bob" });
    expect(statSync(created).mode & 0o777).toBe(0o600);
  });
});
