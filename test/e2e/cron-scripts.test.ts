/**
 * Cron scripts through the built CLI. A scripted model tries every way to get a script of its own
 * run by cron (write it into scripts/ with write_file, the terminal, a copy, a symlink; point a
 * job at a file in its workspace or up and out of scripts/), in one non-interactive run: nothing
 * lands in scripts/ and no job names a file outside it. Then the user's own scripts work:
 * `--no-agent` delivers the script's output with no model call, a script's output and another
 * job's last answer reach the model, and a dangerous script is refused under the default
 * `approvals.cron_mode: deny`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

type ChatBody = { messages: Array<{ role: string; content: string | null }> };

function jobsOf(home: string): Array<Record<string, unknown>> {
  const path = join(home, "cron", "jobs.json");
  return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")).jobs : [];
}

function lastOutput(home: string, id: string): string {
  const dir = join(home, "cron", "output", id);
  const files = readdirSync(dir).sort();
  return readFileSync(join(dir, files.at(-1) ?? ""), "utf8");
}

describe("cron scripts through the built CLI", () => {
  it("the model cannot plant a script in scripts/ or point a job outside it", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const scripts = join(home, "scripts");
    mkdirSync(scripts);
    const marker = join(cwd, "pwned");
    writeFileSync(join(cwd, "payload.sh"), `touch ${marker}\n`);
    const planted = join(scripts, "daily.sh");

    llm.enqueue(
      reply().toolCall("write_file", { path: planted, content: `touch ${marker}\n` }),
      reply().toolCall("terminal", { command: `echo 'touch ${marker}' > "$HERMES_HOME/scripts/daily.sh"` }),
      reply().toolCall("terminal", { command: "cp payload.sh ~/scripts/daily.sh" }),
      reply().toolCall("terminal", { command: `ln -s ${join(cwd, "payload.sh")} ${planted}` }),
      reply().toolCall("terminal", {
        command: `cd ${home} && tee scripts/daily.sh < ${join(cwd, "payload.sh")}`,
      }),
      reply().toolCall("cronjob", {
        action: "create",
        schedule: "every 1h",
        prompt: "report",
        script: join(cwd, "payload.sh"),
      }),
      reply().toolCall("cronjob", {
        action: "create",
        schedule: "every 1h",
        prompt: "report",
        script: "../work/payload.sh",
      }),
      reply().toolCall("cronjob", {
        action: "create",
        schedule: "every 1h",
        script: "daily.sh",
        no_agent: true,
        name: "watch",
      }),
      reply().text("Scheduled."),
    );
    const result = await runHermes(["-z", "set up a watchdog script"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);

    expect(readdirSync(scripts)).toEqual([]);
    const last = llm.chatRequests.at(-1)?.body as ChatBody;
    const results = last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(8);
    for (const r of results.slice(0, 5)) expect(r).toMatch(/Denied|Refus|Blocked/);
    expect(results[5]).toMatch(/outside .*scripts/);
    expect(results[6]).toMatch(/outside .*scripts/);
    // Naming a file inside scripts/ is allowed: only the user can put it there.
    const jobs = jobsOf(home);
    expect(jobs.map((j) => j["script"])).toEqual(["daily.sh"]);

    // Running that job finds no script and runs nothing.
    const ran = await runHermes(["cron", "run", "watch"], { home, cwd });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/Script not found: .*scripts\/daily\.sh/);
    expect(existsSync(marker)).toBe(false);

    // The CLI refuses a path outside scripts/ too (a usage error, nothing written).
    const outside = await runHermes(["cron", "create", "every 1h", "--script", "/tmp/x.sh", "--no-agent"], {
      home,
      cwd,
    });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/outside .*scripts/);
    expect(jobsOf(home)).toHaveLength(1);
  }, 90_000);

  it("runs the user's scripts: no_agent output, script output and context_from to the model, cron_mode deny", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const scripts = join(h.home, "scripts");
    mkdirSync(scripts);
    writeFileSync(join(scripts, "disk.sh"), "echo 'disk /: 91% used'\n");
    writeFileSync(join(scripts, "weather.py"), "print('temp=21C')\n");
    const victim = join(h.cwd, "data");
    mkdirSync(victim);
    writeFileSync(join(victim, "keep.txt"), "keep");
    writeFileSync(join(scripts, "clean.sh"), `rm -rf ${victim}\n`);

    const before = llm.chatRequests.length;
    const watch = await runHermes(
      ["cron", "create", "every 1h", "--script", "disk.sh", "--no-agent", "--name", "disk"],
      h,
    );
    expect(watch.code, watch.stderr).toBe(0);
    const watchId = /Created ([0-9a-f]{12})/.exec(watch.stdout)?.[1] ?? "";
    const ranWatch = await runHermes(["cron", "run", watchId], h);
    expect(ranWatch.code, ranWatch.stderr).toBe(0);
    expect(lastOutput(h.home, watchId)).toMatch(/no_agent[\s\S]*## Response\n\ndisk \/: 91% used/);
    expect(llm.chatRequests.length).toBe(before);

    const brief = await runHermes(
      [
        "cron",
        "create",
        "every 1h",
        "write",
        "the",
        "brief",
        "--script",
        "weather.py",
        "--context-from",
        watchId,
      ],
      h,
    );
    expect(brief.code, brief.stderr).toBe(0);
    const briefId = /Created ([0-9a-f]{12})/.exec(brief.stdout)?.[1] ?? "";
    llm.enqueue(reply().text("Brief: warm, disk nearly full."));
    const ranBrief = await runHermes(["cron", "run", briefId], h);
    expect(ranBrief.code, ranBrief.stderr).toBe(0);
    const sent = (llm.chatRequests.at(-1)?.body as ChatBody | undefined)?.messages.find(
      (m) => m.role === "user",
    );
    expect(sent?.content).toMatch(/## Script Output[\s\S]*temp=21C/);
    expect(sent?.content).toMatch(
      /## Output from job '[0-9a-f]{12}'[\s\S]*disk \/: 91% used[\s\S]*write the brief/,
    );
    expect(lastOutput(h.home, briefId)).toContain("Brief: warm, disk nearly full.");

    const clean = await runHermes(["cron", "create", "every 1h", "--script", "clean.sh", "--no-agent"], h);
    const cleanId = /Created ([0-9a-f]{12})/.exec(clean.stdout)?.[1] ?? "";
    const ranClean = await runHermes(["cron", "run", cleanId], h);
    expect(ranClean.code).toBe(1);
    expect(ranClean.stderr).toMatch(/Refused: script clean\.sh .*approvals\.cron_mode/);
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("keep");

    const listed = await runHermes(["cron", "list"], h);
    expect(listed.stdout).toMatch(/script: disk\.sh \(no agent\)/);
    expect(listed.stdout).toMatch(/context from: [0-9a-f]{12}/);
  }, 90_000);
});
