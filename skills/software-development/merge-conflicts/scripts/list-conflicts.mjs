#!/usr/bin/env node
// Show what a merge, rebase or cherry-pick left in conflict: the operation, both sides, and every
// conflicted file with the line numbers of its conflict blocks.
// Usage: node list-conflicts.mjs           list conflicts (exit 1 when there are any)
//        node list-conflicts.mjs --check   fail (exit 1) if any file still holds conflict markers
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

function git(args) {
  const r = spawnSync("git", args, { encoding: "utf8" });
  return r.status === 0 ? (r.stdout ?? "").trim() : undefined;
}

const top = git(["rev-parse", "--show-toplevel"]);
const gitDir = git(["rev-parse", "--absolute-git-dir"]);
if (!top || !gitDir) {
  console.error("list-conflicts: not inside a git repository");
  process.exit(2);
}
const has = (p) => existsSync(join(gitDir, p));
const short = (ref) => git(["log", "-1", "--format=%h %s", ref]) ?? ref;

/** Conflict blocks in one file's text: start line, separator line, end line. */
function blocks(text) {
  const out = [];
  let open;
  text.split("\n").forEach((line, i) => {
    if (line.startsWith("<<<<<<< ") || line === "<<<<<<<") open = { start: i + 1, mid: 0 };
    else if (open && (line === "=======" || line.startsWith("======= "))) open.mid = i + 1;
    else if (open && (line.startsWith(">>>>>>> ") || line === ">>>>>>>")) {
      out.push({ ...open, end: i + 1 });
      open = undefined;
    }
  });
  return out;
}

const unmerged = (git(["diff", "--name-only", "--diff-filter=U"]) ?? "").split("\n").filter(Boolean);

if (process.argv.includes("--check")) {
  // Unmerged files plus everything staged or changed: a marker can hide in a file already `git add`ed.
  const changed = (git(["diff", "--name-only", "HEAD"]) ?? "").split("\n").filter(Boolean);
  const staged = (git(["diff", "--cached", "--name-only"]) ?? "").split("\n").filter(Boolean);
  const left = [];
  for (const file of new Set([...unmerged, ...changed, ...staged])) {
    const path = join(top, file);
    if (!existsSync(path)) continue;
    const found = blocks(readFileSync(path, "utf8"));
    if (found.length > 0) left.push(`${file}: lines ${found.map((b) => b.start).join(", ")}`);
  }
  if (unmerged.length > 0) console.log(`Still unmerged in the index (git add them when resolved): ${unmerged.join(", ")}`);
  if (left.length > 0) console.log(`Conflict markers left:\n  ${left.join("\n  ")}`);
  if (left.length === 0 && unmerged.length === 0) console.log("No conflict markers and nothing unmerged.");
  process.exit(left.length > 0 || unmerged.length > 0 ? 1 : 0);
}

let operation = "none";
let ours = "HEAD";
let theirs;
if (has("MERGE_HEAD")) [operation, theirs] = ["merge", "MERGE_HEAD"];
else if (has("rebase-merge") || has("rebase-apply")) {
  operation = "rebase";
  theirs = has("REBASE_HEAD") ? "REBASE_HEAD" : undefined;
} else if (has("CHERRY_PICK_HEAD")) [operation, theirs] = ["cherry-pick", "CHERRY_PICK_HEAD"];
else if (has("REVERT_HEAD")) [operation, theirs] = ["revert", "REVERT_HEAD"];

console.log(`Operation in progress: ${operation}`);
if (operation === "rebase") {
  console.log("  During a rebase, HEAD (\"ours\") is the branch being rebased onto; \"theirs\" is your commit being replayed.");
}
console.log(`  ours   (HEAD): ${short(ours)}`);
if (theirs) console.log(`  theirs (${theirs}): ${short(theirs)}`);

if (unmerged.length === 0) {
  console.log("No unmerged files.");
  process.exit(0);
}
console.log(`\n${unmerged.length} conflicted file${unmerged.length === 1 ? "" : "s"}:`);
for (const file of unmerged) {
  const path = join(top, file);
  // Index stages of the file: 1 base, 2 ours, 3 theirs. A missing 2 or 3 means that side deleted it.
  const stages = new Set(
    (git(["ls-files", "-u", "--", file]) ?? "")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(/\s+/)[2]),
  );
  const deletedBy = !stages.has("2") ? "ours" : !stages.has("3") ? "theirs" : undefined;
  if (deletedBy) {
    console.log(`- ${file}: deleted by ${deletedBy}, changed by the other side (keep it: git add ${file}; drop it: git rm ${file})`);
    continue;
  }
  if (!existsSync(path)) {
    console.log(`- ${file}: missing from the working tree (restore a side with git checkout --ours or --theirs)`);
    continue;
  }
  const found = blocks(readFileSync(path, "utf8"));
  const where = found.map((b) => `${b.start}-${b.end}`).join(", ");
  console.log(`- ${file}: ${found.length} block${found.length === 1 ? "" : "s"}${where ? ` at lines ${where}` : " (no markers: a binary file, or both sides added it)"}`);
}
console.log("\nSee each side whole: git show :2:<file> (ours), git show :3:<file> (theirs), git show :1:<file> (base).");
process.exit(1);
