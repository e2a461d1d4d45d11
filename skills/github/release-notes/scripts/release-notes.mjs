#!/usr/bin/env node
// Draft release notes from the commits between two refs, grouped by kind.
// Usage: node release-notes.mjs [FROM] [TO] [--version NAME]
//   FROM defaults to the newest tag before TO; TO defaults to HEAD.
// Reads only `git` output of the current repository and prints Markdown on stdout.
import { execFileSync } from "node:child_process";

function git(args) {
  return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function fail(message) {
  console.error(`release-notes: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
let version;
const refs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--version") version = args[++i];
  else if (args[i] === "-h" || args[i] === "--help") {
    console.log("usage: node release-notes.mjs [FROM] [TO] [--version NAME]");
    process.exit(0);
  } else refs.push(args[i]);
}

try {
  git(["rev-parse", "--git-dir"]);
} catch {
  fail("not inside a git repository");
}

// Accept "FROM TO", "FROM..TO", "FROM" (to HEAD) or nothing (newest tag to HEAD).
let [from, target = "HEAD"] = refs;
if (from?.includes("..")) [from, target] = [from.split("..")[0], from.split("..")[1] || "HEAD"];
let targetSha;
try {
  targetSha = git(["rev-parse", "--verify", `${target}^{commit}`]);
} catch {
  fail(`unknown ref "${target}"`);
}

if (!from) {
  // The newest tag reachable from TO that does not point at TO itself.
  const tags = git(["tag", "--merged", target, "--sort=-v:refname"]).split("\n").filter(Boolean);
  from = tags.find((t) => git(["rev-list", "-n", "1", t]) !== targetSha);
}
if (from) {
  try {
    git(["rev-parse", "--verify", `${from}^{commit}`]);
  } catch {
    fail(`unknown ref "${from}"`);
  }
}
const range = from ? `${from}..${target}` : target;

const SEP = "\u001f";
const END = "\u001e";
const raw = git(["log", "--no-merges", `--format=%h${SEP}%an${SEP}%s${SEP}%b${END}`, range]);
const commits = raw
  .split(END)
  .map((c) => c.trim())
  .filter(Boolean)
  .map((c) => {
    const [hash, author, subject, body = ""] = c.split(SEP);
    return { hash, author, subject, body };
  });

const GROUPS = [
  ["breaking", "Breaking changes"],
  ["feat", "Features"],
  ["fix", "Bug fixes"],
  ["perf", "Performance"],
  ["security", "Security"],
  ["docs", "Documentation"],
  ["refactor", "Refactoring"],
  ["test", "Tests"],
  ["build", "Build and CI"],
  ["other", "Other changes"],
];
const ALIASES = {
  feature: "feat",
  add: "feat",
  bugfix: "fix",
  hotfix: "fix",
  doc: "docs",
  ci: "build",
  chore: "build",
  deps: "build",
  style: "refactor",
  tests: "test",
  sec: "security",
};
const HEADER = /^(\w+)(?:\(([^)]*)\))?(!)?:\s*(.+)$/;

const buckets = new Map(GROUPS.map(([key]) => [key, []]));
const authors = new Set();
for (const commit of commits) {
  authors.add(commit.author);
  const m = HEADER.exec(commit.subject);
  let type = "other";
  let text = commit.subject;
  let scope = "";
  if (m) {
    const word = m[1].toLowerCase();
    const known = ALIASES[word] ?? word;
    if (buckets.has(known)) {
      type = known;
      text = m[4];
      scope = m[2] ?? "";
    }
  }
  const breaking = m?.[3] === "!" || /^BREAKING[ -]CHANGE:/m.test(commit.body);
  const line = `- ${scope ? `**${scope}:** ` : ""}${text} (${commit.hash})`;
  buckets.get(breaking ? "breaking" : type).push(line);
}

const title = version ?? (target === "HEAD" ? "Unreleased" : target);
const out = [`## ${title}`, ""];
out.push(
  from
    ? `Changes since ${from}: ${commits.length} commit${commits.length === 1 ? "" : "s"} by ${authors.size} author${authors.size === 1 ? "" : "s"}.`
    : `${commits.length} commits (no earlier tag).`,
  "",
);
for (const [key, heading] of GROUPS) {
  const lines = buckets.get(key);
  if (lines.length === 0) continue;
  out.push(`### ${heading}`, "", ...lines, "");
}
if (commits.length === 0) out.push("No changes in this range.", "");
process.stdout.write(`${out.join("\n").trimEnd()}\n`);
