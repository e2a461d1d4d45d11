/**
 * `hermes batch` through the built CLI against the scripted model: a 50-prompt dataset with 4
 * workers completes into upstream's trajectory format (checked against a JSON Schema), each prompt
 * in its own recorded session and working directory; a run killed with SIGKILL halfway resumes
 * without asking the model again for any finished prompt and without duplicate lines; a dangerous
 * command is refused (nobody can approve it) unless the run says --yolo.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { checkTrajectoryLine } from "../support/trajectory-schema.js";
import { waitFor } from "../unit/tools/terminal/helpers.js";

const llm = useFakeLlm();

type Body = { messages: Array<{ role: string; content: unknown }> };
const messagesOf = (r: RecordedRequest) => (r.body as Body).messages;
/** The dataset prompt a request serves ("task N"). */
const taskOf = (r: RecordedRequest): string => {
  const user = messagesOf(r).find((m) => m.role === "user");
  return typeof user?.content === "string" ? user.content : "";
};

/** Each prompt: one terminal call (echo its number into a file of its cwd), then an answer. */
function scriptedTasks(delayMs = 0) {
  llm.respondWith((request) => {
    const task = taskOf(request);
    const n = /task (\d+)/.exec(task)?.[1];
    if (n === undefined) return undefined;
    const answered = messagesOf(request).some((m) => m.role === "tool");
    const r = answered
      ? reply().reasoning(`task ${n} is done`).text(`done ${n}`).usage({ prompt: 100, completion: 10 })
      : reply()
          .reasoning(`I will echo ${n}`)
          .toolCall("terminal", { command: `echo ${n} > out.txt && cat out.txt` })
          .usage({ prompt: 80, completion: 20 });
    return delayMs > 0 ? r.delay(delayMs) : r;
  });
}

