import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  fractionPassed,
  loadTaskFile,
  parseTaskFile,
  safeRelativePath,
  TaskFileError,
  TerminalTasksEnvironment,
} from "../../../src/rl/terminal-tasks.js";
import { listProcesses } from "../../../src/util/process-tree.js";

const dir = () => mkdtempSync(join(tmpdir(), "hermes-rl-test-"));
const never = new AbortController().signal;
const rollout = (workdir: string) => ({ messages: [], sessionId: undefined, reason: "completed", workdir });

describe("task files", () => {
  it("reads JSONL and JSON arrays, with defaults", () => {
    const tasks = parseTaskFile(
      '{"prompt":"a","test":"true"}\n\n{"id":"b","prompt":"b","test":["x","y"],"timeout":5}\n',
      "t.jsonl",
    );
    expect(tasks.map((t) => [t.id, t.tests, t.timeoutS])).toEqual([
      ["task-1", ["true"], 60],
      ["b", ["x", "y"], 5],
    ]);
    expect(parseTaskFile('[{"prompt":"p","test":"true"}]', "t.json")).toHaveLength(1);
  });

  it.each([
    ['{"test":"true"}', /line 1: "prompt"/],
    ['{"prompt":"p"}', /"test" must be/],
    ['{"prompt":"p","test":[]}', /"test" must be/],
    ['{"prompt":"p","test":"true","timeout":-1}', /"timeout"/],
    ['{"prompt":"p","test":"true"}\n{oops', /line 2 is not valid JSON/],
    ["", /holds no tasks/],
  ])("refuses %s with a message naming the problem", (text, message) => {
    expect(() => parseTaskFile(text, "t.jsonl")).toThrow(message);
  });

  it.each(["../escape.txt", "/etc/passwd", "a/../../b", "..", "ok\0.txt"])(
    "refuses a file path that leads outside the task's directory: %s",
    (path) => {
      expect(safeRelativePath(path)).toBeUndefined();
      expect(() =>
        parseTaskFile(JSON.stringify({ prompt: "p", test: "true", files: { [path]: "x" } }), "t"),
      ).toThrow(TaskFileError);
    },
  );

  it("keeps harmless paths that merely look odd", () => {
    expect(safeRelativePath("a/./b/../c.txt")).toBe("a/c.txt");
    expect(safeRelativePath("..hidden")).toBe("..hidden");
  });

  it("names the file it cannot read", () => {
    expect(() => loadTaskFile("/nonexistent/tasks.jsonl")).toThrow(
      /Cannot read the task file \/nonexistent\/tasks.jsonl: ENOENT/,
    );
  });
});

describe("TerminalTasksEnvironment", () => {
  it("hands out each task once per epoch, then nothing", async () => {
    const tasks = parseTaskFile(
      '{"id":"a","prompt":"p","test":"true"}\n{"id":"b","prompt":"p","test":"true"}',
      "t",
    );
    const env = new TerminalTasksEnvironment({ tasks, env: process.env, epochs: 2 });
    const ids: string[] = [];
    for (let item = await env.nextItem(); item; item = await env.nextItem()) ids.push(item.id);
    expect(ids).toEqual(["a", "b", "a", "b"]);
  });

  it("writes the files, runs the setup in the task's directory and scores the fraction of tests passed", async () => {
    const [task] = parseTaskFile(
      JSON.stringify({
        prompt: "p",
        files: { "src/input.txt": "3\n" },
        setup: "cp src/input.txt copied.txt",
        test: ["test -f copied.txt", "grep -q 3 src/input.txt", "test -f missing.txt", "false"],
      }),
      "t",
    );
    const env = new TerminalTasksEnvironment({ tasks: [task as never], env: process.env });
    const work = dir();
    await env.prepare(task as never, work, never);
    expect(readFileSync(join(work, "copied.txt"), "utf8")).toBe("3\n");
    expect(await env.score(task as never, rollout(work), never)).toBe(0.5);
    expect(fractionPassed([0])).toBe(1);
    expect(fractionPassed([1, null])).toBe(0);
  });

  it("fails the rollout when the setup fails, naming the task", async () => {
    const [task] = parseTaskFile('{"id":"s","prompt":"p","setup":"exit 3","test":"true"}', "t");
    const env = new TerminalTasksEnvironment({ tasks: [task as never], env: process.env });
    await expect(env.prepare(task as never, dir(), never)).rejects.toThrow(/Setup of s exited with code 3/);
  });

  it("kills a test at its timeout, with what it started, and scores it as failed", async () => {
    const work = dir();
    const [task] = parseTaskFile(
      JSON.stringify({ prompt: "p", test: "sleep 30 & echo $! > bg.pid; sleep 30", timeout: 0.5 }),
      "t",
    );
    const env = new TerminalTasksEnvironment({ tasks: [task as never], env: process.env });
    const started = Date.now();
    expect(await env.score(task as never, rollout(work), never)).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(join(work, "bg.pid"), "utf8").trim());
    // The background sleep was in the test's process group: killed with it (gone, or a zombie).
    const table = listProcesses();
    expect(table.find((p) => p.pid === pid && p.state !== "Z")).toBeUndefined();
  });

  it("runs setup and tests without provider keys or platform tokens in their environment", async () => {
    const work = dir();
    const [task] = parseTaskFile(
      JSON.stringify({
        prompt: "p",
        setup: "env > env.txt",
        test: 'test -z "$OPENAI_API_KEY$TELEGRAM_BOT_TOKEN"',
      }),
      "t",
    );
    const env = new TerminalTasksEnvironment({
      tasks: [task as never],
      env: {
        ...process.env,
        OPENAI_API_KEY: "sk-test-secret-123456",
        TELEGRAM_BOT_TOKEN: "123:abc",
        RL_VISIBLE: "yes",
      },
    });
    await env.prepare(task as never, work, never);
    const seen = readFileSync(join(work, "env.txt"), "utf8");
    expect(seen).not.toContain("sk-test-secret-123456");
    expect(seen).not.toContain("123:abc");
    expect(seen).toContain("RL_VISIBLE=yes");
    expect(await env.score(task as never, rollout(work), never)).toBe(1);
  });

  it("stops a running test when interrupted", async () => {
    const controller = new AbortController();
    const [task] = parseTaskFile(JSON.stringify({ prompt: "p", test: "sleep 30" }), "t");
    const env = new TerminalTasksEnvironment({ tasks: [task as never], env: process.env });
    const pending = env.score(task as never, rollout(dir()), controller.signal);
    setImmediate(() => controller.abort());
    expect(await pending).toBe(0);
  });

  it("loads a task file from disk", () => {
    const file = join(dir(), "tasks.jsonl");
    writeFileSync(file, '{"prompt":"p","test":"true"}\n');
    expect(loadTaskFile(file)).toHaveLength(1);
  });
});
