/**
 * The helper scripts shipped with the software-development and github skills, run as the agent
 * runs them (node <script> ... in a working directory) on real fixtures: the report formats they
 * claim to read, and the bad input a confused model would hand them (unknown formats, missing
 * files, dirty trees, out-of-range selections, file names with shell syntax).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SKILLS = resolve(import.meta.dirname, "../../skills");
const script = (path: string) => join(SKILLS, path);
const GROUP = script("software-development/test-suite-triage/scripts/group-failures.mjs");
const CI_LOG = script("github/github-ci-failures/scripts/ci-log-errors.mjs");
const NOTES = script("github/release-notes/scripts/release-notes.mjs");
const BISECT = script("software-development/git-bisect/scripts/bisect.mjs");
const CONFLICTS = script("software-development/merge-conflicts/scripts/list-conflicts.mjs");
const HUNKS = script("software-development/commit-hygiene/scripts/stage-hunks.mjs");
const OUTDATED = script("software-development/dependency-upgrades/scripts/outdated-summary.mjs");
const AUDIT = script("software-development/security-dependency-audit/scripts/audit-summary.mjs");
const MAP = script("software-development/codebase-onboarding/scripts/repo-map.mjs");

function node(file: string, args: string[], options: { cwd?: string; input?: string } = {}) {
  const r = spawnSync(process.execPath, [file, ...args], { encoding: "utf8", ...options });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const tmp = () => mkdtempSync(join(tmpdir(), "skills-dev-"));
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

function repo(): string {
  const dir = tmp();
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "dev@example.com");
  git(dir, "config", "user.name", "Dev");
  git(dir, "config", "commit.gpgsign", "false");
  return dir;
}

function commit(dir: string, file: string, content: string, message: string): string {
  writeFileSync(join(dir, file), content);
  git(dir, "add", file);
  git(dir, "commit", "-q", "-m", message);
  return git(dir, "rev-parse", "HEAD");
}

describe("group-failures.mjs", () => {
  it("reads pytest summary lines, go test output and JUnit <error> elements", () => {
    const pytest = [
      "FAILED tests/test_a.py::test_one - KeyError: 'id'",
      "FAILED tests/test_b.py::test_two - KeyError: 'id'",
      "ERROR tests/test_c.py::test_three - ConnectionRefusedError: [Errno 111]",
    ].join("\n");
    const py = node(GROUP, [], { input: pytest });
    expect(py.code).toBe(1);
    expect(py.out).toMatch(
      /3 failing tests in 2 groups \(format: pytest\)\n\n1\. \[2 tests\] KeyError: 'id'/,
    );

    const go =
      "--- FAIL: TestParse (0.00s)\n    --- FAIL: TestParse/empty (0.00s)\n        parse_test.go:12: got 1, want 0\nFAIL\n";
    const g = node(GROUP, ["--json"], { input: go });
    const parsed = JSON.parse(g.out) as {
      format: string;
      groups: Array<{ message: string; tests: string[] }>;
    };
    expect(parsed.format).toBe("go");
    expect(parsed.groups.map((x) => x.tests)).toEqual([["TestParse/empty"]]);
    expect(parsed.groups[0]?.message).toBe("got 1, want 0");

    const junit =
      '<testsuite><testcase classname="api" name="creates"><error type="TypeError" message="fetch failed"/></testcase>' +
      '<testcase classname="api" name="lists"/></testsuite>';
    expect(node(GROUP, [], { input: junit }).out).toContain(
      "1. [1 test] TypeError: fetch failed\n   - api > creates",
    );
  });

  it("reads Jest-style JSON, including a file that failed to load", () => {
    const report = {
      testResults: [
        {
          name: "/repo/test/a.test.ts",
          status: "failed",
          assertionResults: [
            {
              fullName: "parse empty",
              status: "failed",
              failureMessages: ["TypeError: x is undefined\n    at parse (/repo/src/parse.ts:9:3)"],
            },
            { fullName: "parse one", status: "passed", failureMessages: [] },
          ],
        },
        {
          name: "/repo/test/b.test.ts",
          status: "failed",
          assertionResults: [],
          message: "Error: Cannot find module './gone'",
        },
      ],
    };
    const r = node(GROUP, [], { input: JSON.stringify(report) });
    expect(r.out).toContain("2 failing tests in 2 groups (format: jest-json)");
    expect(r.out).toContain(
      "[1 test] TypeError: x is undefined\n   at /repo/src/parse.ts:9\n   - parse empty",
    );
    expect(r.out).toContain("[1 test] Error: Cannot find module './gone'");
  });

  it("puts failures that differ only in temp paths and hashes into one group", () => {
    const tap = [
      "not ok 1 - writes a",
      "  ---",
      "  error: 'ENOENT: no such file /tmp/run-a1/out.json (id 3f2a9c1b7d4e)'",
      "  ...",
      "not ok 2 - writes b",
      "  ---",
      "  error: 'ENOENT: no such file /tmp/run-b2/out.json (id 9e8d7c6b5a41)'",
      "  ...",
      "ok 3 - reads",
    ].join("\n");
    expect(node(GROUP, [], { input: tap }).out).toMatch(/2 failing tests in 1 group \(format: tap\)/);
  });

  it("refuses output it does not understand instead of reporting no failures", () => {
    const r = node(GROUP, [], { input: "Tests: 3 failed, 10 passed\n" });
    expect(r.code).toBe(2);
    expect(r.out).toContain("unknown report format");
    const missing = node(GROUP, [join(tmp(), "nope.xml")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("cannot read");
  });
});

describe("ci-log-errors.mjs", () => {
  it("handles plain logs, clean logs, --max and a missing file", () => {
    const dir = tmp();
    writeFileSync(join(dir, "plain.log"), "step 1\nnpm ERR! code ELIFECYCLE\nstep 3\n");
    expect(node(CI_LOG, [join(dir, "plain.log")]).out).toContain("> npm ERR! code ELIFECYCLE");
    writeFileSync(join(dir, "clean.log"), "all good\n0 errors\n");
    expect(node(CI_LOG, [join(dir, "clean.log")]).out).toContain("No error lines found");
    writeFileSync(join(dir, "many.log"), Array.from({ length: 30 }, (_, i) => `error ${i}`).join("\n"));
    const limited = node(CI_LOG, [join(dir, "many.log"), "--max", "5", "--context", "0"]);
    expect(limited.out).toContain("(25 more error lines not shown; raise --max)");
    expect(node(CI_LOG, [join(dir, "absent.log")]).code).toBe(2);
  });
});

describe("release-notes.mjs", () => {
  it("works without tags, treats a BREAKING CHANGE footer as breaking, and rejects unknown refs", () => {
    const dir = repo();
    commit(dir, "a", "1", "feat: first");
    writeFileSync(join(dir, "a"), "2");
    git(
      dir,
      "commit",
      "-qam",
      "refactor: new config loader",
      "-m",
      "BREAKING CHANGE: config.yml is now config.yaml",
    );
    const r = node(NOTES, [], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.out).toContain("2 commits (no earlier tag).");
    expect(r.out).toMatch(/### Breaking changes\n\n- new config loader/);
    const bad = node(NOTES, ["v9.9.9", "HEAD"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('unknown ref "v9.9.9"');
    expect(node(NOTES, [], { cwd: tmp() }).err).toContain("not inside a git repository");
  });
});

describe("bisect.mjs", () => {
  function history(): { dir: string; bad: string } {
    const dir = repo();
    commit(dir, "v.txt", "ok\n", "start");
    git(dir, "tag", "good");
    const bad = commit(dir, "v.txt", "broken\n", "break it");
    commit(dir, "other.txt", "1\n", "unrelated");
    commit(dir, "other.txt", "2\n", "unrelated again");
    return { dir, bad };
  }

  it("refuses a dirty tree or a bisect already running, and changes nothing", () => {
    const { dir } = history();
    writeFileSync(join(dir, "v.txt"), "local edit\n");
    const dirty = node(BISECT, ["--good", "good", "--", "grep -q ok v.txt"], { cwd: dir });
    expect(dirty.code).toBe(2);
    expect(dirty.err).toContain("uncommitted changes");
    expect(readFileSync(join(dir, "v.txt"), "utf8")).toBe("local edit\n");
    git(dir, "checkout", "--", "v.txt");
    git(dir, "bisect", "start");
    const busy = node(BISECT, ["--good", "good", "--", "grep -q ok v.txt"], { cwd: dir });
    expect(busy.code).toBe(2);
    expect(busy.err).toContain("already running");
    git(dir, "bisect", "reset");
    expect(node(BISECT, ["--good", "good"], { cwd: dir }).code).toBe(2);
  });

  it("finds the culprit through skipped commits and resets even when no culprit is found", () => {
    const { dir, bad } = history();
    // The commit after the culprit cannot be tested (exit 125): bisect skips it and still names the culprit.
    const check = 'if grep -q "^1$" other.txt 2>/dev/null; then exit 125; fi; grep -qx ok v.txt';
    const found = node(BISECT, ["--good", "good", "--", check], { cwd: dir });
    expect(found.out).toContain(`First bad commit: ${bad} break it`);
    const never = node(BISECT, ["--good", "good", "--", "no-such-command-here"], { cwd: dir });
    expect(never.code).toBe(1);
    expect(never.out).toContain("cannot run (exit 125 or command not found) at good");
    // A check that never fails would otherwise blame the BAD ref itself.
    const passes = node(BISECT, ["--good", "good", "--", "true"], { cwd: dir });
    expect(passes.code).toBe(1);
    expect(passes.out).toContain("The check passes at HEAD");
    const alwaysFails = node(BISECT, ["--good", "good", "--", "false"], { cwd: dir });
    expect(alwaysFails.out).toContain("The check fails at good as well");
    expect(existsSync(join(dir, ".git", "BISECT_START"))).toBe(false);
    expect(git(dir, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  });
});

describe("list-conflicts.mjs", () => {
  it("says when nothing is in progress, explains rebase roles, and reports a delete/modify conflict", () => {
    const dir = repo();
    commit(dir, "f.txt", "a\n", "base");
    expect(node(CONFLICTS, [], { cwd: dir }).out).toContain("Operation in progress: none");
    git(dir, "switch", "-q", "-c", "topic");
    commit(dir, "f.txt", "topic\n", "topic edit");
    git(dir, "switch", "-q", "main");
    git(dir, "rm", "-q", "f.txt");
    git(dir, "commit", "-qm", "remove f");
    git(dir, "switch", "-q", "topic");
    spawnSync("git", ["rebase", "main"], { cwd: dir });
    const r = node(CONFLICTS, [], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.out).toContain("Operation in progress: rebase");
    expect(r.out).toContain('"theirs" is your commit being replayed');
    expect(r.out).toContain("- f.txt: deleted by ours, changed by the other side");
    git(dir, "rebase", "--abort");
  });
});

describe("stage-hunks.mjs", () => {
  it("splits close changes with --context 1 and rejects bad selections without touching the index", () => {
    const dir = repo();
    const lines = Array.from({ length: 12 }, (_, i) => `l${i + 1}`);
    commit(dir, "f.txt", `${lines.join("\n")}\n`, "base");
    const edited = [...lines];
    edited[2] = "L3";
    edited[7] = "L8";
    writeFileSync(join(dir, "f.txt"), `${edited.join("\n")}\n`);
    expect(node(HUNKS, ["f.txt"], { cwd: dir }).out).toContain("hunk 1 of 1");
    expect(node(HUNKS, ["f.txt", "--context", "1"], { cwd: dir }).out).toContain("hunk 2 of 2");
    for (const pick of ["0", "3", "x", ""]) {
      const r = node(HUNKS, ["f.txt", "--context", "1", "--stage", pick], { cwd: dir });
      expect(r.code).toBe(2);
    }
    expect(git(dir, "diff", "--cached")).toBe("");
    expect(node(HUNKS, ["f.txt", "--context", "1", "--stage", "2"], { cwd: dir }).code).toBe(0);
    expect(git(dir, "diff", "--cached")).toContain("+L8");
    expect(git(dir, "diff", "--cached")).not.toContain("+L3");
  });

  it("treats a file name with shell syntax as a name, and explains untracked files", () => {
    const dir = repo();
    commit(dir, "a.txt", "a\n", "base");
    const r = node(HUNKS, ["$(touch pwned); x.txt"], { cwd: dir });
    expect(r.out).toContain("No unstaged changes");
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    writeFileSync(join(dir, "new.txt"), "n\n");
    expect(node(HUNKS, ["new.txt"], { cwd: dir }).out).toContain("git add -N new.txt");
  });
});

describe("outdated-summary.mjs and audit-summary.mjs", () => {
  it("read npm's per-location arrays and pip's lists, and fail clearly on broken JSON", () => {
    const arrays = JSON.stringify({ lodash: [{ current: "4.17.20", wanted: "4.17.21", latest: "4.17.21" }] });
    expect(node(OUTDATED, ["-"], { input: arrays }).out).toContain("lodash  4.17.20 -> 4.17.21");
    expect(node(OUTDATED, ["-"], { input: "{}" }).out).toContain("Everything is up to date.");
    const broken = node(OUTDATED, ["-"], { input: "{ nope" });
    expect(broken.code).toBe(2);
    expect(broken.err).toContain("cannot read JSON");

    const pipLegacy = JSON.stringify([
      { name: "jinja2", version: "3.1.2", vulns: [{ id: "PYSEC-1", fix_versions: ["3.1.3"] }] },
    ]);
    const pip = node(AUDIT, ["-"], { input: pipLegacy });
    expect(pip.code).toBe(1);
    expect(pip.out).toContain("fix: upgrade to 3.1.3");
    expect(node(AUDIT, ["-"], { input: JSON.stringify({ vulnerabilities: {} }) }).code).toBe(0);
    expect(node(AUDIT, ["-"], { input: "<html>" }).code).toBe(2);
  });
});

describe("repo-map.mjs", () => {
  it("maps a folder that is not a git repository and rejects a missing one", () => {
    const dir = tmp();
    mkdirSync(join(dir, "tests"));
    writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'x'\n");
    writeFileSync(join(dir, "tests", "test_x.py"), "def test_x():\n    pass\n");
    const r = node(MAP, [dir]);
    expect(r.out).toContain("Not a git repository");
    expect(r.out).toContain("- pyproject.toml");
    expect(r.out).toContain("1 test files");
    expect(node(MAP, [join(dir, "missing")]).code).toBe(2);
  });
});
