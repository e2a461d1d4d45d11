#!/usr/bin/env node
// A small evaluation harness for comparing models on the user's own tasks. Three commands:
//   prompts EVALS.jsonl                 print "id<TAB>prompt" lines, one per case, for a shell loop
//   record ANSWERS.jsonl ID ANSWER      append one model answer (JSON-escaped) to an answers file
//   score EVALS.jsonl A.jsonl [B.jsonl] score one or two answer files, case by case
// A case is {"id", "prompt", "expected", "match"}; match is exact | contains | regex | number
// (default contains). Reads and writes only the files named. Exit 0 on success, 2 on bad input.
import { appendFileSync, readFileSync } from "node:fs";

const [command, ...args] = process.argv.slice(2);

function fail(message) {
  console.error(`score-evals: ${message}`);
  process.exit(2);
}

function readJsonl(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    fail(`cannot read ${path}`);
  }
  return text
    .split("\n")
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter(({ line }) => line !== "")
    .map(({ line, n }) => {
      try {
        return JSON.parse(line);
      } catch {
        fail(`${path}:${n} is not valid JSON`);
      }
    });
}

const normalise = (s) => String(s).trim().replace(/\s+/g, " ").replace(/^["'`]+|["'`.]+$/g, "").toLowerCase();

function firstNumber(text) {
  const m = String(text).replace(/(\d),(\d{3})/g, "$1$2").match(/-?\d+(?:\.\d+)?/);
  return m ? Number(m[0]) : undefined;
}

export function passes(testCase, answer) {
  if (answer === undefined || answer === null) return false;
  const mode = testCase.match ?? "contains";
  const expected = String(testCase.expected);
  switch (mode) {
    case "exact":
      return normalise(answer) === normalise(expected);
    case "contains":
      return normalise(answer).includes(normalise(expected));
    case "regex":
      return new RegExp(expected, "i").test(String(answer));
    case "number": {
      const got = firstNumber(answer);
      const want = Number(expected);
      return got !== undefined && Math.abs(got - want) <= Math.max(1e-9, Math.abs(want) * 1e-6);
    }
    default:
      fail(`case ${testCase.id}: unknown match "${mode}" (exact, contains, regex, number)`);
  }
}

function answersById(path) {
  const map = new Map();
  for (const row of readJsonl(path)) map.set(String(row.id), row.answer);
  return map;
}

if (command === "prompts") {
  if (!args[0]) fail("usage: prompts EVALS.jsonl");
  for (const c of readJsonl(args[0])) {
    if (c.id === undefined || c.prompt === undefined) fail("every case needs an id and a prompt");
    console.log(`${c.id}\t${String(c.prompt).replace(/[\t\n]+/g, " ")}`);
  }
} else if (command === "record") {
  const [file, id, ...answer] = args;
  if (!file || !id) fail("usage: record ANSWERS.jsonl ID ANSWER");
  appendFileSync(file, `${JSON.stringify({ id, answer: answer.join(" ") })}\n`);
} else if (command === "score") {
  const [evalsPath, aPath, bPath] = args;
  if (!evalsPath || !aPath) fail("usage: score EVALS.jsonl A.jsonl [B.jsonl]");
  const cases = readJsonl(evalsPath);
  const runs = [aPath, bPath].filter(Boolean).map((path) => ({ path, answers: answersById(path), passed: 0, missing: 0 }));
  const rows = [];
  for (const c of cases) {
    const marks = runs.map((run) => {
      const answer = run.answers.get(String(c.id));
      if (answer === undefined) run.missing++;
      const ok = passes(c, answer);
      if (ok) run.passed++;
      return answer === undefined ? "missing" : ok ? "pass" : "FAIL";
    });
    rows.push({ id: c.id, marks });
  }
  console.log(`cases: ${cases.length}`);
  for (const run of runs) {
    const pct = cases.length ? ((100 * run.passed) / cases.length).toFixed(1) : "0.0";
    console.log(`${run.path}: ${run.passed}/${cases.length} passed (${pct}%)${run.missing ? `, ${run.missing} missing` : ""}`);
  }
  console.log("\nper case:");
  for (const r of rows) console.log(`  ${String(r.id).padEnd(24)} ${r.marks.join("  ")}`);
  if (runs.length === 2) {
    const [a, b] = runs;
    const onlyA = rows.filter((r) => r.marks[0] === "pass" && r.marks[1] !== "pass").map((r) => r.id);
    const onlyB = rows.filter((r) => r.marks[1] === "pass" && r.marks[0] !== "pass").map((r) => r.id);
    console.log(`\nonly ${a.path} passed: ${onlyA.join(", ") || "none"}`);
    console.log(`only ${b.path} passed: ${onlyB.join(", ") || "none"}`);
    const verdict =
      a.passed === b.passed ? "tie" : a.passed > b.passed ? `${a.path} is ahead by ${a.passed - b.passed}` : `${b.path} is ahead by ${b.passed - a.passed}`;
    console.log(`verdict: ${verdict} (with ${cases.length} cases, a difference of one or two is noise)`);
  }
} else {
  console.log("usage: node score-evals.mjs prompts EVALS.jsonl | record ANSWERS.jsonl ID ANSWER | score EVALS.jsonl A.jsonl [B.jsonl]");
  process.exit(command ? 2 : 0);
}
