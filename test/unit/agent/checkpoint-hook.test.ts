/**
 * Which tool calls take the turn's checkpoint, and the session's once-per-turn rule with its notes:
 * a non-local backend and a skipped directory are told once, never per call, and never stop the tool.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mutationReason, sessionCheckpoints } from "../../../src/agent/checkpoint-hook.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { listCheckpoints } from "../../../src/tools/checkpoints/restore.js";
import { storePaths } from "../../../src/tools/checkpoints/store.js";

describe("mutationReason", () => {
  it.each([
    ["write_file", { path: "a.txt", content: "x" }, "before write_file a.txt"],
    ["patch", { path: "b.ts" }, "before patch b.ts"],
    ["execute_code", { code: "print(1)" }, "before execute_code"],
    ["terminal", { command: "rm x" }, "before terminal: rm x"],
    ["terminal", { command: "ls -la" }, undefined],
    ["terminal", { command: "cat a | grep b" }, undefined],
    ["terminal", {}, undefined],
    ["read_file", { path: "a.txt" }, undefined],
    ["search_files", { pattern: "x" }, undefined],
    ["memory", { action: "add" }, undefined],
  ])("%s %j → %s", (name, args, expected) => {
    expect(mutationReason(name, args)).toBe(expected);
  });
});

describe("CheckpointSession", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function session(extra: (c: ReturnType<typeof defaultConfig>) => void = () => undefined) {
    root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-hook-")));
    const home = join(root, "home");
    const work = join(root, "work");
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "a.txt"), "1");
    const config = defaultConfig();
    config.checkpoints.enabled = true;
    extra(config);
    return { home, work, session: sessionCheckpoints(config, home, work) };
  }

  it("is off unless checkpoints.enabled", () => {
    root = mkdtempSync(join(tmpdir(), "hermes-hook-"));
    expect(sessionCheckpoints(defaultConfig(), root, root)).toBeUndefined();
  });

  it("takes one snapshot per turn, shared by calls made together", async () => {
    const { home, work, session: s } = session();
    const [first, second] = await Promise.all([
      s?.beforeMutation("before write_file a.txt"),
      s?.beforeMutation("x"),
    ]);
    expect(first).toBeUndefined();
    expect(second).toBeUndefined();
    writeFileSync(join(work, "a.txt"), "2");
    await s?.beforeMutation("later in the same turn");
    expect((await listCheckpoints(storePaths(home), work)).map((c) => c.reason)).toEqual([
      "before write_file a.txt",
    ]);
    s?.newTurn();
    await s?.beforeMutation("next turn");
    expect(await listCheckpoints(storePaths(home), work)).toHaveLength(2);
  });

  it("says once that a non-local backend is not checkpointed", async () => {
    const {
      home,
      work,
      session: s,
    } = session((c) => {
      c.terminal.backend = "docker";
    });
    expect((await s?.beforeMutation("x"))?.message).toMatch(
      /local backend only: terminal\.backend is docker/,
    );
    s?.newTurn();
    expect(await s?.beforeMutation("x")).toBeUndefined();
    expect(await listCheckpoints(storePaths(home), work)).toEqual([]);
  });
});
