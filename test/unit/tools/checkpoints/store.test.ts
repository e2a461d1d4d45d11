/**
 * The shadow store against real git in throw-away folders: snapshots, restore and its undo, the
 * limits, pruning, and the adversarial cases: a user repository with hooks and hostile config that
 * must never run, GIT_* variables in the environment, odd file names, symlinks leading outside the
 * working directory, and a store placed inside the directory it would record.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { autoPrune, pruneStore } from "../../../../src/tools/checkpoints/prune.js";
import {
  diffCheckpoint,
  listCheckpoints,
  restoreCheckpoint,
} from "../../../../src/tools/checkpoints/restore.js";
import { type SnapshotLimits, takeSnapshot } from "../../../../src/tools/checkpoints/snapshot.js";
import { storePaths } from "../../../../src/tools/checkpoints/store.js";

const LIMITS: SnapshotLimits = { maxSnapshots: 20, maxFileBytes: 10 * 1024 * 1024, maxFiles: 1000 };
let root: string;
let home: string;
let work: string;
let clock = 1_000_000;
const now = () => clock++;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-ckpt-")));
  home = join(root, "home");
  work = join(root, "work dir");
  mkdirSync(home);
  mkdirSync(work);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const paths = () => storePaths(home);
const snap = (reason = "before write_file", limits = LIMITS) =>
  takeSnapshot(paths(), work, reason, limits, now());
const read = (rel: string) => readFileSync(join(work, rel), "utf8");

describe("snapshots and rollback", () => {
  it("restores an overwritten and a deleted file, removes a new one, and the restore can be undone", async () => {
    writeFileSync(join(work, "a.txt"), "original\n");
    writeFileSync(join(work, "b file.txt"), "keep me\n");
    expect((await snap()).kind).toBe("taken");
    writeFileSync(join(work, "a.txt"), "overwritten\n");
    rmSync(join(work, "b file.txt"));
    writeFileSync(join(work, "new.txt"), "created later\n");

    const diff = await diffCheckpoint(paths(), work, 1);
    expect(diff.stat).toMatch(/a\.txt/);
    expect(diff.patch).toMatch(/-original\n\+overwritten/);
    expect(diff.patch).toMatch(/deleted file mode[\s\S]*b file\.txt/);

    const result = await restoreCheckpoint(paths(), work, 1, LIMITS, now());
    expect(result.saved).toBe(true);
    expect(result.removed).toEqual(["new.txt"]);
    expect(read("a.txt")).toBe("original\n");
    expect(read("b file.txt")).toBe("keep me\n");
    expect(existsSync(join(work, "new.txt"))).toBe(false);

    const list = await listCheckpoints(paths(), work);
    expect(list.map((c) => c.reason)).toEqual([
      `pre-rollback snapshot (restoring to ${result.checkpoint.short})`,
      "before write_file",
    ]);
    await restoreCheckpoint(paths(), work, 1, LIMITS, now());
    expect(read("a.txt")).toBe("overwritten\n");
    expect(read("new.txt")).toBe("created later\n");
    expect(existsSync(join(work, "b file.txt"))).toBe(false);
  });

  it("takes no new checkpoint when nothing changed, and restores one file alone", async () => {
    writeFileSync(join(work, "x.txt"), "1\n");
    writeFileSync(join(work, "y.txt"), "1\n");
    await snap();
    expect((await snap()).kind).toBe("unchanged");
    expect(await listCheckpoints(paths(), work)).toHaveLength(1);
    writeFileSync(join(work, "x.txt"), "2\n");
    writeFileSync(join(work, "y.txt"), "2\n");
    await restoreCheckpoint(paths(), work, 1, LIMITS, now(), "x.txt");
    expect(read("x.txt")).toBe("1\n");
    expect(read("y.txt")).toBe("2\n");
    await expect(restoreCheckpoint(paths(), work, 1, LIMITS, now(), "../outside.txt")).rejects.toThrow(
      /not a file inside/,
    );
    await expect(restoreCheckpoint(paths(), work, 9, LIMITS, now())).rejects.toThrow(
      /no checkpoint 9: choose 1 to/,
    );
  });

  it("keeps at most max_snapshots, newest first", async () => {
    for (let i = 1; i <= 5; i++) {
      writeFileSync(join(work, "f.txt"), `${i}\n`);
      await snap(`turn ${i}`, { ...LIMITS, maxSnapshots: 3 });
    }
    const list = await listCheckpoints(paths(), work);
    expect(list.map((c) => c.reason)).toEqual(["turn 5", "turn 4", "turn 3"]);
    await restoreCheckpoint(paths(), work, 3, { ...LIMITS, maxSnapshots: 3 }, now());
    expect(read("f.txt")).toBe("3\n");
  });
});

describe("limits", () => {
  it("skips a directory over the file cap with a reason, and leaves oversize files out", async () => {
    for (let i = 0; i < 12; i++) writeFileSync(join(work, `f${i}.txt`), "x");
    const skipped = await snap("x", { ...LIMITS, maxFiles: 10 });
    expect(skipped).toEqual({ kind: "skipped", reason: expect.stringMatching(/more than 10 files/) });
    expect(await listCheckpoints(paths(), work)).toEqual([]);

    writeFileSync(join(work, "big [1].bin"), Buffer.alloc(2048));
    const taken = await snap("x", { ...LIMITS, maxFileBytes: 1024 });
    expect(taken.kind === "taken" && taken.oversize).toEqual(["big [1].bin"]);
    // The big file is not in the checkpoint, and a rollback does not delete it either.
    writeFileSync(join(work, "f0.txt"), "changed");
    await restoreCheckpoint(paths(), work, 1, { ...LIMITS, maxFileBytes: 1024 }, now());
    expect(read("f0.txt")).toBe("x");
    expect(lstatSync(join(work, "big [1].bin")).size).toBe(2048);
  });

  it("refuses the home directory, the root, and a store inside the working directory", async () => {
    const inside = storePaths(join(work, ".hermes"));
    writeFileSync(join(work, "a"), "1");
    const outcome = await takeSnapshot(inside, work, "x", LIMITS, now());
    expect(outcome).toEqual({
      kind: "skipped",
      reason: expect.stringMatching(/checkpoint store .* is inside/),
    });
    expect(existsSync(join(work, ".hermes", "checkpoints", "store"))).toBe(false);
    expect((await takeSnapshot(paths(), "/", "x", LIMITS, now())).kind).toBe("skipped");
  });
});

describe("adversarial", () => {
  it("never runs the user's hooks or config, never touches their .git, ignores GIT_* in the environment", async () => {
    const marker = join(root, "PWNED");
    execFileSync("git", ["init", "-q", work]);
    const hooks = join(work, ".git", "hooks");
    for (const hook of [
      "pre-commit",
      "post-checkout",
      "post-commit",
      "post-index-change",
      "reference-transaction",
    ]) {
      writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(hooks, hook), 0o755);
    }
    const evil = `!touch '${marker}'`;
    const repoConfig = join(work, ".git", "config");
    writeFileSync(
      repoConfig,
      `${readFileSync(repoConfig, "utf8")}[core]\n\tfsmonitor = ${evil}\n\thooksPath = ${hooks}\n[filter "evil"]\n\tclean = touch '${marker}'\n\tsmudge = touch '${marker}'\n[diff "evil"]\n\ttextconv = touch '${marker}'\n`,
    );
    writeFileSync(join(work, ".gitattributes"), "* filter=evil diff=evil\n");
    writeFileSync(join(work, "code.ts"), "one\n");
    const gitDirBefore = execFileSync("find", [join(work, ".git")]).toString();
    const saved = { ...process.env };
    process.env.GIT_DIR = join(work, ".git");
    process.env.GIT_WORK_TREE = work;
    process.env.GIT_INDEX_FILE = join(work, ".git", "index");
    process.env.GIT_CONFIG_PARAMETERS = `'core.fsmonitor'='${evil}'`;
    try {
      await snap();
      writeFileSync(join(work, "code.ts"), "two\n");
      await diffCheckpoint(paths(), work, 1);
      await restoreCheckpoint(paths(), work, 1, LIMITS, now());
    } finally {
      process.env = saved;
    }
    expect(read("code.ts")).toBe("one\n");
    expect(existsSync(marker)).toBe(false);
    expect(execFileSync("find", [join(work, ".git")]).toString()).toBe(gitDirBefore);
    // Nothing of the store landed in the working directory.
    expect(readdirSync(work).sort()).toEqual([".git", ".gitattributes", "code.ts"]);
  });

  it("handles odd names: spaces, unicode, leading dashes, glob characters, a newline", async () => {
    const names = ["with space.txt", "ünïcødé.md", "-rf", "*", "[x].txt", "line\nbreak.txt", ":(top)x"];
    for (const name of names) writeFileSync(join(work, name), `orig ${name}`);
    await snap();
    for (const name of names) writeFileSync(join(work, name), "changed");
    await restoreCheckpoint(paths(), work, 1, LIMITS, now());
    for (const name of names) expect(read(name)).toBe(`orig ${name}`);
  });

  it("never writes or deletes through a symlink leading outside the working directory", async () => {
    const outside = join(root, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "precious.txt"), "do not touch\n");
    mkdirSync(join(work, "sub"));
    writeFileSync(join(work, "sub", "a.txt"), "inside\n");
    symlinkSync(outside, join(work, "link"));
    await snap();
    // The checkpoint holds the link as a link, not what it points at.
    const list = await listCheckpoints(paths(), work);
    expect(list).toHaveLength(1);

    // The folder is replaced by a link to the outside, and a file appears behind the old link.
    rmSync(join(work, "sub"), { recursive: true });
    symlinkSync(outside, join(work, "sub"));
    writeFileSync(join(outside, "new-outside.txt"), "made through the link\n");
    await restoreCheckpoint(paths(), work, 1, LIMITS, now());

    expect(lstatSync(join(work, "sub")).isDirectory()).toBe(true);
    expect(read("sub/a.txt")).toBe("inside\n");
    expect(readlinkSync(join(work, "link"))).toBe(outside);
    expect(readFileSync(join(outside, "precious.txt"), "utf8")).toBe("do not touch\n");
    expect(readFileSync(join(outside, "new-outside.txt"), "utf8")).toBe("made through the link\n");
    expect(existsSync(join(outside, "a.txt"))).toBe(false);
  });
});

describe("pruning", () => {
  it("drops projects whose directory was deleted and runs auto-prune once per interval", async () => {
    writeFileSync(join(work, "a"), "1");
    await snap();
    const gone = join(root, "gone");
    mkdirSync(gone);
    writeFileSync(join(gone, "b"), "1");
    await takeSnapshot(paths(), gone, "x", LIMITS, now());
    rmSync(gone, { recursive: true });
    const report = await pruneStore(
      paths(),
      { retentionDays: 7, deleteOrphans: true, maxTotalSizeMb: 500 },
      now(),
    );
    expect(report).toMatchObject({ scanned: 2, deletedOrphan: 1, deletedStale: 0 });
    expect(await listCheckpoints(paths(), work)).toHaveLength(1);

    const settings = { retentionDays: 1, deleteOrphans: true, maxTotalSizeMb: 500, minIntervalHours: 24 };
    expect(await autoPrune(paths(), settings, clock)).toBeDefined();
    expect(await autoPrune(paths(), settings, clock + 3600)).toBeUndefined();
    // Two days later the untouched project is stale.
    const later = await autoPrune(paths(), settings, clock + 2 * 86_400);
    expect(later).toMatchObject({ deletedStale: 1 });
    expect(await listCheckpoints(paths(), work)).toEqual([]);
  });
});
