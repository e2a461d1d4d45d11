#!/usr/bin/env node
// Turn a package manager's "outdated" JSON into an upgrade plan: patch, then minor, then major
// bumps (one at a time), with the size of each jump.
// Usage: npm outdated --json > /tmp/outdated.json; node outdated-summary.mjs /tmp/outdated.json
//        pip list --outdated --format=json > /tmp/outdated.json; node outdated-summary.mjs /tmp/outdated.json
// Reads the file (or stdin with "-") only; it never runs the package manager itself.
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node outdated-summary.mjs OUTDATED.json   (from npm outdated --json or pip list --outdated --format=json)");
  process.exit(2);
}
let data;
try {
  const text = readFileSync(file === "-" ? 0 : file, "utf8").trim();
  data = text === "" ? {} : JSON.parse(text);
} catch (err) {
  console.error(`outdated-summary: cannot read JSON from ${file}: ${err.message}`);
  process.exit(2);
}

/** Rows as { name, current, target, kind } from npm's object or pip's array. */
const rows = [];
if (Array.isArray(data)) {
  for (const p of data) rows.push({ name: p.name, current: p.version, target: p.latest_version, note: "" });
} else {
  for (const [name, info] of Object.entries(data)) {
    // npm lists one entry per workspace location as an array in some versions.
    for (const p of Array.isArray(info) ? info : [info]) {
      const note = [p.type === "devDependencies" ? "dev" : "", p.wanted && p.wanted !== p.latest ? `range allows ${p.wanted}` : ""]
        .filter(Boolean)
        .join(", ");
      rows.push({ name, current: p.current ?? "(not installed)", target: p.latest, note });
    }
  }
}

const parse = (v) => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(String(v ?? ""));
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
};
function kindOf(current, target) {
  const a = parse(current);
  const b = parse(target);
  if (!a || !b) return "unknown";
  if (b[0] !== a[0]) return "major";
  // Below 1.0 a minor bump may break things, as semver allows.
  if (b[1] !== a[1]) return a[0] === 0 ? "major" : "minor";
  if (b[2] !== a[2]) return "patch";
  return "prerelease";
}
for (const r of rows) r.kind = kindOf(r.current, r.target);

if (rows.length === 0) {
  console.log("Everything is up to date.");
  process.exit(0);
}
const ORDER = ["patch", "prerelease", "minor", "major", "unknown"];
const TITLES = {
  patch: "Patch (bug fixes; batch them, then test)",
  prerelease: "Pre-release changes (check before taking)",
  minor: "Minor (new features; small batches, then test)",
  major: "Major (breaking; one at a time, read the changelog)",
  unknown: "Unparsed versions (check by hand)",
};
console.log(`${rows.length} outdated package${rows.length === 1 ? "" : "s"}`);
for (const kind of ORDER) {
  const group = rows.filter((r) => r.kind === kind).sort((a, b) => a.name.localeCompare(b.name));
  if (group.length === 0) continue;
  console.log(`\n${TITLES[kind]}: ${group.length}`);
  for (const r of group) console.log(`  ${r.name}  ${r.current} -> ${r.target}${r.note ? `  (${r.note})` : ""}`);
}
