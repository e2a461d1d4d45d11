#!/usr/bin/env node
// Quick checks for a SKILL.md before saving it: frontmatter fences, name and description,
// folder name match, size, and a non-empty body. No dependencies; prints problems and exits 1.
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

const file = process.argv[2];
if (!file) {
  console.error("usage: node check-skill.mjs path/to/SKILL.md");
  process.exit(2);
}
const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
const problems = [];
const lines = text.split(/\r?\n/);
if (lines[0]?.trim() !== "---") problems.push('line 1 must be "---" (frontmatter start)');
const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
if (end < 0) problems.push('the frontmatter has no closing "---" line');
const front = end > 0 ? lines.slice(1, end) : [];
const field = (key) => {
  const line = front.find((l) => l.startsWith(`${key}:`));
  return line ? line.slice(key.length + 1).trim().replace(/^["']|["']$/g, "") : "";
};
const name = field("name");
const description = field("description");
const folder = basename(dirname(resolve(file)));
if (!name) problems.push("missing name:");
else if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(name)) problems.push(`name "${name}" must be lowercase letters, digits, - _ . (max 64)`);
else if (name !== folder) problems.push(`name "${name}" does not match the folder "${folder}"`);
if (!description) problems.push("missing description:");
else if (description.length > 1024) problems.push(`description is ${description.length} characters (max 1024)`);
if (end > 0 && !lines.slice(end + 1).join("\n").trim()) problems.push("no instructions after the frontmatter");
if (text.length > 100_000) problems.push(`SKILL.md is ${text.length} characters (max 100,000)`);
for (const section of ["## When to use", "## Procedure", "## Verification"]) {
  if (!text.toLowerCase().includes(section.toLowerCase())) console.log(`note: no "${section}" section`);
}
if (problems.length > 0) {
  for (const p of problems) console.error(`problem: ${p}`);
  process.exit(1);
}
console.log(`ok: ${name} (${text.length} characters)`);
