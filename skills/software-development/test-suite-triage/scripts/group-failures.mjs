#!/usr/bin/env node
// Group a test run's failures by their error, biggest group first, so one root cause that breaks
// twenty tests shows up as one line instead of twenty.
// Usage: node group-failures.mjs [REPORT] [--json]      (REPORT defaults to stdin)
// Reads JUnit XML (pytest --junitxml, vitest/jest junit reporters, node --test junit), Jest-style
// JSON (jest --json, vitest --reporter=json), TAP (node --test, prove), pytest's "short test
// summary" lines and `go test` output.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const json = args.includes("--json");
const file = args.find((a) => !a.startsWith("--"));
let text;
try {
  text = readFileSync(file ?? 0, "utf8");
} catch (err) {
  console.error(`group-failures: cannot read ${file ?? "stdin"}: ${err.message}`);
  process.exit(2);
}
text = text.replace(/\u001b\[[0-9;]*m/g, "");

const decode = (s) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, "&");
const attr = (attrs, name) => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? decode(m[1]) : "";
};
const LOCATION = /((?:\/?[\w.@-]+\/)*[\w.@-]+\.(?:m?[jt]sx?|cjs|py|go|rb|rs|java|kt|php|cs)):(\d+)/g;
/** The first source location outside dependencies and runtime internals. */
function locationIn(detail) {
  for (const m of detail.replace(/file:\/\//g, "").matchAll(LOCATION)) {
    if (!/node_modules|site-packages|node:internal|\/usr\/lib/.test(m[1])) return `${m[1]}:${m[2]}`;
  }
  return "";
}

function fromJunit() {
  const out = [];
  const cases = /<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const [, attrs, inner = ""] of text.matchAll(cases)) {
    const f = /<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(inner);
    if (!f) continue;
    const detail = decode(f[3] ?? "");
    const kind = attr(f[2], "type");
    let message = attr(f[2], "message") || detail.split("\n").find((l) => l.trim()) || kind || f[1];
    if (kind && /^\w*(?:Error|Exception)$/.test(kind) && !message.includes(kind)) message = `${kind}: ${message}`;
    const suite = attr(attrs, "classname");
    out.push({ test: suite ? `${suite} > ${attr(attrs, "name")}` : attr(attrs, "name"), message, where: locationIn(detail) });
  }
  return out;
}

function fromJestJson(report) {
  const out = [];
  for (const file of report.testResults ?? []) {
    const results = file.assertionResults ?? file.testResults ?? [];
    for (const t of results) {
      if (t.status !== "failed") continue;
      const detail = (t.failureMessages ?? []).join("\n");
      const message = detail.split("\n").find((l) => l.trim()) ?? "failed";
      out.push({ test: t.fullName || t.title, message: message.trim(), where: locationIn(detail) || file.name || "" });
    }
    // A file that failed to load has no test results, only a message.
    if (results.length === 0 && file.status === "failed" && file.message) {
      const first = file.message.split("\n").find((l) => l.trim()) ?? "failed to load";
      out.push({ test: file.name, message: first.trim(), where: locationIn(file.message) });
    }
  }
  return out;
}

function fromTap() {
  const out = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const m = /^\s*not ok \d+ - (.*?)(?:\s+#.*)?$/.exec(line);
    if (!m) return;
    const block = [];
    for (let j = i + 1; j < lines.length && !/^\s*(?:not )?ok \d+/.test(lines[j]); j++) block.push(lines[j]);
    const yaml = block.join("\n");
    const name = /^\s*name: '?([^'\n]+)'?$/m.exec(yaml)?.[1];
    let message = /^\s*error: (?!\|)'?(.*?)'?$/m.exec(yaml)?.[1];
    if (!message) {
      const at = block.findIndex((l) => /^\s*error: \|/.test(l));
      message = at >= 0 ? (block.slice(at + 1).find((l) => l.trim()) ?? "").trim() : "";
    }
    if (!message && /^\s*#/.test(m[1])) return;
    if (/failureType: 'subtestsFailed'/.test(yaml)) return; // a parent whose children failed
    const where = /^\s*location: '([^']+)'/m.exec(yaml)?.[1] ?? locationIn(yaml);
    out.push({ test: m[1], message: name && message ? `${name}: ${message}` : message || "failed", where });
  });
  return out;
}

