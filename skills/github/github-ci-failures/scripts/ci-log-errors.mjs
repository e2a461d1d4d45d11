#!/usr/bin/env node
// Pull the error lines out of a GitHub Actions log saved with `gh run view RUN --log-failed`,
// grouped by job and step, with a little context, so a 20,000-line log becomes one screen.
// Usage: node ci-log-errors.mjs LOGFILE [--context N] [--max N]     (LOGFILE "-" reads stdin)
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const num = (name, fallback) => {
  const i = args.indexOf(name);
  const v = i >= 0 ? Number(args[i + 1]) : fallback;
  return Number.isInteger(v) && v >= 0 ? v : fallback;
};
const file = args.find((a, i) => (a === "-" || !a.startsWith("--")) && !["--context", "--max"].includes(args[i - 1]));
if (!file) {
  console.error("usage: node ci-log-errors.mjs LOGFILE [--context N] [--max N]");
  process.exit(2);
}
const context = num("--context", 2);
const max = num("--max", 40);
let raw;
try {
  raw = readFileSync(file === "-" ? 0 : file, "utf8");
} catch (err) {
  console.error(`ci-log-errors: cannot read ${file}: ${err.message}`);
  process.exit(2);
}

// `gh run view --log` lines: "<job>\t<step>\t<ISO timestamp> <text>". Plain logs are accepted too.
const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ?/;
const entries = raw
  .replace(/\u001b\[[0-9;]*m/g, "")
  .split(/\r?\n/)
  .map((line) => {
    const parts = line.split("\t");
    if (parts.length >= 3 && STAMP.test(parts.slice(2).join("\t"))) {
      return { job: parts[0], step: parts[1], text: parts.slice(2).join("\t").replace(STAMP, "") };
    }
    return { job: "", step: "", text: line.replace(STAMP, "") };
  });

const ERROR = /##\[error\]|\berror\b|^\s*not ok \d|\bERR!|\bfailed\b|\bFAIL(?:ED)?\b|\bexception\b|\bpanic:|\btraceback\b|\bassert(?:ion)?\w*\b|exit code [1-9]|\u2717|\u00d7 /i;
const NOISE = /^\s*(?:at |##\[group\]|##\[endgroup\])|0 errors?|errors?: 0|--fail-fast|continue-on-error|set -e/i;

const byStep = new Map();
entries.forEach((e, i) => {
  if (!ERROR.test(e.text) || NOISE.test(e.text)) return;
  const key = e.job || e.step ? `${e.job} / ${e.step}` : "log";
  const list = byStep.get(key) ?? [];
  list.push(i);
  byStep.set(key, list);
});

if (byStep.size === 0) {
  console.log(`No error lines found in ${entries.length} lines. Read the end of each failed step instead.`);
  process.exit(0);
}
let shown = 0;
const total = [...byStep.values()].reduce((n, l) => n + l.length, 0);
console.log(`${total} error line${total === 1 ? "" : "s"} in ${byStep.size} step${byStep.size === 1 ? "" : "s"} (${entries.length} log lines)`);
for (const [key, hits] of byStep) {
  console.log(`\n== ${key} (${hits.length})`);
  const keep = hits.slice(0, Math.max(0, max - shown));
  shown += keep.length;
  const hitSet = new Set(keep);
  const lines = new Set();
  for (const i of keep) {
    for (let j = Math.max(0, i - context); j <= Math.min(i + context, entries.length - 1); j++) {
      if (entries[j].job === entries[i].job && entries[j].step === entries[i].step) lines.add(j);
    }
  }
  let previous = -1;
  for (const j of [...lines].sort((a, b) => a - b)) {
    if (previous >= 0 && j > previous + 1) console.log("   ...");
    console.log(`${hitSet.has(j) ? ">" : " "} ${entries[j].text}`);
    previous = j;
  }
}
if (shown < total) console.log(`\n(${total - shown} more error lines not shown; raise --max)`);
