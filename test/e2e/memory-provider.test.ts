/**
 * The external memory provider through the built CLI: `hermes memory setup|status|off|reset`, and
 * a one-shot turn with Honcho configured against a loopback fake of the routes the real
 * `@honcho-ai/sdk` calls: the recall reaches the model inside the user message, the turn reaches
 * Honcho, and a failing Honcho costs a warning, never the answer.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeHoncho, startFakeHoncho } from "../support/fake-honcho.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
let honcho: FakeHoncho;
beforeAll(async () => {
  honcho = await startFakeHoncho();
});
afterAll(async () => {
  await honcho.close();
});
beforeEach(() => {
  honcho.reset();
});

const KEY = "hk-e2e-secret-key-0123456789";
type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const lastUser = (i: number) => {
  const body = llm.chatRequests[i]?.body as ChatBody | undefined;
  return body?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
};

function home() {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url));
  return h;
}

function logs(homeDir: string): string {
  const dir = join(homeDir, "logs");
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

describe("hermes memory with Honcho", () => {
  it("setup, status, a one-shot turn that recalls and syncs, off and reset", async () => {
    const h = home();
    const fresh = await runHermes(["memory", "status"], h);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain(
      "Provider: none (built-in only). Add one with: hermes memory setup honcho",
    );

    const setup = await runHermes(
      [
        "memory",
        "setup",
        "honcho",
        "--non-interactive",
        "--api-key",
        KEY,
        "--base-url",
        honcho.url,
        "--peer-name",
        "ada",
      ],
      h,
    );
    expect(setup.code).toBe(0);
    expect(setup.stdout).toContain(`Memory provider: honcho: on: workspace hermes at ${honcho.url}`);
    expect(setup.stdout + setup.stderr).not.toContain(KEY);
    expect(readFileSync(join(h.home, ".env"), "utf8")).toContain(`HONCHO_API_KEY=${KEY}`);
    expect(JSON.parse(readFileSync(join(h.home, "honcho.json"), "utf8"))).toEqual({
      hosts: { hermes: { baseUrl: honcho.url, peerName: "ada", enabled: true } },
    });
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toMatch(/memory:\n\s+provider: honcho/);

    const status = await runHermes(["memory", "status"], h);
    expect(status.stdout).toContain(`Provider: honcho: on: workspace hermes at ${honcho.url}`);
    expect(status.stdout).toMatch(/api key\s+hk-e\*\*\*\* \(HONCHO_API_KEY\)/);
    expect(status.stdout).not.toContain(KEY);

    honcho.context = { representation: "Ada edits with Helix." };
    llm.enqueue(reply().text("Use Helix."));
    const turn = await runHermes(["-z", "which editor should I configure?"], h);
    expect(turn.code).toBe(0);
    expect(turn.stdout).toBe("Use Helix.\n");
    // The model saw the recall inside the user's message, fenced.
    expect(lastUser(0)).toMatch(
      /^which editor should I configure\?\n\n<memory-context>\n\[System note: [^\]]+\]\n\n## User Representation\nAda edits with Helix\.\n<\/memory-context>$/,
    );
    // Honcho got the turn: the user's own words and the answer, under their peers.
    const stored = [...honcho.messages.values()].flat().map((m) => [m.peer_id, m.content]);
    expect(stored).toEqual([
      ["ada", "which editor should I configure?"],
      ["hermes", "Use Helix."],
    ]);
    expect(honcho.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(logs(h.home)).not.toContain(KEY);

    // A failing Honcho: the answer still comes, with one warning on stderr.
    honcho.failNext(/\/context$/, 10);
    llm.enqueue(reply().text("Still fine."));
    const failing = await runHermes(["-q", "and which theme goes with it?"], h);
    expect(failing.code).toBe(0);
    expect(failing.stdout).toContain("Still fine.");
    expect(failing.stderr).toMatch(
      /Memory provider honcho: recall failed \(.+\); this turn goes on without it\./,
    );
    expect(lastUser(1)).toBe("and which theme goes with it?");

    const off = await runHermes(["memory", "off"], h);
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("Memory provider honcho is off: built-in memory only");
    expect((await runHermes(["memory", "status"], h)).stdout).toContain("Provider: none (built-in only)");
    honcho.reset();
    llm.enqueue(reply().text("No recall."));
    expect((await runHermes(["-z", "which editor again?"], h)).stdout).toBe("No recall.\n");
    expect(honcho.requests).toHaveLength(0);
    expect(lastUser(2)).toBe("which editor again?");

    mkdirSync(join(h.home, "memories"), { recursive: true });
    writeFileSync(join(h.home, "memories", "MEMORY.md"), "Project uses pnpm\n§\nCI is on GitHub");
    const refused = await runHermes(["memory", "reset"], h);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("pass -y to confirm");
    expect(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8")).toContain("pnpm");
    const reset = await runHermes(["memory", "reset", "--target", "memory", "-y"], h);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain("Erased MEMORY.md (2 entries).");
    expect(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8")).toBe("");
  });

  it("with memory.provider honcho and no key: off with a clear status line, and turns run as before", async () => {
    const h = tempHome();
    writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url, "memory:\n  provider: honcho\n"));
    const status = await runHermes(["memory", "status"], h);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      "Provider: honcho: off: no API key. Set HONCHO_API_KEY in .env or run `hermes memory setup honcho`",
    );
    llm.enqueue(reply().text("hello"));
    const turn = await runHermes(["-q", "a question worth recalling for"], h);
    expect(turn.code).toBe(0);
    expect(turn.stderr).not.toMatch(/honcho|memory provider/i);
    expect(honcho.requests).toHaveLength(0);
    const bad = await runHermes(["memory", "setup", "mem0", "--non-interactive"], h);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown memory provider "mem0"; known: honcho');
  });
});
