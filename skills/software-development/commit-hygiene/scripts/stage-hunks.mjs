#!/usr/bin/env node
// Stage part of a file's changes without an interactive terminal (what `git add -p` does by hand).
// Usage: node stage-hunks.mjs FILE                 list the unstaged hunks of FILE, numbered
//        node stage-hunks.mjs FILE --stage 1,3     stage hunks 1 and 3 only
//        node stage-hunks.mjs FILE --context N     smaller N splits changes into more hunks (default 3)
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith("--") && !["--stage", "--context"].includes(args[i - 1]));
const valueOf = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!file) {
  console.error("usage: node stage-hunks.mjs FILE [--stage 1,3] [--context N]");
  process.exit(2);
}
const context = Number(valueOf("--context") ?? 3);
if (!Number.isInteger(context) || context < 1) {
  console.error(`stage-hunks: --context must be a whole number of at least 1, got "${valueOf("--context")}"`);
  process.exit(2);
}

const diff = spawnSync("git", ["diff", `--unified=${context}`, "--no-color", "--", file], { encoding: "utf8" });
if (diff.status !== 0) {
  console.error(`stage-hunks: git diff failed: ${(diff.stderr ?? "").trim()}`);
  process.exit(2);
}
const lines = diff.stdout.split("\n");
if (lines.at(-1) === "") lines.pop();
const firstHunk = lines.findIndex((l) => l.startsWith("@@ "));
if (firstHunk < 0) {
  console.log(`No unstaged changes in ${file}. (A new file needs \`git add -N ${file}\` first.)`);
  process.exit(0);
}
const header = lines.slice(0, firstHunk);
if (header.some((l) => l.startsWith("Binary files"))) {
  console.error(`stage-hunks: ${file} is binary; stage it whole with git add`);
  process.exit(2);
}
const hunks = [];
for (const line of lines.slice(firstHunk)) {
  if (line.startsWith("@@ ")) hunks.push([line]);
  else hunks.at(-1).push(line);
}

const wanted = valueOf("--stage");
if (wanted === undefined) {
  hunks.forEach((hunk, i) => {
    const body = hunk.slice(1).filter((l) => l.startsWith("+") || l.startsWith("-"));
    console.log(`--- hunk ${i + 1} of ${hunks.length}: ${hunk[0]}`);
    for (const l of body.slice(0, 12)) console.log(`  ${l}`);
    if (body.length > 12) console.log(`  … ${body.length - 12} more changed lines`);
  });
  const example = hunks.length > 1 ? "1,2" : "1";
  console.log(`\nStage some with: node stage-hunks.mjs ${file} --stage ${example}${context !== 3 ? ` --context ${context}` : ""}`);
  process.exit(0);
}

const picks = [...new Set(wanted.split(",").map((s) => Number(s.trim())))];
const bad = picks.filter((n) => !Number.isInteger(n) || n < 1 || n > hunks.length);
if (bad.length > 0 || picks.length === 0) {
  console.error(`stage-hunks: hunks are numbered 1-${hunks.length}; got "${wanted}"`);
  process.exit(2);
}
const patch = `${[...header, ...picks.sort((a, b) => a - b).flatMap((n) => hunks[n - 1])].join("\n")}\n`;
const apply = spawnSync("git", ["apply", "--cached", "--recount", "-"], { input: patch, encoding: "utf8" });
if (apply.status !== 0) {
  console.error(`stage-hunks: git apply refused the selection: ${(apply.stderr ?? "").trim()}`);
  console.error("Try a different --context, or stage the whole file and split the commit afterwards.");
  process.exit(1);
}
console.log(`Staged hunk${picks.length === 1 ? "" : "s"} ${picks.join(", ")} of ${file}.`);
const staged = spawnSync("git", ["diff", "--cached", "--stat"], { encoding: "utf8" });
process.stdout.write(staged.stdout ?? "");
