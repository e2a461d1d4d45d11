import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listModels } from "../../../../src/ai/model-listing.js";
import { NoProviderError, resolveRuntime } from "../../../../src/ai/resolve.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { fakeCopilot } from "../../../support/fake-copilot.js";

function config(provider: string, model = "") {
  const base = defaultConfig();
  return { ...base, model: { ...base.model, provider, default: model } };
}

describe("resolving copilot-acp", () => {
  it("needs no key: the runtime names the copilot CLI found on PATH and acp://copilot", () => {
    const fake = fakeCopilot();
    const runtime = resolveRuntime({
      flags: {},
      config: config("copilot-acp"),
      env: { PATH: fake.path },
      home: undefined,
    });
    expect(runtime).toMatchObject({
      provider: "copilot-acp",
      baseUrl: "acp://copilot",
      model: "copilot-acp",
      apiKey: undefined,
      acp: { command: fake.command, args: ["--acp", "--stdio"] },
    });
  });

  it("the copilot-cli alias, COPILOT_CLI_PATH and a configured model all apply", () => {
    const fake = fakeCopilot();
    const runtime = resolveRuntime({
      flags: { provider: "copilot-cli" },
      config: config("", "gpt-5"),
      env: { PATH: "/usr/bin", COPILOT_CLI_PATH: fake.command, HERMES_COPILOT_ACP_ARGS: "--acp" },
      home: undefined,
    });
    expect(runtime.provider).toBe("copilot-acp");
    expect(runtime.acp).toEqual({ command: fake.command, args: ["--acp"] });
  });

  it("without the CLI it is a configuration error that says what to install", () => {
    const attempt = () =>
      resolveRuntime({
        flags: {},
        config: config("copilot-acp"),
        env: { PATH: "/nonexistent" },
        home: undefined,
      });
    expect(attempt).toThrow(NoProviderError);
    expect(attempt).toThrow(/"copilot" is not on PATH\.\nInstall it \(npm install -g @github\/copilot\)/);
  });

  it("a HERMES_COPILOT_ACP_COMMAND that is not an executable file is refused the same way", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-noexec-"));
    const plain = join(dir, "copilot");
    writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
    expect(() =>
      resolveRuntime({
        flags: {},
        config: config("copilot-acp"),
        env: { PATH: "/usr/bin", HERMES_COPILOT_ACP_COMMAND: plain },
        home: undefined,
      }),
    ).toThrow(`"${plain}" is not on PATH`);
    expect(() =>
      resolveRuntime({
        flags: {},
        config: config("copilot-acp"),
        env: { PATH: "/usr/bin", HERMES_COPILOT_ACP_COMMAND: dir },
        home: undefined,
      }),
    ).toThrow(NoProviderError);
  });
});

describe("listing copilot-acp's models", () => {
  it("asks the CLI's ACP session, the CLI's own choice first; without a launch it fetches nothing", async () => {
    const fake = fakeCopilot();
    const listed = await listModels({
      baseUrl: "acp://copilot",
      apiMode: "chat_completions",
      acp: { command: fake.command, args: ["--acp", "--stdio"] },
      env: { PATH: fake.path, FAKE_ACP_MODELS: "gpt-5,claude-sonnet-4.5" },
    });
    expect(listed).toEqual({
      ok: true,
      models: [{ id: "copilot-acp" }, { id: "gpt-5" }, { id: "claude-sonnet-4.5" }],
    });
    let fetched = false;
    const bare = await listModels({
      baseUrl: "acp://copilot",
      apiMode: "chat_completions",
      fetch: (async () => {
        fetched = true;
        throw new Error("no");
      }) as typeof fetch,
    });
    expect(bare).toMatchObject({ ok: false, kind: "unsupported" });
    expect(fetched).toBe(false);
  });
});
