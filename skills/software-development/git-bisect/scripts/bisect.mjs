#!/usr/bin/env node
// Find the commit that broke a check with `git bisect run`, then put the repository back.
// Usage: node bisect.mjs --good REF [--bad REF] [--timeout SECONDS] -- COMMAND...
//   COMMAND runs through the shell at every step; exit 0 means good, anything else bad.
//   Exit 125 skips a commit (cannot be tested); "not found" (126/127) counts as a skip too.
// Prints "First bad commit: <sha> <subject>" and the commit's file list; exit 1 when none found.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const opts = dash < 0 ? argv : argv.slice(0, dash);
const command = dash < 0 ? "" : argv.slice(dash + 1).join(" ");
const option = (name) => {
  const i = opts.indexOf(name);
  return i >= 0 ? opts[i + 1] : undefined;
};

if (opts.includes("--step")) {
  // One bisect step: run the check and map its result onto what `git bisect run` understands.
  const timeout = Number(option("--timeout") ?? 0) * 1000;
  const result = spawnSync(command, { shell: true, stdio: "inherit", timeout: timeout || undefined });
  if (result.status === 0) process.exit(0);
  if (result.status === 125 || result.status === 126 || result.status === 127) process.exit(125);
  // A failure, a crash or a timeout: this commit is bad. Codes above 127 would abort the bisect.
  process.exit(1);
}

function git(args, inherit = false) {
  const r = spawnSync("git", args, { encoding: "utf8", stdio: inherit ? "inherit" : "pipe" });
  return { ok: r.status === 0, out: (r.stdout ?? "").trim(), err: (r.stderr ?? "").trim() };
}
function fail(message) {
  console.error(`bisect: ${message}`);
  process.exit(2);
}

const good = option("--good");
const bad = option("--bad") ?? "HEAD";
if (!good || !command) fail("usage: node bisect.mjs --good REF [--bad REF] [--timeout SECONDS] -- COMMAND...");
const gitDir = git(["rev-parse", "--git-dir"]);
if (!gitDir.ok) fail("not inside a git repository");
if (existsSync(join(gitDir.out, "BISECT_START"))) fail("a bisect is already running; finish it with `git bisect reset`");
if (git(["status", "--porcelain", "--untracked-files=no"]).out !== "") {
  fail("the working tree has uncommitted changes; commit or stash them first");
}
for (const ref of [good, bad]) {
  if (!git(["rev-parse", "--verify", `${ref}^{commit}`]).ok) fail(`unknown ref "${ref}"`);
}

const self = fileURLToPath(import.meta.url);
const timeoutArgs = option("--timeout") ? ["--timeout", option("--timeout")] : [];

// A check that passes at BAD or fails at GOOD would make bisect name a wrong commit with full
// confidence, so both ends are tried first; the original checkout is restored afterwards.
const home = git(["symbolic-ref", "-q", "--short", "HEAD"]).out || git(["rev-parse", "HEAD"]).out;
function verdictAt(ref) {
  if (!git(["checkout", "-q", "--detach", ref]).ok) fail(`cannot check out ${ref}`);
  const r = spawnSync(process.execPath, [self, "--step", ...timeoutArgs, "--", command], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  return r.status;
}
let ends;
try {
  ends = { bad: verdictAt(bad), good: verdictAt(good) };
} finally {
  git(["checkout", "-q", home]);
}
if (ends.bad === 0) {
  console.log(`The check passes at ${bad}, so there is no failure to bisect. Make it fail there first.`);
  process.exit(1);
}
if (ends.good !== 0) {
  const why = ends.good === 125 ? "cannot run (exit 125 or command not found)" : "fails";
  console.log(`The check ${why} at ${good} as well; pick an older good ref or fix the check command.`);
  process.exit(1);
}

let first;
try {
  const start = git(["bisect", "start", bad, good]);
  if (!start.ok) fail(start.err || "git bisect start failed");
  const run = spawnSync("git", ["bisect", "run", process.execPath, self, "--step", ...timeoutArgs, "--", command], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const output = run.stdout ?? "";
  process.stderr.write(output);
  first = /([0-9a-f]{40}) is the first bad commit/.exec(output)?.[1];
  const log = git(["bisect", "log"]);
  if (log.ok) console.log(`Bisect log:\n${log.out}\n`);
} finally {
  git(["bisect", "reset"]);
}

if (!first) {
  console.log("No single first bad commit found (see the log above: skipped commits or a good BAD ref).");
  process.exit(1);
}
const subject = git(["log", "-1", "--format=%s", first]).out;
console.log(`First bad commit: ${first} ${subject}`);
console.log(git(["show", "--stat", "--format=%an <%ae>%n%ad", first]).out);