function fromPytest() {
  const out = [];
  for (const m of text.matchAll(/^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$/gm)) {
    out.push({ test: m[1], message: m[2] ?? "failed", where: m[1].split("::")[0] });
  }
  return out;
}

function fromGo() {
  const out = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const m = /^\s*--- FAIL: (\S+)/.exec(line);
    if (!m) return;
    const detail = [];
    for (let j = i + 1; j < lines.length && /^\s{4,}/.test(lines[j]); j++) detail.push(lines[j].trim());
    const first = detail.find((l) => /\.go:\d+:/.test(l)) ?? detail[0] ?? "failed";
    const where = /^([\w./-]+\.go:\d+):/.exec(first)?.[1] ?? "";
    out.push({ test: m[1], message: first.replace(/^[\w./-]+\.go:\d+:\s*/, ""), where });
  });
  return out.filter((f) => !out.some((o) => o !== f && o.test.startsWith(`${f.test}/`)));
}

let format;
let failures;
let parsed;
try {
  parsed = JSON.parse(text);
} catch {
  parsed = undefined;
}
if (parsed && Array.isArray(parsed.testResults)) [format, failures] = ["jest-json", fromJestJson(parsed)];
else if (/<testcase\b/.test(text)) [format, failures] = ["junit", fromJunit()];
else if (/^\s*not ok \d+/m.test(text)) [format, failures] = ["tap", fromTap()];
else if (/^(?:FAILED|ERROR) \S+::/m.test(text)) [format, failures] = ["pytest", fromPytest()];
else if (/^\s*--- FAIL: /m.test(text)) [format, failures] = ["go", fromGo()];
else [format, failures] = ["unknown", []];

/** The grouping key: the message with run-specific noise (hashes, addresses, timings, temp paths) blurred. */
function key(message) {
  return message
    .split("\n")[0]
    .replace(/0x[0-9a-f]+/gi, "0x…")
    .replace(/\b[0-9a-f]{12,64}\b/gi, "<hash>")
    .replace(/\d+(?:\.\d+)?\s?ms\b/g, "<n>ms")
    .replace(/(?:\/tmp|\/var\/folders)\/[\w./-]+/g, "<tmp>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}

const groups = new Map();
for (const f of failures) {
  const k = key(f.message);
  const g = groups.get(k) ?? { message: k, tests: [], where: new Set() };
  g.tests.push(f.test);
  if (f.where) g.where.add(f.where);
  groups.set(k, g);
}
const sorted = [...groups.values()].sort((a, b) => b.tests.length - a.tests.length);

if (json) {
  const plain = sorted.map((g) => ({ count: g.tests.length, message: g.message, where: [...g.where], tests: g.tests }));
  console.log(JSON.stringify({ format, failures: failures.length, groups: plain }, null, 2));
} else if (failures.length === 0) {
  if (format === "unknown") {
    console.log("No failures recognised: unknown report format. Rerun with a JUnit XML or TAP reporter.");
    process.exit(2);
  }
  console.log(`No failures (format: ${format}).`);
} else {
  console.log(`${failures.length} failing test${failures.length === 1 ? "" : "s"} in ${sorted.length} group${sorted.length === 1 ? "" : "s"} (format: ${format})`);
  sorted.forEach((g, i) => {
    console.log(`\n${i + 1}. [${g.tests.length} test${g.tests.length === 1 ? "" : "s"}] ${g.message}`);
    const where = [...g.where].slice(0, 3);
    if (where.length) console.log(`   at ${where.join(", ")}${g.where.size > 3 ? ", …" : ""}`);
    for (const t of g.tests.slice(0, 8)) console.log(`   - ${t}`);
    if (g.tests.length > 8) console.log(`   - … and ${g.tests.length - 8} more`);
  });
}
process.exit(failures.length > 0 ? 1 : 0);
