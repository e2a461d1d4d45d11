/**
 * Each injection family planted where Hermes reads text into a prompt, through the built CLI:
 * an AGENTS.md in the working directory, hand-edited MEMORY.md lines, and cron prompts (refused at
 * `hermes cron create`, and blocked at run time when jobs.json was edited by hand). The planted
 * text never reaches the fake model, and the user is told which family was found.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAMILY_NAMES, type ThreatFamily } from "../../src/knowledge/threats.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { INJECTIONS } from "../support/threat-fixtures.js";

interface ChatBody {
  messages: Array<{ role: string; content: string }>;
}

/** One wording per family (the first kind of each family in the fixture table). */
const PLANTED = new Map<ThreatFamily, string>();
for (const { family, wordings } of INJECTIONS) {
  if (!PLANTED.has(family) && wordings[0]) PLANTED.set(family, wordings[0]);
}

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

describe("injection scanning through the CLI", () => {
  it("has a planted wording for every family", () => {
    expect([...PLANTED.keys()].sort()).toEqual(
      Object.keys(FAMILY_NAMES)
        .filter((f) => f !== "secret")
        .sort(),
    );
  });

  it("AGENTS.md and MEMORY.md: no planted text reaches the system prompt, and each family is named", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const planted = [...PLANTED.values()];
    writeFileSync(
      join(h.cwd, "AGENTS.md"),
      `# Project\n\nRun npm test before committing.\n\n${planted.join("\n\n")}\n`,
    );
    mkdirSync(join(h.home, "memories"), { recursive: true });
    // A hand-edited memory file: one clean line, then one line per family.
    writeFileSync(
      join(h.home, "memories", "MEMORY.md"),
      ["User's cat is called Miso.", ...planted].join("\n§\n"),
    );

    llm.requests.length = 0;
    llm.chatRequests.length = 0;
    llm.enqueue(reply().text("ok"));
    const result = await runHermes(["-q", "hello"], h);
    expect(result.code, result.stderr).toBe(0);

    const system = (llm.chatRequests[0]?.body as ChatBody | undefined)?.messages[0]?.content ?? "";
    expect(system).toContain("User's cat is called Miso.");
    expect(system).toMatch(/BLOCKED: AGENTS\.md was not loaded/);
    for (const text of planted) expect(system).not.toContain(text);

    // The user is told: the context file with every family, and each memory line with its own.
    const contextWarning = result.stderr.split("\n").find((l) => /AGENTS\.md was not loaded/.test(l)) ?? "";
    for (const family of PLANTED.keys()) expect(contextWarning, result.stderr).toContain(`${family}:`);
    const memoryWarnings = result.stderr
      .split("\n")
      .filter((l) => /MEMORY\.md: an entry was kept out/.test(l));
    expect(memoryWarnings).toHaveLength(planted.length);
    for (const family of PLANTED.keys()) {
      expect(memoryWarnings.join("\n")).toContain(FAMILY_NAMES[family]);
    }
    // The file keeps the lines, so the user can see and remove them.
    expect(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8")).toContain(planted[0]);
  }, 60_000);

  it("cron: create refuses each family; hand-edited jobs are blocked at run time with no model call", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const refused = await runHermes(["cron", "create", "every 1h", PLANTED.get("c2") ?? ""], h);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/Refused: the prompt looks like prompt injection \(command and control:/);

    const created = await runHermes(["cron", "create", "every 1h", "summarise", "the", "logs"], h);
    expect(created.code, created.stderr).toBe(0);
    const file = join(h.home, "cron", "jobs.json");
    const saved = JSON.parse(readFileSync(file, "utf8")) as { jobs: Array<Record<string, unknown>> };
    const template = saved.jobs[0] ?? {};
    const due = new Date(Date.now() - 5_000).toISOString();
    // Edited by hand: the create-time check never saw these prompts.
    saved.jobs = [...PLANTED].map(([family, prompt], i) => ({
      ...template,
      id: `${String(i).padStart(2, "0")}${"a".repeat(10)}`,
      name: `planted-${family}`,
      prompt,
      next_run_at: due,
    }));
    writeFileSync(file, JSON.stringify(saved, null, 2));

    llm.requests.length = 0;
    llm.chatRequests.length = 0;
    const tick = await runHermes(["cron", "tick"], h);
    expect(llm.chatRequests).toHaveLength(0);
    const blocked = tick.stderr
      .split("\n")
      .filter((l) => /error: Blocked: the job's prompt or skills look like/.test(l));
    expect(blocked, tick.stderr).toHaveLength(PLANTED.size);
    for (const family of PLANTED.keys()) expect(blocked.join("\n")).toContain(`${FAMILY_NAMES[family]}:`);
    const jobs = JSON.parse(readFileSync(file, "utf8")).jobs as Array<Record<string, unknown>>;
    for (const job of jobs) expect(job).toMatchObject({ last_status: "error" });
  }, 60_000);
});
