/**
 * Checkpoints and rollback through the built CLI, against the fake LLM: a read-only command makes
 * no checkpoint; an overwrite by write_file and a terminal `rm` each do, and `hermes checkpoints`
 * lists, diffs and rolls them back (the rollback itself undoable); a directory over the file cap is
 * skipped with a note; `/rollback`, `/rollback diff` and `/checkpoints` in the REPL (tmux); `-w`
 * works in its own worktree of the repository, started from the fetched remote (worktree_sync),
 * never runs the repository's hooks, and is removed at exit only when left clean.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
const titles = useFakeLlm();
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

function setup(extra = "") {
  const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
  return tempHome(fakeProviderConfig(llm.url, `display:\n  tool_progress: "off"\n${aux}${extra}`));
}

async function hermes(args: string[], where: { home: string; cwd: string }) {
  const result = await runHermes(args, { ...where, timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`hermes ${args.join(" ")} exited ${result.code}:\n${result.stderr}`);
  return result;
}

type Listed = Array<{ reason: string; short: string }>;

describe("checkpoints through one-shot runs and `hermes checkpoints`", () => {
  it("checkpoints an overwrite and an rm but not a read, and rolls both back, undoably", async () => {
    const where = setup();
    const { cwd } = where;
    writeFileSync(join(cwd, "notes.txt"), "original\n");
    writeFileSync(join(cwd, "data file.txt"), "keep me\n");

    llm.enqueue(
      reply().toolCall("terminal", { command: "ls -la && cat notes.txt" }),
      reply().text("Looked."),
    );
    await hermes(["--checkpoints", "-z", "look around"], where);
    const none = JSON.parse((await hermes(["checkpoints", "list", "--json"], where)).stdout) as Listed;
    expect(none).toEqual([]);

    llm.enqueue(
      reply().toolCall("write_file", { path: "notes.txt", content: "overwritten\n" }),
      reply().text("Written."),
    );
    await hermes(["--checkpoints", "-z", "rewrite the notes"], where);
    llm.enqueue(reply().toolCall("terminal", { command: "rm 'data file.txt'" }), reply().text("Removed."));
    await hermes(["--checkpoints", "-z", "delete the data file"], where);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("overwritten\n");
    expect(existsSync(join(cwd, "data file.txt"))).toBe(false);

    const list = JSON.parse((await hermes(["checkpoints", "list", "--json"], where)).stdout) as Listed;
    expect(list.map((c) => c.reason)).toEqual([
      "before terminal: rm 'data file.txt'",
      "before write_file notes.txt",
    ]);
    const diff = await hermes(["checkpoints", "diff", "1"], where);
    expect(diff.stdout).toMatch(/data file\.txt/);
    expect(diff.stdout).toMatch(/-keep me/);

    const back = await hermes(["checkpoints", "rollback", "1"], where);
    expect(back.stdout).toMatch(/Restored .* to checkpoint/);
    expect(readFileSync(join(cwd, "data file.txt"), "utf8")).toBe("keep me\n");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("overwritten\n");

    // The rollback saved the state before it as checkpoint 1; the write's checkpoint is now 3.
    await hermes(["checkpoints", "rollback", "3"], where);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("original\n");
    await hermes(["checkpoints", "rollback", "1"], where);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("overwritten\n");

    const status = await hermes(["checkpoints", "status"], where);
    expect(status.stdout).toMatch(/Projects: 1/);
    // Nothing of the store is in the working directory.
    expect(readdirSync(cwd).sort()).toEqual(["data file.txt", "notes.txt"]);
    const missing = await runHermes(["checkpoints", "rollback", "9"], where);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no checkpoint 9: choose 1 to 5/);
  }, 120_000);

  it("skips a directory over checkpoints.max_files with a note, and the write still happens", async () => {
    const where = setup("checkpoints:\n  enabled: true\n  max_files: 5\n");
    for (let i = 0; i < 8; i++) writeFileSync(join(where.cwd, `f${i}.txt`), "x");
    llm.enqueue(reply().toolCall("write_file", { path: "f0.txt", content: "new" }), reply().text("Done."));
    const run = await hermes(["-q", "edit f0"], where);
    expect(run.stderr).toMatch(/Checkpoint skipped: .* has more than 5 files \(checkpoints\.max_files\)/);
    expect(readFileSync(join(where.cwd, "f0.txt"), "utf8")).toBe("new");
    expect(JSON.parse((await hermes(["checkpoints", "list", "--json"], where)).stdout)).toEqual([]);
  }, 60_000);
});

describe.skipIf(!hasTmux)("/rollback and /checkpoints in the REPL", () => {
  let socket: string | undefined;
  afterEach(() => {
    if (socket) spawnSync("tmux", ["-L", socket, "kill-server"]);
  });

  it("lists, diffs and restores the checkpoint of a turn", async () => {
    const where = setup();
    writeFileSync(join(where.cwd, "plan.md"), "first draft\n");
    socket = `hermes-ckpt-${process.pid}-${randomBytes(4).toString("hex")}`;
    const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: where.home,
      HERMES_HOME: where.home,
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
    };
    const command = [
      "env -i",
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      quote(process.execPath),
      quote(HERMES_BIN),
      "--checkpoints",
    ].join(" ");
    const tmux = (...args: string[]) =>
      execFileSync("tmux", ["-u", "-L", socket as string, ...args], { encoding: "utf8" });
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "50", "-c", where.cwd, command);
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", "0");
    const waitFor = async (pattern: RegExp) => {
      const deadline = Date.now() + 20_000;
      while (!pattern.test(screen())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const type = async (text: string, until: RegExp) => {
      tmux("send-keys", "-t", "0", "-l", text);
      tmux("send-keys", "-t", "0", "Enter");
      await waitFor(until);
    };
    titles.respondWith(() => reply().text("Rollback test"));
    llm.enqueue(
      reply().toolCall("write_file", { path: "plan.md", content: "rewritten by the agent\n" }),
      reply().text("Plan rewritten."),
    );
    await waitFor(/Ctrl\+D to exit/);
    await type("rewrite the plan", /Plan rewritten\./);
    expect(readFileSync(join(where.cwd, "plan.md"), "utf8")).toBe("rewritten by the agent\n");

    await type("/checkpoints", /Checkpoints: on/);
    expect(screen()).toMatch(/1\. [0-9a-f]{7,}\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+before write_file plan\.md/);
    await type("/rollback diff 1", /\+rewritten by the agent/);
    expect(screen()).toMatch(/-first draft/);
    await type("/rollback 1", /\/rollback 1 undoes this/);
    expect(readFileSync(join(where.cwd, "plan.md"), "utf8")).toBe("first draft\n");
  }, 90_000);
});

describe("-w/--worktree", () => {
  it("works in its own worktree from the fetched remote, runs no repository hook, keeps it only when changed", async () => {
    const where = setup();
    const { cwd, home } = where;
    const root = join(cwd, "..");
    const git = (dir: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=T", ...args], {
        cwd: dir,
        encoding: "utf8",
      }).trim();
    const remote = join(root, "remote.git");
    git(root, "init", "-q", "--bare", "-b", "main", remote);
    git(cwd, "init", "-q", "-b", "main");
    writeFileSync(join(cwd, "README.md"), "repo\n");
    git(cwd, "add", ".");
    git(cwd, "commit", "-qm", "base");
    git(cwd, "remote", "add", "origin", remote);
    git(cwd, "push", "-q", "origin", "main");
    git(root, "--git-dir", remote, "symbolic-ref", "HEAD", "refs/heads/main");
    // The remote moves on without the local checkout.
    const other = join(root, "other");
    git(root, "clone", "-q", remote, other);
    writeFileSync(join(other, "remote-only.txt"), "landed upstream\n");
    git(other, "add", ".");
    git(other, "commit", "-qm", "upstream");
    git(other, "push", "-q", "origin", "main");
    git(cwd, "fetch", "-q", "origin");
    git(cwd, "update-ref", "-d", "refs/remotes/origin/main");
    const marker = join(root, "HOOK-RAN");
    for (const hook of ["post-checkout", "reference-transaction"]) {
      writeFileSync(join(cwd, ".git", "hooks", hook), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(cwd, ".git", "hooks", hook), 0o755);
    }

    llm.enqueue(
      reply().toolCall("write_file", { path: "feature.txt", content: "new work\n" }),
      reply().text("Added."),
    );
    const first = await hermes(["-w", "--checkpoints", "-q", "add a feature"], where);
    const path = /working in the worktree (\S+) \(branch (hermes\/\S+)\)/.exec(first.stderr);
    expect(path).not.toBeNull();
    const [, dir, branch] = path as RegExpExecArray;
    expect(dir?.startsWith(join(home, "worktrees"))).toBe(true);
    expect(readFileSync(join(dir as string, "feature.txt"), "utf8")).toBe("new work\n");
    expect(readFileSync(join(dir as string, "remote-only.txt"), "utf8")).toBe("landed upstream\n");
    expect(existsSync(join(cwd, "feature.txt"))).toBe(false);
    expect(first.stderr).toMatch(/kept the worktree .*uncommitted changes/);
    expect(existsSync(marker)).toBe(false);
    // The checkpoint covers the worktree, not the user's checkout.
    const listed = JSON.parse(
      (await hermes(["checkpoints", "list", "--json", "--dir", dir as string], where)).stdout,
    ) as Listed;
    expect(listed.map((c) => c.reason)).toEqual(["before write_file feature.txt"]);

    llm.enqueue(reply().text("Nothing to do."));
    const second = await hermes(["-w", "-q", "just answer"], where);
    const [, clean] = /working in the worktree (\S+) /.exec(second.stderr) as RegExpExecArray;
    expect(existsSync(clean as string)).toBe(false);
    expect(git(cwd, "branch", "--list", "--format=%(refname:short)", "hermes/*")).toBe(branch);
    expect(git(cwd, "status", "--porcelain")).toBe("");
  }, 120_000);

  it("refuses -w outside a git repository with exit 2", async () => {
    const where = setup();
    const run = await runHermes(["-w", "-z", "hi"], { ...where, timeoutMs: 30_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--worktree needs a git repository/);
  }, 60_000);
});
