/**
 * `hermes rl serve` through the built CLI: the Atropos fake stands in for the API server (a trainer
 * registered and pulling), the fake LLM for the policy model. A task's rollouts run through the
 * agent in their own directories, are scored by the task's test command and arrive at the server as
 * one ScoredDataGroup that passes the server's validation; the rollouts are recorded as sessions
 * with source `rl`. Adversarial: a rollout's dangerous command is refused without --yolo.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MASKED } from "../../src/rl/tokenize.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeAtropos, startFakeAtropos } from "../support/fake-atropos.js";
import { type RecordedRequest, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
let atropos: FakeAtropos;
beforeAll(async () => {
  atropos = await startFakeAtropos();
});
afterAll(async () => {
  await atropos.close();
});
afterEach(async () => {
  llm.respondWith(undefined);
  await fetch(`${atropos.url}/reset_data`);
});

type Wire = { role: string; content: string | null };
const messagesOf = (r: RecordedRequest) => (r.body as { messages: Wire[]; tools?: unknown[] }).messages;
const hasToolResult = (r: RecordedRequest) => messagesOf(r).some((m) => m.role === "tool");
/** `hermes rl serve terminal-tasks` against the fake Atropos, over `tasks` in groups of two. */
const serveArgs = (tasks: string, ...extra: string[]) => [
  "rl",
  "serve",
  "terminal-tasks",
  "--api-url",
  atropos.url,
  "--tasks",
  tasks,
  "--group-size",
  "2",
  ...extra,
];

describe("hermes rl serve terminal-tasks", () => {
  it("rolls a task out as a group, scores it by its test command and sends the group to Atropos", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const tasks = join(h.cwd, "tasks.jsonl");
    writeFileSync(
      tasks,
      `${JSON.stringify({ id: "answer", prompt: "Write 42 into answer.txt", files: { "README.md": "task" }, test: "grep -qx 42 answer.txt" })}\n`,
    );
    // Two rollouts run at once: the first to ask writes the right answer, the second a wrong one.
    let first = 0;
    llm.respondWith((request) => {
      const body = request.body as { tools?: unknown[] };
      if (!body.tools) return reply().text("title");
      if (hasToolResult(request)) return reply().text("Done.");
      const value = first++ === 0 ? "42" : "41";
      return reply().toolCall("terminal", { command: `test -f README.md && echo ${value} > answer.txt` });
    });
    await atropos.startTrainer({ batch_size: 2, max_token_len: 200_000 });
    const result = await runHermes(serveArgs(tasks, "--include-messages", "--json"), {
      ...h,
      timeoutMs: 60_000,
    });
    expect(result.stderr).toMatch(/Registered terminal-tasks as env 0/);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      envId: 0,
      groupsSent: 1,
      rollouts: 2,
      meanScore: 0.5,
      stoppedBecause: "source_exhausted",
    });

    expect(atropos.envs[0]).toMatchObject({ desired_name: "terminal-tasks", group_size: 2 });
    expect(atropos.scored).toHaveLength(1);
    const group = atropos.scored[0] as {
      tokens: number[][];
      masks: number[][];
      scores: number[];
      env_id: number;
      messages: Wire[][];
    };
    expect(group.env_id).toBe(0);
    expect([...group.scores].sort()).toEqual([0, 1]);
    expect(group.masks.map((m) => m.length)).toEqual(group.tokens.map((t) => t.length));
    for (const masks of group.masks) {
      expect(masks.filter((m) => m !== MASKED).length).toBeGreaterThan(0);
      expect(masks.filter((m) => m === MASKED).length).toBeGreaterThan(0);
    }
    // The rollout that wrote 42 is the one scored 1.
    const winner = group.scores.indexOf(1);
    expect(JSON.stringify(group.messages[winner])).toContain("echo 42 > answer.txt");
    expect(group.messages[winner]?.[0]?.role).toBe("system");
    // The trainer can take the group as a batch.
    const batch = (await (await fetch(`${atropos.url}/batch`)).json()) as { batch: unknown[] | null };
    expect(batch.batch).toHaveLength(1);

    const sessions = await runHermes(["sessions", "list", "--source", "rl", "--json"], h);
    expect(sessions.code).toBe(0);
    const listed = JSON.parse(sessions.stdout) as unknown[];
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).toContain('"rl"');
  });

  it("refuses a rollout's dangerous command (nobody can approve it) unless --yolo was given", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const tasks = join(h.cwd, "tasks.jsonl");
    writeFileSync(
      tasks,
      `${JSON.stringify({ id: "keep", prompt: "Clean up", files: { "data/keep.txt": "precious" }, test: "test -f data/keep.txt" })}\n`,
    );
    llm.respondWith((request) => {
      const body = request.body as { tools?: unknown[] };
      if (!body.tools) return reply().text("title");
      if (hasToolResult(request)) return reply().text("Could not delete.");
      return reply().toolCall("terminal", { command: "rm -rf data" });
    });
    await atropos.startTrainer({ batch_size: 2 });
    const before = atropos.scored.length;
    const result = await runHermes(serveArgs(tasks, "--allow-same-scores", "--include-messages"), {
      ...h,
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(0);
    expect(atropos.scored).toHaveLength(before + 1);
    const group = atropos.scored.at(-1) as { scores: number[]; messages: Wire[][] };
    // The directory survived in both rollouts: both score 1, and the model read why.
    expect(group.scores).toEqual([1, 1]);
    const toolTurn = group.messages[0]?.find((m) => m.role === "tool");
    expect(toolTurn?.content).toMatch(/non-interactive|approv/i);

    // With --yolo the operator approved dangerous commands: the directory is gone in both rollouts.
    const yolo = await runHermes(serveArgs(tasks, "--allow-same-scores", "--yolo"), {
      ...h,
      timeoutMs: 60_000,
    });
    expect(yolo.code).toBe(0);
    expect((atropos.scored.at(-1) as { scores: number[] }).scores).toEqual([0, 0]);
  });
});

