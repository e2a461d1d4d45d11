#!/usr/bin/env node
// Summarises a log file without loading it into memory: how many lines per level, the first and
// last error with the lines around them, and the most frequent error shapes (numbers, hex ids and
// quoted values masked so repeats group together). Read-only; prints plain text.
//
// usage: node log-triage.mjs FILE [--since TIME] [--until TIME] [--match REGEX] [--context N] [--top N]
// TIME is compared with the timestamp that starts a line ("2026-11-26 14:03", "2026-11-26T14:03:22");
// lines without one (stack traces) belong to the last timestamp seen.
import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const opts = { context: 3, top: 8 };
let file;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const next = () => {
    const v = args[++i];
    if (v === undefined) fail(`${a} needs a value`);
    return v;
  };
  if (a === "--since") opts.since = normTime(next());
  else if (a === "--until") opts.until = normTime(next());
  else if (a === "--match") opts.match = new RegExp(next(), "i");
  else if (a === "--context") opts.context = Number(next());
  else if (a === "--top") opts.top = Number(next());
  else if (a === "-h" || a === "--help") usage(0);
  else if (!file) file = a;
  else fail(`unexpected argument: ${a}`);
}
if (!file) usage(2);

function usage(code) {
  console.log("usage: node log-triage.mjs FILE [--since TIME] [--until TIME] [--match REGEX] [--context N] [--top N]");
  process.exit(code);
}
function fail(message) {
  console.error(`log-triage: ${message}`);
  process.exit(2);
}
function normTime(text) {
  return text.trim().replace("T", " ");
}

const TIMESTAMP = /^\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?)/;
// Upper-case level words only: "0 errors" or "error budget" in an INFO message is not an error.
const ERROR =
  /\b(?:ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|SEVERE|EMERG|ALERT)\b|\blevel=(?:error|fatal)\b|"level":\s*"(?:error|fatal)"|\[(?:error|crit|alert|emerg)\]|^Traceback \(most recent call last\)|\bpanic:/;
const WARN = /\b(?:WARN|WARNING)\b|\blevel=warn|"level":\s*"warn/;
const LEVELS = ["FATAL", "CRITICAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"];

let size;
try {
  size = statSync(file).size;
} catch {
  fail(`cannot read ${file}`);
}

const counts = new Map();
const shapes = new Map();
let total = 0;
let inWindow = 0;
let errors = 0;
let currentTime = "";
let firstError;
let lastError;
const before = [];
let pendingAfter = [];

function shapeOf(line) {
  return line
    .replace(TIMESTAMP, "")
    .replace(/"[^"]*"|'[^']*'/g, '"…"')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{8,}\b/gi, "#")
    .replace(/\d+/g, "N")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 160);
}

const rl = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
for await (const line of rl) {
  total++;
  const ts = TIMESTAMP.exec(line);
  if (ts) currentTime = normTime(ts[1]);
  if (opts.since && (!currentTime || currentTime < opts.since)) continue;
  if (opts.until && currentTime && currentTime.slice(0, opts.until.length) > opts.until) continue;
  if (opts.match && !opts.match.test(line)) continue;
  inWindow++;
  for (const p of pendingAfter) if (p.after.length < opts.context) p.after.push(`${total}: ${line}`);
  pendingAfter = pendingAfter.filter((p) => p.after.length < opts.context);
  const level = LEVELS.find((l) => new RegExp(`\\b${l}\\b`).test(line.slice(0, 80)));
  if (level) counts.set(level, (counts.get(level) ?? 0) + 1);
  const isError = ERROR.test(line) && !WARN.test(line.slice(0, 40));
  if (isError) {
    errors++;
    const entry = { line: total, time: currentTime, text: line, before: [...before], after: [] };
    if (!firstError) firstError = entry;
    lastError = entry;
    pendingAfter.push(entry);
    const shape = shapeOf(line);
    const known = shapes.get(shape);
    if (known) known.count++;
    else shapes.set(shape, { count: 1, firstLine: total });
  }
  before.push(`${total}: ${line}`);
  if (before.length > opts.context) before.shift();
}

const mib = (size / 1048576).toFixed(1);
console.log(`file: ${file} (${total} lines, ${mib} MiB)`);
if (opts.since || opts.until || opts.match) console.log(`lines in the window/match: ${inWindow}`);
const levelText = LEVELS.filter((l) => counts.has(l)).map((l) => `${l} ${counts.get(l)}`).join(", ");
console.log(`levels: ${levelText || "none recognised"}`);
console.log(`error lines: ${errors}`);
function show(title, e) {
  console.log(`\n${title}: line ${e.line}${e.time ? ` at ${e.time}` : ""}`);
  for (const b of e.before) console.log(`    ${b}`);
  console.log(`>>> ${e.line}: ${e.text}`);
  for (const a of e.after) console.log(`    ${a}`);
}
if (firstError) show("first error", firstError);
if (lastError && lastError !== firstError) show("last error", lastError);
if (shapes.size > 0) {
  console.log("\nmost frequent error shapes (count, first line, shape):");
  const sorted = [...shapes.entries()].sort((a, b) => b[1].count - a[1].count).slice(0, opts.top);
  for (const [shape, s] of sorted) console.log(`  ${String(s.count).padStart(6)}  line ${s.firstLine}  ${shape}`);
}
if (errors === 0) console.log("\nno error lines found (try --match with the service name, or widen the window)");
