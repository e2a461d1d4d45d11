/**
 * First run, `hermes setup --non-interactive`, `hermes model` and a local server with no model
 * configured, through the built CLI against loopback fakes: one server that lists a single model,
 * one that lists several.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { hasTmux, Terminal } from "../support/terminal.js";

let single: FakeLlm;
let several: FakeLlm;
beforeAll(async () => {
  single = await startFakeLlm({ models: ["solo-7b"], modelInfo: { "solo-7b": { context_length: 32768 } } });
  several = await startFakeLlm({ models: ["alpha-7b", "beta-13b", "claude-sonnet-4-5"] });
});
afterAll(async () => {
  await single.close();
  await several.close();
});
beforeEach(() => {
  for (const llm of [single, several]) {
    llm.requests.length = 0;
    llm.chatRequests.length = 0;
  }
});

type Config = { model: Record<string, unknown> };
const config = (home: string): Config => parse(readFileSync(join(home, "config.yaml"), "utf8")) as Config;
type ChatBody = { model: string; max_tokens?: number; max_completion_tokens?: number };

describe("first run", () => {
  it("with nothing configured, says to run hermes setup and sends nothing", async () => {
    const { home, cwd } = tempHome();
    const result = await runHermes(["-q", "hello there"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("No model provider is configured");
    expect(result.stderr).toContain("hermes setup");
  });

  it("with a local server and no model, uses the one model the server lists", async () => {
    const { home, cwd } = tempHome();
    single.enqueue(reply().text("hello from solo"));
    const result = await runHermes(["-z", "hello there"], {
      home,
      cwd,
      env: { OPENAI_BASE_URL: single.url },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("hello from solo");
    expect((single.chatRequests[0]?.body as ChatBody | undefined)?.model).toBe("solo-7b");
  });

  it("with a local server listing several models and no terminal, names them and sends nothing", async () => {
    const { home, cwd } = tempHome();
    const result = await runHermes(["-q", "hello there"], {
      home,
      cwd,
      env: { OPENAI_BASE_URL: several.url },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("serves 3 models");
    expect(result.stderr).toContain("alpha-7b, beta-13b, claude-sonnet-4-5");
    expect(result.stderr).toContain("hermes model custom:alpha-7b");
    expect(several.chatRequests).toHaveLength(0);
  });
});

describe("hermes setup --non-interactive", () => {
  it("sets up a local server from OPENAI_BASE_URL: its model, one tiny test request, config written", async () => {
    const { home, cwd } = tempHome();
    single.enqueue(reply().text("ok"));
    const result = await runHermes(["setup", "--non-interactive"], {
      home,
      cwd,
      env: { OPENAI_BASE_URL: single.url },
    });
    expect(result.stderr).toContain("✓ solo-7b answered");
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("custom:solo-7b");
    expect(config(home).model).toMatchObject({
      provider: "custom",
      base_url: single.url,
      default: "solo-7b",
    });
    expect(single.chatRequests).toHaveLength(1);
    const body = single.chatRequests[0]?.body as ChatBody;
    expect(body.max_tokens ?? body.max_completion_tokens).toBeLessThanOrEqual(16);

    // Re-runnable, and then the chat needs no environment at all.
    single.enqueue(reply().text("configured answer"));
    const chat = await runHermes(["-z", "hi again"], { home, cwd });
    expect(chat.stdout.trim()).toBe("configured answer");
  });

  it("stores a key found only in the environment in .env with mode 0600", async () => {
    const { home, cwd } = tempHome("model:\n  provider: openai-api\n  default: beta-13b\n");
    several.enqueue(reply().text("ok"));
    const result = await runHermes(["setup", "--non-interactive"], {
      home,
      cwd,
      env: { OPENAI_API_KEY: "sk-test-setup-key-123456", OPENAI_BASE_URL: several.url },
    });
    expect(result.code).toBe(0);
    const envFile = join(home, ".env");
    expect(readFileSync(envFile, "utf8")).toContain("OPENAI_API_KEY=sk-test-setup-key-123456");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(several.chatRequests[0]?.headers.authorization).toBe("Bearer sk-test-setup-key-123456");
    expect(result.stderr).not.toContain("sk-test-setup-key-123456");
  });

  it("saves nothing when the test request fails", async () => {
    const { home, cwd } = tempHome();
    const result = await runHermes(["setup", "--non-interactive"], {
      home,
      cwd,
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", HERMES_INFERENCE_MODEL: "some-model" },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("✗");
    expect(result.stderr).toContain("Nothing saved");
    expect(() => readFileSync(join(home, "config.yaml"))).toThrow();
  });

  it("refuses an unknown section and a pipe without --non-interactive", async () => {
    const { home, cwd } = tempHome();
    const bad = await runHermes(["setup", "models"], { home, cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown section "models"');
    const piped = await runHermes(["setup"], { home, cwd, input: "1\n" });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("--non-interactive");
  });
});

describe("hermes model", () => {
  it("sets provider:model, switching away from the old provider's key, and lists models with windows and prices", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: openrouter\n  default: anthropic/claude-sonnet-4\n  api_key: sk-or-old\n`,
    );
    const set = await runHermes(["model", `custom:beta-13b`], {
      home,
      cwd,
      env: { OPENAI_BASE_URL: several.url },
    });
    expect(set.stderr).not.toContain("warning");
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toBe("custom:beta-13b");
    expect(config(home).model).toMatchObject({
      provider: "custom",
      default: "beta-13b",
      base_url: several.url,
      api_key: "",
    });

    const list = await runHermes(["model", "--list"], { home, cwd });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`custom at ${several.url}: 3 models`);
    expect(list.stdout).toMatch(/beta-13b.*\(current\)/);
    expect(list.stdout).toMatch(/claude-sonnet-4-5\s+200k ctx\s+\$3\/\$15 per Mtok/);
    // The list came from the cache written by the first command: the server was asked once.
    const cache = JSON.parse(readFileSync(join(home, "provider_models_cache.json"), "utf8"));
    expect(Object.keys(cache.entries)).toEqual([`custom|${several.url}`]);
    expect(several.requests.filter((r) => r.path === "/v1/models")).toHaveLength(1);
  });

  it("warns about a model the provider does not list (with the nearest) and follows model_aliases", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: custom\n  base_url: ${several.url}\n  default: alpha-7b\n`,
    );
    const typo = await runHermes(["model", "beta-13"], { home, cwd });
    expect(typo.code).toBe(0);
    expect(typo.stderr).toContain("beta-13 is not in custom's list of 3 models; did you mean beta-13b?");

    writeFileSync(
      join(home, "config.yaml"),
      `${readFileSync(join(home, "config.yaml"), "utf8")}model_aliases:\n  fast: alpha-7b\n`,
    );
    const alias = await runHermes(["model", "fast"], { home, cwd });
    expect(alias.code).toBe(0);
    expect(config(home).model.default).toBe("alpha-7b");
  });

  it("prints the current choice when not on a terminal", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: custom\n  base_url: ${several.url}\n  default: alpha-7b\n`,
    );
    const result = await runHermes(["model"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("custom:alpha-7b");
  });

  it("switches to opencode-go (upstream's id) and chats with its key as a bearer", async () => {
    const { home, cwd } = tempHome("");
    const env = { OPENCODE_GO_API_KEY: "sk-go-e2e-123456789", OPENCODE_GO_BASE_URL: single.url };
    const set = await runHermes(["model", "opencode-go:solo-7b"], { home, cwd, env });
    expect(set.code, set.stderr).toBe(0);
    expect(config(home).model).toMatchObject({ provider: "opencode-go", default: "solo-7b" });
    single.enqueue(reply().text("go answered"));
    const run = await runHermes(["-z", "hello"], { home, cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("go answered\n");
    expect(single.chatRequests.at(-1)?.headers.authorization).toBe("Bearer sk-go-e2e-123456789");
  });
});

describe.skipIf(!hasTmux)("hermes setup on a terminal", () => {
  it("walks through the model section: a local server, its model list, the test request, saved", async () => {
    const { home, cwd } = tempHome();
    several.enqueue(reply().text("ok"));
    const term = Terminal.start({ home, cwd, args: ["setup", "model"] });
    try {
      await term.waitFor("Provider (number or name)");
      term.type("custom");
      term.keys("Enter");
      await term.waitFor("Server address");
      term.type(several.url);
      term.keys("Enter");
      await term.waitFor(/claude-sonnet-4-5\s+200k ctx/);
      term.type("2");
      term.keys("Enter");
      await term.waitFor("✓ beta-13b answered");
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(config(home).model).toMatchObject({
      provider: "custom",
      base_url: several.url,
      default: "beta-13b",
    });
  });
});