describe("hermes rl serve --workers", () => {
  it("rolls three tasks out two groups at a time, each in its own directory, and sends every group", {
    timeout: 90_000,
  }, async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const tasks = join(h.cwd, "tasks.jsonl");
    writeFileSync(
      tasks,
      ["a", "b", "c"]
        .map((id) =>
          JSON.stringify({
            id,
            prompt: `Write ${id} into out.txt`,
            files: { ID: id },
            test: "test -s out.txt",
          }),
        )
        .join("\n"),
    );
    // Of each task's two rollouts, the first to ask writes its task's id (read from its own
    // directory), the other writes nothing: every group scores [0, 1] whatever the interleaving.
    const asked = new Map<string, number>();
    llm.respondWith((request) => {
      const body = request.body as { tools?: unknown[] };
      if (!body.tools) return reply().text("title");
      if (hasToolResult(request)) return reply().text("Done.");
      const task = JSON.stringify(messagesOf(request)).match(/Write (\w) into out\.txt/)?.[1] ?? "?";
      const turn = asked.get(task) ?? 0;
      asked.set(task, turn + 1);
      return turn === 0
        ? reply().toolCall("terminal", { command: "cat ID > out.txt" })
        : reply().toolCall("terminal", { command: "true" });
    });
    await atropos.startTrainer({ batch_size: 64, max_token_len: 200_000 });
    const before = atropos.scored.length;
    const result = await runHermes(serveArgs(tasks, "--workers", "2", "--allow-same-scores", "--json"), {
      ...h,
      timeoutMs: 80_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      groupsSent: 3,
      rollouts: 6,
      stoppedBecause: "source_exhausted",
    });
    expect(atropos.scored.length - before).toBe(3);
    // Every task's group arrived, each scored by what its own rollouts did in their own directory.
    const scores = atropos.scored.slice(before).map((g) => [...(g["scores"] as number[])].sort());
    expect(scores).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
    ]);
    const bad = await runHermes(
      ["rl", "serve", "terminal-tasks", "--api-url", atropos.url, "--workers", "0"],
      h,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--workers");
  });
});
