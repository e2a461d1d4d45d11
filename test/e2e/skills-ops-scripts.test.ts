/**
 * The helper scripts shipped with the ops skills, run as the agent runs them (node/bash on real
 * files), against the inputs a confused or prompt-injected model might hand them: hostile file
 * names, shell syntax in option values, an output that is the input, a backup into its own source.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const skills = resolve(import.meta.dirname, "../../skills");
const script = (rel: string) => join(skills, rel);
const FFMPEG_CMD = script("media/ffmpeg-recipes/scripts/ffmpeg-cmd.mjs");
const LOG_TRIAGE = script("devops/log-triage/scripts/log-triage.mjs");
const DISK_REPORT = script("devops/disk-cleanup/scripts/disk-report.sh");
const BACKUP = script("devops/backups/scripts/backup-and-verify.sh");
const SCORE = script("mlops/model-evaluation/scripts/score-evals.mjs");
const IMAGE_INFO = script("media/image-recipes/scripts/image-info.mjs");

const run = (command: string, args: string[], cwd: string) =>
  spawnSync(command, args, { cwd, encoding: "utf8", timeout: 20_000 });
const tmp = () => mkdtempSync(join(tmpdir(), "skills-ops-"));

describe("ffmpeg-cmd.mjs", () => {
  it("prints a command whose words reach ffmpeg unchanged, even for hostile file names", () => {
    const dir = tmp();
    const input = "it's $(touch pwned) `id`.mov";
    const built = run(process.execPath, [FFMPEG_CMD, "convert", input, "out put.mp4"], dir);
    expect(built.status, built.stderr).toBe(0);
    // Run the printed line with a stand-in ffmpeg that prints its arguments, one per line.
    const shown = run("bash", ["-c", `ffmpeg() { printf '%s\\n' "$@"; }; ${built.stdout}`], dir);
    const argv = shown.stdout.trim().split("\n");
    expect(argv).toContain(input);
    expect(argv.at(-1)).toBe("out put.mp4");
    expect(argv.slice(0, 2)).toEqual(["-hide_banner", "-n"]);
    expect(existsSync(join(dir, "pwned"))).toBe(false);
  });

  it("refuses an output that is the input, shell syntax in times, and unknown recipes", () => {
    const dir = tmp();
    const same = run(
      process.execPath,
      [FFMPEG_CMD, "trim", "a.mp4", "./a.mp4", "--start", "1", "--duration", "2"],
      dir,
    );
    expect(same.status).toBe(2);
    expect(same.stderr).toMatch(/must differ from INPUT/);
    const injected = run(
      process.execPath,
      [FFMPEG_CMD, "trim", "a.mp4", "b.mp4", "--start", "1; rm -rf ~", "--duration", "2"],
      dir,
    );
    expect(injected.status).toBe(2);
    expect(injected.stdout).toBe("");
    const filter = run(
      process.execPath,
      [FFMPEG_CMD, "gif", "a.mp4", "b.gif", "--fps", "12,movie=/etc/passwd"],
      dir,
    );
    expect(filter.status).toBe(2);
    expect(run(process.execPath, [FFMPEG_CMD, "delete", "a.mp4", "b.mp4"], dir).status).toBe(2);
  });

  it("overwrites only with --overwrite, and turns --end into an exact duration", () => {
    const dir = tmp();
    const out = run(
      process.execPath,
      [FFMPEG_CMD, "trim", "in.mp4", "out.mp4", "--start", "1:20", "--end", "2:05", "--overwrite"],
      dir,
    );
    expect(out.stdout).toMatch(/^ffmpeg -hide_banner -y -ss 1:20 -i in\.mp4 -t 45 /);
  });
});

describe("log-triage.mjs", () => {
  const log = [
    "2026-11-26 01:59:00 INFO  job: error budget fine, 0 errors",
    "2026-11-26 02:10:00 ERROR job: first failure (before the window)",
    "2026-11-26 03:05:00 WARN  job: slow",
    "2026-11-26 03:06:00 ERROR job: disk full on /var",
    "    at write (fs.js:1)",
    "2026-11-26 04:30:00 ERROR job: after the window",
  ].join("\n");

  it("keeps to the time window, and lower-case 'error' in a message is not an error", () => {
    const dir = tmp();
    writeFileSync(join(dir, "job.log"), `${log}\n`);
    const all = run(process.execPath, [LOG_TRIAGE, "job.log"], dir);
    expect(all.stdout).toMatch(/error lines: 3\n/);
    expect(all.stdout).toMatch(/first error: line 2 at 2026-11-26 02:10:00/);
    const window = run(
      process.execPath,
      [LOG_TRIAGE, "job.log", "--since", "2026-11-26T03:00", "--until", "2026-11-26 04:00"],
      dir,
    );
    expect(window.stdout).toMatch(/error lines: 1\n/);
    expect(window.stdout).toContain(">>> 4: 2026-11-26 03:06:00 ERROR job: disk full on /var");
    expect(window.stdout).toContain("5:     at write (fs.js:1)");
  });

  it("a missing file exits 2 with a message", () => {
    const r = run(process.execPath, [LOG_TRIAGE, "nope.log"], tmp());
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot read nope\.log/);
  });
});

describe("disk-report.sh and backup-and-verify.sh", () => {
  it("disk-report refuses non-numbers and missing folders, and leaves the tree as it was", () => {
    const dir = tmp();
    mkdirSync(join(dir, "d", "node_modules"), { recursive: true });
    writeFileSync(join(dir, "d", "node_modules", "x.js"), "x");
    expect(run("bash", [DISK_REPORT, "d", "5; rm -r d"], dir).status).toBe(2);
    expect(run("bash", [DISK_REPORT, "missing"], dir).status).toBe(2);
    const ok = run("bash", [DISK_REPORT, "d", "5", "1"], dir);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/d\/node_modules\n/);
    expect(readdirSync(join(dir, "d", "node_modules"))).toEqual(["x.js"]);
  });

  it("backup refuses a destination inside the source without creating it", () => {
    const dir = tmp();
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "a.txt"), "a");
    const r = run("bash", [BACKUP, "src", "src/backups"], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/must not be inside SOURCE_DIR/);
    expect(readdirSync(join(dir, "src"))).toEqual(["a.txt"]);
    expect(run("bash", [BACKUP, "missing", "out"], dir).status).toBe(2);
  });
});

describe("score-evals.mjs and image-info.mjs", () => {
  it("record keeps tabs, quotes and newlines intact; bad JSON and unknown match modes exit 2", () => {
    const dir = tmp();
    const answer = 'say "hi"\tthen\nleave';
    expect(run(process.execPath, [SCORE, "record", "a.jsonl", "q1", answer], dir).status).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "a.jsonl"), "utf8"))).toEqual({ id: "q1", answer });
    writeFileSync(join(dir, "bad.jsonl"), '{"id": "q1", "prompt": "x"}\n{oops\n');
    const bad = run(process.execPath, [SCORE, "prompts", "bad.jsonl"], dir);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/bad\.jsonl:2 is not valid JSON/);
    writeFileSync(
      join(dir, "modes.jsonl"),
      '{"id": "q1", "prompt": "x", "expected": "1", "match": "fuzzy"}\n',
    );
    const mode = run(process.execPath, [SCORE, "score", "modes.jsonl", "a.jsonl"], dir);
    expect(mode.status).toBe(2);
    expect(mode.stderr).toMatch(/unknown match "fuzzy"/);
  });

  it("image-info names files it cannot read as unknown and fails on a missing path", () => {
    const dir = tmp();
    writeFileSync(join(dir, "fake.png"), "not really a png");
    const r = run(process.execPath, [IMAGE_INFO, "fake.png", "missing.jpg"], dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("fake.png: unknown 0x0");
    expect(r.stderr).toMatch(/missing\.jpg/);
  });
});