function dataset(dir: string, count: number): string {
  const path = join(dir, "prompts.jsonl");
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ prompt: `task ${i}` }));
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const readLines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe("hermes batch", () => {
  it("runs 50 prompts with 4 workers into upstream's trajectory format", { timeout: 120_000 }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    scriptedTasks();
    const data = dataset(cwd, 50);
    const result = await runHermes(
      ["batch", "run", data, "--run-name", "fifty", "--workers", "4", "--toolsets", "terminal,file"],
      { home, cwd, timeoutMs: 110_000 },
    );
    expect(result.stderr).toContain("50 of 50 prompt(s) to run (0 done) with 4 worker(s)");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "Run fifty: 50/50 done (50 completed, 0 failed, 0 discarded, 0 to retry)",
    );
    const dir = join(home, "data", "fifty");
    const entries = readLines(join(dir, "trajectories.jsonl"));
    expect(entries.map((e) => e["prompt_index"]).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    for (const entry of entries) expect(checkTrajectoryLine(entry)).toEqual([]);
    const e7 = entries.find((e) => e["prompt_index"] === 7)!;
    const turns = e7["conversations"] as { from: string; value: string }[];
    expect(turns.map((t) => t.from)).toEqual(["system", "human", "gpt", "tool", "gpt"]);
    expect(turns[1]!.value).toBe("task 7");
    expect(turns[2]!.value).toBe(
      '<think>\nI will echo 7\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "echo 7 > out.txt && cat out.txt"}}\n</tool_call>',
    );
    expect(turns[3]!.value).toMatch(
      /^<tool_response>\n\{"tool_call_id": "[^"]+", "name": "terminal", "content": /,
    );
    expect(turns[3]!.value).toContain("7");
    expect(turns[4]!.value).toBe("<think>\ntask 7 is done\n</think>\ndone 7");
    expect(e7["completed"]).toBe(true);
    expect(e7["api_calls"]).toBe(2);
    expect(e7["toolsets_used"]).toEqual(["terminal", "file"]);
    expect((e7["tool_stats"] as Record<string, unknown>)["terminal"]).toEqual({
      count: 1,
      success: 1,
      failure: 0,
    });
    // Every line has the same tool columns (zeros for unused tools), as dataset loaders need.
    expect((e7["tool_stats"] as Record<string, unknown>)["web_search"]).toEqual({
      count: 0,
      success: 0,
      failure: 0,
    });
    // Each prompt ran in its own working directory.
    const workspaces = join(dir, "..", "..", "batch-workspaces", basename(dir));
    expect(readFileSync(join(workspaces, "7", "out.txt"), "utf8")).toBe("7\n");
    expect(readFileSync(join(workspaces, "42", "out.txt"), "utf8")).toBe("42\n");
    const stats = JSON.parse(readFileSync(join(dir, "statistics.json"), "utf8"));
    expect(stats.prompts).toMatchObject({ done: 50, completed: 50, failed: 0, pending: 0 });
    expect(stats.success_rate).toBe(1);
    expect(stats.tokens).toEqual({ input: 50 * 180, output: 50 * 30, total: 50 * 210 });
    expect(stats.tool_statistics.terminal).toMatchObject({ count: 50, success: 50, success_rate: 100 });
    expect(llm.chatRequests.length).toBe(100);

    const status = await runHermes(["batch", "status", "fifty", "--json"], { home, cwd });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: "finished", done: 50, total_prompts: 50 });
    // Each prompt is its own session, recorded with source batch.
    const sessions = await runHermes(["sessions", "list", "--source", "batch", "--json", "--limit", "100"], {
      home,
      cwd,
    });
    expect(sessions.code, sessions.stderr).toBe(0);
    expect(JSON.parse(sessions.stdout)).toHaveLength(50);
    // A finished run is not started again by accident.
    const again = await runHermes(["batch", "run", data, "--run-name", "fifty"], { home, cwd });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('run "fifty" already exists');
    llm.respondWith(undefined);
  });

  it("resumes a run killed with SIGKILL halfway without redoing finished prompts", {
    timeout: 180_000,
  }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    scriptedTasks(40);
    const data = dataset(cwd, 40);
    const dir = join(home, "data", "killed");
    const args = ["batch", "run", data, "--run-name", "killed", "--workers", "4", "--toolsets", "terminal"];
    const first = spawnHermes(args, { home, cwd });
    const doneAtKill = await waitFor(
      () => {
        try {
          const cp = JSON.parse(readFileSync(join(dir, "checkpoint.json"), "utf8"));
          return cp.completed_prompts.length >= 15 ? (cp.completed_prompts as number[]) : undefined;
        } catch {
          return undefined; // not written yet
        }
      },
      120_000,
      "15 prompts done",
    );
    first.child.kill("SIGKILL");
    await first.exited;
    // What the checkpoint says after the kill is what counts (more may have finished meanwhile).
    const done = new Set<number>(
      JSON.parse(readFileSync(join(dir, "checkpoint.json"), "utf8")).completed_prompts,
    );
    expect(done.size).toBeGreaterThanOrEqual(doneAtKill.length);
    expect(done.size).toBeLessThan(40);
    const before = llm.chatRequests.length;

    const second = await runHermes([...args, "--resume"], { home, cwd, timeoutMs: 150_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`${40 - done.size} of 40 prompt(s) to run (${done.size} done)`);
    // The model was never asked again about a finished prompt.
    const asked = llm.chatRequests.slice(before).map((r) => Number(/task (\d+)/.exec(taskOf(r))?.[1]));
    expect(asked.filter((n) => done.has(n))).toEqual([]);
    expect(new Set(asked).size).toBe(40 - done.size);
    // Every prompt exactly once in the output.
    const indexes = readLines(join(dir, "trajectories.jsonl")).map((e) => Number(e["prompt_index"]));
    expect(indexes.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const stats = JSON.parse(readFileSync(join(dir, "statistics.json"), "utf8"));
    expect(stats.prompts).toMatchObject({ done: 40, completed: 40 });
    llm.respondWith(undefined);
  });

  it("stops cleanly on Ctrl+C: running prompts are left for --resume, none half-saved", {
    timeout: 120_000,
  }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    scriptedTasks(150);
    const data = dataset(cwd, 12);
    const dir = join(home, "data", "stopped");
    const args = ["batch", "run", data, "--run-name", "stopped", "--workers", "2", "--toolsets", "terminal"];
    const run = spawnHermes(args, { home, cwd });
    await waitFor(
      () => {
        try {
          return JSON.parse(readFileSync(join(dir, "checkpoint.json"), "utf8")).completed_prompts.length >= 2;
        } catch {
          return false;
        }
      },
      60_000,
      "2 prompts done",
    );
    run.child.kill("SIGINT");
    const stopped = await run.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain("--resume");
    const checkpoint = JSON.parse(readFileSync(join(dir, "checkpoint.json"), "utf8"));
    expect(checkpoint.finished).toBe(false);
    expect(checkpoint.completed_prompts.length).toBeLessThan(12);
    // Exactly the prompts marked done have a line: the interrupted ones left nothing behind.
    const lines = readLines(join(dir, "trajectories.jsonl")).map((e) => Number(e["prompt_index"]));
    expect(lines.sort((a, b) => a - b)).toEqual(checkpoint.completed_prompts);
    const resumed = await runHermes([...args, "--resume"], { home, cwd, timeoutMs: 100_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = readLines(join(dir, "trajectories.jsonl")).map((e) => Number(e["prompt_index"]));
    expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    llm.respondWith(undefined);
  });

  it("refuses dangerous commands (nobody can approve them) unless --yolo", { timeout: 60_000 }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const path = join(cwd, "prompts.jsonl");
    writeFileSync(path, `${JSON.stringify({ prompt: "clean up", cwd })}\n`);
    writeFileSync(join(cwd, "keep.txt"), "precious\n");
    const script = () =>
      llm.enqueue(
        reply().reasoning("delete").toolCall("terminal", { command: "rm -rf ./build ./keep.txt" }),
        reply().reasoning("report").text("finished"),
      );
    script();
    const denied = await runHermes(
      ["batch", "run", path, "--run-name", "careful", "--toolsets", "terminal"],
      {
        home,
        cwd,
      },
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect(readFileSync(join(cwd, "keep.txt"), "utf8")).toBe("precious\n");
    const toolResult = messagesOf(llm.chatRequests[1]!).find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/Denied: a dangerous command/);
    script();
    const yolo = await runHermes(
      ["batch", "run", path, "--run-name", "reckless", "--toolsets", "terminal", "--yolo"],
      { home, cwd },
    );
    expect(yolo.code, yolo.stderr).toBe(0);
    expect(existsSync(join(cwd, "keep.txt"))).toBe(false);
  });

  it("says what is wrong with a bad dataset or name (exit 2)", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(join(cwd, "bad.jsonl"), 'not json\n{"no_prompt": 1}\n');
    const bad = await runHermes(["batch", "run", "bad.jsonl", "--run-name", "x"], { home, cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("line 1: not JSON");
    expect(bad.stderr).toContain('line 2: missing "prompt"');
    expect(bad.stderr).toContain("has no usable rows");
    writeFileSync(join(cwd, "ok.jsonl"), '{"prompt": "hi"}\n');
    const name = await runHermes(["batch", "run", "ok.jsonl", "--run-name", "../escape"], { home, cwd });
    expect(name.code).toBe(2);
    expect(name.stderr).toContain("not usable as a folder name");
    const missing = await runHermes(["batch", "status", "nothing"], { home, cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no batch run named "nothing"');
  });
});
