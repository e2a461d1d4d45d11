#!/usr/bin/env node
// One-page map of an unfamiliar repository: languages, layout, manifests and their scripts, docs,
// tests, CI, the files that change most and the biggest source files. Read-only.
// Usage: node repo-map.mjs [DIR]   (defaults to the current directory)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative } from "node:path";

const root = process.argv[2] ?? ".";
if (!existsSync(root) || !statSync(root).isDirectory()) {
  console.error(`repo-map: "${root}" is not a directory`);
  process.exit(2);
}
const git = (args) => {
  const r = spawnSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return r.status === 0 ? r.stdout.trim() : undefined;
};
const SKIP = new Set(["node_modules", ".git", "dist", "build", "target", ".venv", "venv", "__pycache__", ".next", "coverage"]);

let files = git(["ls-files"])?.split("\n").filter(Boolean);
const isGit = files !== undefined;
if (!files) {
  files = [];
  const walk = (dir) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (SKIP.has(e.name) || files.length > 50_000) continue;
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) walk(rel);
      else if (e.isFile()) files.push(rel);
    }
  };
  walk("");
}
const out = [];
const section = (title) => out.push("", `## ${title}`);

out.push(`# Repository map: ${relative(process.cwd(), root) || "."}`);
if (isGit) {
  const branch = git(["rev-parse", "--abbrev-ref", "HEAD"]);
  const count = git(["rev-list", "--count", "HEAD"]);
  const last = git(["log", "-1", "--format=%h %ad %s", "--date=short"])?.slice(0, 100);
  const first = git(["log", "--reverse", "--format=%ad", "--date=short"])?.split("\n")[0];
  out.push(`Branch ${branch}, ${count} commits since ${first}; last: ${last}`);
} else out.push("Not a git repository (files listed from disk).");
out.push(`${files.length} files`);

const LANG = {
  ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
  ".jsx": "JavaScript", ".py": "Python", ".go": "Go", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin",
  ".rb": "Ruby", ".php": "PHP", ".cs": "C#", ".c": "C", ".h": "C", ".cpp": "C++", ".hpp": "C++",
  ".swift": "Swift", ".sh": "Shell", ".sql": "SQL", ".md": "Markdown", ".css": "CSS", ".scss": "CSS",
  ".html": "HTML", ".vue": "Vue", ".svelte": "Svelte", ".yml": "YAML", ".yaml": "YAML", ".json": "JSON", ".toml": "TOML",
};
const langs = new Map();
for (const f of files) {
  const lang = LANG[extname(f).toLowerCase()];
  if (lang) langs.set(lang, (langs.get(lang) ?? 0) + 1);
}
section("Languages (files)");
out.push([...langs].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([l, n]) => `${l} ${n}`).join(", ") || "none recognised");

section("Top level");
const top = new Map();
for (const f of files) {
  const head = f.includes("/") ? `${f.split("/")[0]}/` : f;
  top.set(head, (top.get(head) ?? 0) + 1);
}
for (const [name, n] of [...top].sort((a, b) => a[0].localeCompare(b[0])).slice(0, 40)) {
  out.push(name.endsWith("/") ? `- ${name} (${n} files)` : `- ${name}`);
}

const read = (rel) => {
  try {
    return readFileSync(join(root, rel), "utf8");
  } catch {
    return undefined;
  }
};
section("Manifests and entry points");
const pkg = read("package.json");
if (pkg) {
  try {
    const p = JSON.parse(pkg);
    out.push(`- package.json: ${p.name ?? "(no name)"}${p.main ? `, main ${p.main}` : ""}${p.bin ? ", has bin" : ""}${p.workspaces ? ", workspaces" : ""}`);
    for (const [k, v] of Object.entries(p.scripts ?? {}).slice(0, 15)) out.push(`    npm run ${k}: ${v}`);
  } catch {
    out.push("- package.json (does not parse)");
  }
}
for (const m of ["pyproject.toml", "setup.py", "requirements.txt", "go.mod", "Cargo.toml", "pom.xml", "build.gradle", "Gemfile", "composer.json", "Dockerfile", "docker-compose.yml", "compose.yaml"]) {
  if (files.includes(m)) out.push(`- ${m}`);
}
const make = read("Makefile");
if (make) {
  const targets = [...make.matchAll(/^([A-Za-z][\w.-]*):(?!=)/gm)].map((m) => m[1]).slice(0, 15);
  out.push(`- Makefile targets: ${targets.join(", ")}`);
}
const ci = files.filter((f) => /^\.github\/workflows\/.+\.ya?ml$|^\.gitlab-ci\.yml$|^\.circleci\/|^Jenkinsfile$/.test(f));
if (ci.length) out.push(`- CI: ${ci.join(", ")}`);

section("Docs to read first");
const docs = files.filter((f) => /^(?:README|CONTRIBUTING|ARCHITECTURE|DEVELOPMENT|HACKING|AGENTS|CLAUDE)[^/]*$/i.test(f) || /^docs?\/[^/]+\.md$/i.test(f));
out.push(...(docs.length ? docs.slice(0, 15).map((d) => `- ${d}`) : ["- none found"]));

section("Tests");
const tests = files.filter((f) => /(?:^|\/)(?:tests?|__tests__|spec)\/|[._-](?:test|spec)\.[a-z]+$|(?:^|\/)test_[^/]+\.py$|_test\.go$/i.test(f));
const testDirs = new Map();
for (const t of tests) {
  const dir = t.includes("/") ? t.slice(0, t.lastIndexOf("/")) : ".";
  testDirs.set(dir, (testDirs.get(dir) ?? 0) + 1);
}
out.push(`${tests.length} test files`);
for (const [d, n] of [...testDirs].sort((a, b) => b[1] - a[1]).slice(0, 8)) out.push(`- ${d}/ (${n})`);

if (isGit) {
  section("Most changed files (last 300 commits)");
  const log = git(["log", "-300", "--name-only", "--format="]) ?? "";
  const churn = new Map();
  for (const f of log.split("\n").filter(Boolean)) churn.set(f, (churn.get(f) ?? 0) + 1);
  for (const [f, n] of [...churn].filter(([f]) => files.includes(f)).sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    out.push(`- ${f} (${n})`);
  }
}

section("Largest source files (lines)");
const sizes = [];
for (const f of files) {
  if (!LANG[extname(f).toLowerCase()] || /\.(?:json|md|ya?ml|toml)$|lock/i.test(f)) continue;
  const text = read(f);
  if (text !== undefined && text.length < 5_000_000) sizes.push([f, text.split("\n").length]);
}
for (const [f, n] of sizes.sort((a, b) => b[1] - a[1]).slice(0, 10)) out.push(`- ${f} (${n})`);

console.log(out.join("\n"));
