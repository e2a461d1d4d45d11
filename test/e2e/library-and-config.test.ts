import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

describe("the built library entry", () => {
  it("runs a conversation with AIAgent and exports the pure helpers", async () => {
    const entry = pathToFileURL(join(import.meta.dirname, "../../dist/lib/index.js")).href;
    const lib = (await import(entry)) as typeof import("../../src/lib/index.js");
    expect(lib.repairToolArguments('{"a": 1,}').value).toEqual({ a: 1 });
    expect(lib.detectDangerousCommand("rm -rf /").hardline).toBe(true);
    expect(lib.resolveToolsets(["file"]).tools).toContain("patch");

    const { cwd } = tempHome();
    llm.enqueue(
      reply().toolCall("write_file", { path: "lib.txt", content: "from the library" }),
      reply().text("saved"),
    );
    const agent = new lib.AIAgent({
      provider: "custom",
      baseUrl: llm.url,
      model: "fake-model",
      cwd,
      toolsets: ["file"],
      env: {},
    });
    expect(await agent.chat("save a note")).toBe("saved");
    expect(readFileSync(join(cwd, "lib.txt"), "utf8")).toBe("from the library");
    await agent.close();
  });
});

describe("hermes config through the CLI", () => {
  it("sets values that the next run uses, keeps comments, and routes secrets to .env", async () => {
    const { home, cwd } = tempHome(`# my settings\n${fakeProviderConfig(llm.url)}`);
    const set = await runHermes(["config", "set", "agent.max_turns", "7"], { home, cwd });
    expect(set.code).toBe(0);
    const text = readFileSync(join(home, "config.yaml"), "utf8");
    expect(text).toContain("# my settings");
    expect(text).toMatch(/max_turns: 7/);
    const get = await runHermes(["config", "get", "agent.max_turns"], { home, cwd });
    expect(get.stdout.trim()).toBe("7");

    const secret = await runHermes(["config", "set", "OPENROUTER_API_KEY", "sk-or-test-123456"], {
      home,
      cwd,
    });
    expect(secret.code).toBe(0);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain("OPENROUTER_API_KEY=");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    const shown = await runHermes(["config", "show"], { home, cwd });
    expect(shown.stdout).not.toContain("sk-or-test-123456");

    const bad = await runHermes(["config", "set", "agent.max_turns", "ninety"], { home, cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("agent.max_turns");
    expect(await runHermes(["config", "path"], { home, cwd })).toMatchObject({
      stdout: `${join(home, "config.yaml")}\n`,
    });
  });

  it("uses a profile's home with -p and rejects unsafe profile names", async () => {
    const { home, cwd } = tempHome();
    const profileHome = join(home, ".hermes", "profiles", "work");
    const made = await runHermes(["config", "set", "model.default", "work-model", "-p", "work"], {
      home,
      cwd,
      env: { HERMES_HOME: "" },
    });
    expect(made.code).toBe(0);
    expect(existsSync(join(profileHome, "config.yaml"))).toBe(true);
    const traversal = await runHermes(["-p", "../etc", "-z", "hi"], { home, cwd });
    expect(traversal.code).toBe(2);
    expect(traversal.stderr).toMatch(/profile/i);
  });

  it("reads provider keys from the home's .env, through a variable reference in config.yaml", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\n  api_key: \${LOCAL_LLM_KEY}\n`,
    );
    writeFileSync(join(home, ".env"), "LOCAL_LLM_KEY=sk-from-dotenv\n");
    llm.enqueue(reply().text("keyed"));
    const before = llm.chatRequests.length;
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.stdout).toBe("keyed\n");
    expect(llm.chatRequests[before]?.headers.authorization).toBe("Bearer sk-from-dotenv");
  });
});
