/**
 * Bundled software-development and github skills, followed end to end through the built CLI. The
 * fake LLM plays an agent that loads the skill with skill_view and then runs the commands the
 * skill's Procedure gives: each command is taken from the skill_view result (the skill's folder
 * and its SKILL.md text), so a skill whose instructions or script paths are wrong fails here. Each
 * test works on a real fixture in a temporary directory and checks the outcome on disk or in the
 * answer.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { skillDirsUnder } from "../../src/knowledge/skills/lint.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, reply, type ScriptedReply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
afterEach(() => {
  llm.respondWith(undefined);
});

type ChatMessage = { role: string; content: string | null };
const messagesOf = (request: RecordedRequest) => (request.body as { messages: ChatMessage[] }).messages;

/** What skill_view showed: the skill's folder and its SKILL.md text. */
interface SkillView {
  folder: string;
  body: string;
}

function parseView(result: string): SkillView {
  const folder = /^Folder: (.+)$/m.exec(result)?.[1];
  const at = result.indexOf("SKILL.md:\n");
  if (!folder || at < 0) throw new Error(`skill_view did not return a skill: ${result.slice(0, 300)}`);
  return { folder, body: result.slice(at + "SKILL.md:\n".length) };
}

/**
 * The first inline command in the skill's text that mentions `needle` (and `also`, when given),
 * with `<skill folder>` and the given placeholders filled in. Throws when the skill has no such
 * command or a placeholder is left, so a skill that changed its instructions fails the test.
 */
function commandIn(
  view: SkillView,
  needle: string,
  fill: Record<string, string> = {},
  also?: string,
): string {
  const spans = [...view.body.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "");
  const found = spans.find((s) => s.includes(needle) && (also === undefined || s.includes(also)));
  if (!found) throw new Error(`the skill gives no command with "${needle}"${also ? ` and "${also}"` : ""}`);
  let command = found.replaceAll("<skill folder>", view.folder);
  for (const [key, value] of Object.entries(fill)) command = command.replaceAll(key, value);
  const left = /<[a-z][\w -]*>/.exec(command);
  if (left) throw new Error(`placeholder ${left[0]} left in "${command}"`);
  return command;
}

interface StepContext {
  view: SkillView;
  /** Results of the tool calls after skill_view, in order. */
  results: string[];
  last: string;
}
type Step = (ctx: StepContext) => ScriptedReply;

/** Scripts the fake LLM: skill_view(skill) first, then one step per model turn. */
function followSkill(skill: string, steps: Step[]): void {
  llm.respondWith((request) => {
    const tools = messagesOf(request)
      .filter((m) => m.role === "tool")
      .map((m) => m.content ?? "");
    if (tools.length === 0) return reply().toolCall("skill_view", { name: skill });
    const view = parseView(tools[0] ?? "");
    const step = steps[tools.length - 1];
    if (!step) return reply().text("The script of this test ran out of steps.");
    const results = tools.slice(1);
    return step({ view, results, last: results.at(-1) ?? "" });
  });
}

const terminal = (command: string) => reply().toolCall("terminal", { command, timeout: 60 });

function setup(): { home: string; cwd: string } {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url));
  return h;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

function initRepo(cwd: string): void {
  git(cwd, "init", "-q", "-b", "main");
  git(cwd, "config", "user.email", "dev@example.com");
  git(cwd, "config", "user.name", "Dev");
  git(cwd, "config", "commit.gpgsign", "false");
}

function commitFile(cwd: string, path: string, content: string, message: string): string {
  mkdirSync(join(cwd, path, ".."), { recursive: true });
  writeFileSync(join(cwd, path), content);
  git(cwd, "add", path);
  git(cwd, "commit", "-q", "-m", message);
  return git(cwd, "rev-parse", "HEAD");
}

async function run(h: { home: string; cwd: string }, prompt: string, env?: Record<string, string>) {
  const result = await runHermes(["-z", prompt], { ...h, env, timeoutMs: 40_000 });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/**
 * A stand-in for a command-line tool on PATH (gh, npm) that answers the calls a skill makes with
 * recorded output, the way the real tool prints it, and fails loudly on anything else. `args`
 * ending in `*` matches any arguments that start with the rest. Every call is appended to
 * `<bin>/<name>.calls`.
 */
function standIn(
  h: { home: string },
  name: string,
  answers: Array<{ args: string; output: string; exit?: number }>,
): Record<string, string> {
  const bin = join(h.home, "..", "bin");
  mkdirSync(bin, { recursive: true });
  const cases = answers.map((a, i) => {
    writeFileSync(join(bin, `${name}-${i}.out`), a.output);
    const pattern = a.args.endsWith("*") ? `"${a.args.slice(0, -1)}"*` : `"${a.args}"`;
    return `  ${pattern}) cat "${join(bin, `${name}-${i}.out`)}"; exit ${a.exit ?? 0} ;;`;
  });
  const script = [
    "#!/bin/sh",
    `echo "$*" >> "${join(bin, `${name}.calls`)}"`,
    'case "$*" in',
    ...cases,
    `  *) echo "${name} stand-in: unexpected arguments: $*" >&2; exit 3 ;;`,
    "esac",
    "",
  ];
  writeFileSync(join(bin, name), script.join("\n"));
  chmodSync(join(bin, name), 0o755);
  return { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
}

describe("git-bisect", () => {
  it("finds the commit that broke the test and leaves the repository as it was", async () => {
    const h = setup();
    initRepo(h.cwd);
    const slug = (body: string) => `export function slugify(s) {\n  return ${body};\n}\n`;
    commitFile(h.cwd, "src/slug.mjs", slug(`s.trim().toLowerCase().replace(/\\s+/g, "-")`), "Add slugify");
    commitFile(
      h.cwd,
      "test/slug.test.mjs",
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { slugify } from "../src/slug.mjs";\n' +
        'test("slugs", () => assert.equal(slugify("  Hello World! "), "hello-world"));\n',
      "Test slugify",
    );
    commitFile(
      h.cwd,
      "src/slug.mjs",
      slug(`s.trim().toLowerCase().replace(/[\\s]+/g, "-").replace(/!/g, "")`),
      "Drop exclamation marks",
    );
    git(h.cwd, "tag", "v1.0");
    commitFile(h.cwd, "README.md", "# slug\n", "Add README");
    commitFile(h.cwd, "CHANGELOG.md", "## 1.0\n", "Add changelog");
    const bad = commitFile(
      h.cwd,
      "src/slug.mjs",
      slug(`s.trim().replace(/[^a-z\\s]/g, "").toLowerCase().replace(/\\s+/g, "-")`),
      "Strip punctuation generally",
    );
    commitFile(h.cwd, "README.md", "# slug\n\nMakes slugs.\n", "Describe the package");
    commitFile(h.cwd, "package.json", '{ "name": "slug", "version": "1.1.0" }\n', "Bump version");
    const head = git(h.cwd, "rev-parse", "HEAD");

    followSkill("git-bisect", [
      ({ view }) =>
        terminal(
          commandIn(view, "scripts/bisect.mjs", {
            "<good-ref>": "v1.0",
            "<check command>": "node --test test/slug.test.mjs",
          }),
        ),
      ({ last }) => {
        const line = /First bad commit: [0-9a-f]{40} .*/.exec(last)?.[0] ?? "no culprit found";
        return reply().text(line);
      },
    ]);
    const result = await run(h, "slugify broke after v1.0; find the commit");
    expect(result.stdout).toContain(`First bad commit: ${bad} Strip punctuation generally`);
    expect(existsSync(join(h.cwd, ".git", "BISECT_START"))).toBe(false);
    expect(git(h.cwd, "rev-parse", "HEAD")).toBe(head);
    expect(git(h.cwd, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  });
});

describe("release-notes", () => {
  it("writes notes for the range between two tags, grouped by kind with breaking changes first", async () => {
    const h = setup();
    initRepo(h.cwd);
    commitFile(h.cwd, "a.txt", "1\n", "chore: initial import");
    git(h.cwd, "tag", "v0.1.0");
    commitFile(h.cwd, "a.txt", "2\n", "feat(api): add /health endpoint");
    commitFile(h.cwd, "a.txt", "3\n", "fix: handle an empty request body");
    commitFile(h.cwd, "a.txt", "4\n", "docs: explain the configuration file");
    commitFile(h.cwd, "a.txt", "5\n", "feat!: drop support for Node 18");
    commitFile(h.cwd, "a.txt", "6\n", "Tidy up the build script");
    git(h.cwd, "tag", "v0.2.0");
    commitFile(h.cwd, "a.txt", "7\n", "feat: something not yet released");

    followSkill("release-notes", [
      ({ view }) =>
        terminal(
          `${commandIn(view, "scripts/release-notes.mjs", {
            "<from>": "v0.1.0",
            "<to>": "v0.2.0",
            "<name>": "v0.2.0",
          })} > RELEASE_NOTES.md`,
        ),
      () => reply().toolCall("read_file", { path: "RELEASE_NOTES.md" }),
      () => reply().text("Draft notes are in RELEASE_NOTES.md."),
    ]);
    await run(h, "draft release notes for v0.2.0");
    const notes = readFileSync(join(h.cwd, "RELEASE_NOTES.md"), "utf8");
    const section = (title: string) => notes.split(`### ${title}\n`)[1]?.split("### ")[0] ?? "";
    expect(notes.startsWith("## v0.2.0\n")).toBe(true);
    expect(notes.indexOf("### Breaking changes")).toBeLessThan(notes.indexOf("### Features"));
    expect(section("Breaking changes")).toContain("drop support for Node 18");
    expect(section("Features")).toContain("**api:** add /health endpoint");
    expect(section("Features")).not.toContain("Node 18");
    expect(section("Bug fixes")).toContain("handle an empty request body");
    expect(section("Documentation")).toContain("explain the configuration file");
    expect(section("Other changes")).toContain("Tidy up the build script");
    expect(notes).not.toContain("not yet released");
    expect(notes).not.toContain("initial import");
  });
});

describe("test-suite-triage", () => {
  it("groups the failures by cause, and after the first cause is fixed only the other group is left", async () => {
    const h = setup();
    const cart = [
      "const normalize = (items) => items.map((i) => i.toJSON());",
      "export const total = (items) => normalize(items).reduce((s, i) => s + i.price * i.qty, 0);",
      "export const count = (items) => normalize(items).reduce((s, i) => s + i.qty, 0);",
      "export const cheapest = (items) => normalize(items).sort((a, b) => a.price - b.price)[0];",
      "export const discounted = (amount, percent) => Math.round(amount * (1 - percent));",
      "",
    ].join("\n");
    mkdirSync(join(h.cwd, "src"));
    mkdirSync(join(h.cwd, "test"));
    writeFileSync(join(h.cwd, "src", "cart.mjs"), cart);
    writeFileSync(
      join(h.cwd, "test", "cart.test.mjs"),
      [
        'import test from "node:test";',
        'import assert from "node:assert/strict";',
        'import { cheapest, count, discounted, total } from "../src/cart.mjs";',
        "const items = [{ price: 300, qty: 2 }, { price: 150, qty: 1 }];",
        'test("total", () => assert.equal(total(items), 750));',
        'test("count", () => assert.equal(count(items), 3));',
        'test("cheapest", () => assert.equal(cheapest(items).price, 150));',
        'test("discount of 10 percent", () => assert.equal(discounted(1000, 10), 900));',
        "",
      ].join("\n"),
    );
    const report = join(h.cwd, "report.xml");
    const here = (command: string) => command.replaceAll("/tmp/report.xml", report);
    const runSuite: Step = ({ view }) => terminal(here(commandIn(view, "node --test --test-reporter=junit")));
    const group: Step = ({ view }) => terminal(here(commandIn(view, "scripts/group-failures.mjs")));

    followSkill("test-suite-triage", [
      runSuite,
      group,
      () => reply().toolCall("read_file", { path: "src/cart.mjs" }),
      () =>
        reply().toolCall("patch", {
          mode: "replace",
          path: "src/cart.mjs",
          old_string: "items.map((i) => i.toJSON())",
          new_string: "items.map((i) => ({ ...i }))",
        }),
      runSuite,
      group,
      ({ results }) => reply().text(`Before:\n${results[1]}\nAfter:\n${results.at(-1)}`),
    ]);
    const result = await run(h, "the cart tests are red, sort it out");
    const [before = "", after = ""] = result.stdout.split("After:");
    expect(before).toMatch(/4 failing tests in 2 groups \(format: junit\)/);
    expect(before).toMatch(/1\. \[3 tests\] [^\n]*toJSON is not a function/);
    expect(before).toMatch(/2\. \[1 test\][\s\S]*discount of 10 percent/);
    expect(after).toMatch(/1 failing test in 1 group/);
    expect(after).toContain("discount of 10 percent");
    expect(after).not.toContain("toJSON");
    // The fix is on disk: only the discount test fails when the suite runs again.
    const rerun = spawnSync(process.execPath, ["--test", "test/cart.test.mjs"], {
      cwd: h.cwd,
      encoding: "utf8",
    });
    expect(rerun.stdout).toMatch(/# pass 3\n# fail 1/);
  });
});

describe("merge-conflicts", () => {
  it("lists the conflict, resolves it keeping both sides, checks for markers and commits the merge", async () => {
    const h = setup();
    initRepo(h.cwd);
    const settings = (port: string, level: string) =>
      `port = ${port}\nhost = "0.0.0.0"\nlog_level = "${level}"\n`;
    commitFile(h.cwd, "settings.toml", settings("8080", "info"), "Add settings");
    git(h.cwd, "switch", "-q", "-c", "feature");
    commitFile(
      h.cwd,
      "settings.toml",
      `port = 8080\nhost = "0.0.0.0"\nlog_level = "debug"\n`,
      "Debug logging",
    );
    git(h.cwd, "switch", "-q", "main");
    commitFile(
      h.cwd,
      "settings.toml",
      `port = 9090\nhost = "127.0.0.1"\nlog_level = "info"\n`,
      "Move to 9090 on loopback",
    );
    const resolved = `port = 9090\nhost = "127.0.0.1"\nlog_level = "debug"\n`;

    followSkill("merge-conflicts", [
      () => terminal("git merge feature"),
      ({ view }) => terminal(commandIn(view, "scripts/list-conflicts.mjs")),
      () => reply().toolCall("read_file", { path: "settings.toml" }),
      () => reply().toolCall("write_file", { path: "settings.toml", content: resolved }),
      () => terminal("git add settings.toml"),
      ({ view }) => terminal(commandIn(view, "scripts/list-conflicts.mjs", {}, "--check")),
      ({ view }) => terminal(commandIn(view, "git commit --no-edit")),
      ({ results }) => reply().text(`Listed:\n${results[1]}\nChecked:\n${results[5]}`),
    ]);
    const result = await run(h, "merge the feature branch into main");
    expect(result.stdout).toContain("Operation in progress: merge");
    expect(result.stdout).toMatch(/1 conflicted file:\n- settings\.toml: 1 block at lines \d+-\d+/);
    expect(result.stdout).toContain("No conflict markers and nothing unmerged.");
    expect(readFileSync(join(h.cwd, "settings.toml"), "utf8")).toBe(resolved);
    expect(git(h.cwd, "rev-list", "--parents", "-n", "1", "HEAD").split(" ")).toHaveLength(3);
    expect(git(h.cwd, "status", "--porcelain")).toBe("");
    expect(git(h.cwd, "log", "-1", "--format=%s")).toBe("Merge branch 'feature'");
  });
});

describe("commit-hygiene", () => {
  it("stages one hunk of a file without a terminal and commits only that change", async () => {
    const h = setup();
    initRepo(h.cwd);
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    commitFile(h.cwd, "notes.txt", `${lines.join("\n")}\n`, "Add notes");
    const edited = [...lines];
    edited[2] = "line 3, reworded";
    edited[34] = "line 35, fixed typo";
    writeFileSync(join(h.cwd, "notes.txt"), `${edited.join("\n")}\n`);

    followSkill("commit-hygiene", [
      ({ view }) => terminal(commandIn(view, "scripts/stage-hunks.mjs", { "<file>": "notes.txt" })),
      ({ view, last }) => {
        // Pick the hunk that holds the typo fix, by reading the listing.
        const hunk = /--- hunk (\d+) of \d+:[^\n]*\n(?:\s+[-+][^\n]*\n)*?\s+\+line 35, fixed typo/.exec(
          last,
        )?.[1];
        return terminal(
          commandIn(
            view,
            "scripts/stage-hunks.mjs",
            { "<file>": "notes.txt", "1,3": hunk ?? "none" },
            "--stage",
          ),
        );
      },
      () => terminal(`git commit -m "Fix typo in line 35"`),
      () => reply().text("Committed the typo fix alone."),
    ]);
    await run(h, "commit just the typo fix");
    const committed = git(h.cwd, "show", "--format=%s", "HEAD");
    expect(committed).toContain("Fix typo in line 35");
    expect(committed).toContain("+line 35, fixed typo");
    expect(committed).not.toContain("reworded");
    expect(git(h.cwd, "diff")).toContain("+line 3, reworded");
  });
});

describe("github-ci-failures", () => {
  it("saves the failed steps' log with gh and cuts it down to the failing test", async () => {
    const h = setup();
    const log = [
      "test\tSet up job\t2026-11-20T10:00:00.0000000Z Current runner version: '2.320.0'",
      ...Array.from(
        { length: 200 },
        (_, i) => `test\tRun npm test\t2026-11-20T10:01:00.${i}Z ok ${i + 1} - case ${i + 1}`,
      ),
      "test\tRun npm test\t2026-11-20T10:01:05.1000000Z not ok 201 - parses ISO dates",
      "test\tRun npm test\t2026-11-20T10:01:05.2000000Z AssertionError: expected '2026-01-02' to equal '2026-01-01'",
      "test\tRun npm test\t2026-11-20T10:01:06.1000000Z ##[error]Process completed with exit code 1.",
    ].join("\n");
    const env = standIn(h, "gh", [
      {
        args: "run list --branch main --limit 5",
        output: "X\tparse dates\tci\tmain\tpush\t4242\t1m\t2026-11-20\n",
      },
      { args: "run view 4242 --log-failed", output: `${log}\n` },
    ]);
    const saved = join(h.cwd, "ci.log");

    followSkill("github-ci-failures", [
      ({ view }) => terminal(commandIn(view, "gh run list --branch", { "<branch>": "main" })),
      ({ view, last }) =>
        terminal(
          commandIn(view, "--log-failed > /tmp/ci.log", {
            "<run-id>": /\t(\d+)\t/.exec(last)?.[1] ?? "unknown",
            "/tmp/ci.log": saved,
          }),
        ),
      ({ view }) => terminal(commandIn(view, "scripts/ci-log-errors.mjs", { "/tmp/ci.log": saved })),
      ({ last }) => reply().text(last),
    ]);
    const result = await run(h, "why is CI red on main?", env);
    expect(readFileSync(saved, "utf8")).toBe(`${log}\n`);
    expect(result.stdout).toContain("== test / Run npm test");
    expect(result.stdout).toContain("> AssertionError: expected '2026-01-02' to equal '2026-01-01'");
    expect(result.stdout).toContain("> not ok 201 - parses ISO dates");
    expect(result.stdout).not.toContain("case 17");
  });
});

describe("dependency-upgrades", () => {
  it("turns npm outdated into a plan: patch bumps first, majors (and 0.x minors) one at a time", async () => {
    const h = setup();
    const outdated = {
      vitest: { current: "1.6.0", wanted: "1.6.1", latest: "2.1.0", type: "devDependencies" },
      yaml: { current: "2.4.1", wanted: "2.4.5", latest: "2.4.5", type: "dependencies" },
      commander: { current: "12.0.0", wanted: "12.1.0", latest: "12.1.0", type: "dependencies" },
      zod: { current: "0.9.0", wanted: "0.9.0", latest: "0.10.0", type: "dependencies" },
    };
    // npm outdated exits 1 when something is outdated, as the skill warns.
    const env = standIn(h, "npm", [{ args: "outdated --json", output: JSON.stringify(outdated), exit: 1 }]);
    const saved = join(h.cwd, "outdated.json");
    followSkill("dependency-upgrades", [
      ({ view }) => terminal(commandIn(view, "npm outdated --json >", { "/tmp/outdated.json": saved })),
      ({ view }) =>
        terminal(commandIn(view, "scripts/outdated-summary.mjs", { "/tmp/outdated.json": saved })),
      ({ last }) => reply().text(last),
    ]);
    const result = await run(h, "what should we upgrade?", env);
    const out = result.stdout;
    expect(out).toContain("4 outdated packages");
    const patch = out.indexOf("Patch");
    const minor = out.indexOf("Minor");
    const major = out.indexOf("Major");
    expect(patch).toBeGreaterThanOrEqual(0);
    expect(patch).toBeLessThan(minor);
    expect(minor).toBeLessThan(major);
    expect(out.slice(patch, minor)).toContain("yaml  2.4.1 -> 2.4.5");
    expect(out.slice(minor, major)).toContain("commander  12.0.0 -> 12.1.0");
    expect(out.slice(major)).toContain("vitest  1.6.0 -> 2.1.0  (dev, range allows 1.6.1)");
    expect(out.slice(major)).toContain("zod  0.9.0 -> 0.10.0");
  });
});

describe("security-dependency-audit", () => {
  it("summarises npm audit worst first with direct/transitive and the available fix", async () => {
    const h = setup();
    const audit = {
      auditReportVersion: 2,
      vulnerabilities: {
        mkdirp: {
          severity: "low",
          isDirect: true,
          via: ["minimist"],
          range: "0.4.1 - 0.5.1",
          fixAvailable: { name: "mkdirp", version: "1.0.4", isSemVerMajor: true },
        },
        minimist: {
          severity: "critical",
          isDirect: false,
          via: [
            {
              title: "Prototype Pollution in minimist",
              url: "https://github.com/advisories/GHSA-xvch-5gv4-984h",
            },
          ],
          range: "<0.2.4",
          fixAvailable: true,
        },
      },
    };
    const env = standIn(h, "npm", [{ args: "audit --json", output: JSON.stringify(audit), exit: 1 }]);
    const saved = join(h.cwd, "audit.json");
    followSkill("security-dependency-audit", [
      ({ view }) => terminal(commandIn(view, "npm audit --json >", { "/tmp/audit.json": saved })),
      ({ view }) => terminal(commandIn(view, "scripts/audit-summary.mjs", { "/tmp/audit.json": saved })),
      ({ last }) => reply().text(last),
    ]);
    const out = (await run(h, "are our dependencies safe?", env)).stdout;
    expect(out).toContain("2 vulnerable packages: 1 critical, 1 low");
    expect(out.indexOf("[critical] minimist <0.2.4, transitive")).toBeLessThan(out.indexOf("[low] mkdirp"));
    expect(out).toContain("Prototype Pollution in minimist");
    expect(out).toContain("fix: mkdirp@1.0.4 (major upgrade)");
  });
});

describe("codebase-onboarding", () => {
  it("maps a repository: scripts, docs, tests and the most changed files", async () => {
    const h = setup();
    initRepo(h.cwd);
    const scripts = { test: "node --test", build: "tsc -p ." };
    commitFile(
      h.cwd,
      "package.json",
      JSON.stringify({ name: "inventory", main: "src/index.js", scripts }),
      "Init",
    );
    commitFile(h.cwd, "README.md", "# Inventory\n", "Readme");
    commitFile(h.cwd, "src/index.js", "export const a = 1;\n", "Entry");
    for (let i = 2; i < 5; i++) commitFile(h.cwd, "src/stock.js", `export const n = ${i};\n`, `Stock ${i}`);
    commitFile(h.cwd, "test/stock.test.js", "// tests\n", "Tests");
    followSkill("codebase-onboarding", [
      ({ view }) => terminal(commandIn(view, "scripts/repo-map.mjs", { "<repo dir>": "." })),
      ({ last }) => reply().text(last),
    ]);
    const out = (await run(h, "I'm new to this repo, give me the lay of the land")).stdout;
    expect(out).toContain("package.json: inventory, main src/index.js");
    expect(out).toContain("npm run test: node --test");
    expect(out).toMatch(/## Docs to read first\n- README\.md/);
    expect(out).toMatch(/1 test files\n- test\/ \(1\)/);
    expect(out).toMatch(/## Most changed files[^\n]*\n- src\/stock\.js \(3\)/);
  });
});

describe("every bundled skill", () => {
  it("loads through skill_view with its Procedure and Verification sections", async () => {
    const h = setup();
    const names = skillDirsUnder(join(import.meta.dirname, "../../skills")).map((s) => basename(s.dir));
    expect(names.length).toBeGreaterThanOrEqual(19);
    llm.respondWith((request) => {
      if (messagesOf(request).some((m) => m.role === "tool")) return reply().text("read them all");
      const calls = reply();
      for (const name of names) calls.toolCall("skill_view", { name });
      return calls;
    });
    await run(h, "read every skill");
    const results = messagesOf(llm.chatRequests.at(-1) as RecordedRequest)
      .filter((m) => m.role === "tool")
      .map((m) => m.content ?? "");
    expect(results).toHaveLength(names.length);
    names.forEach((name, i) => {
      expect(results[i]).toContain(`Skill "${name}"`);
      expect(results[i]).toMatch(/^##\s+Procedure/m);
      expect(results[i]).toMatch(/^##\s+Verification/m);
    });
  });
});

describe("github-pr-workflow", () => {
  it("branches from the fetched base, pushes the topic branch and opens the PR with a filled-in body", async () => {
    const h = setup();
    const remote = join(h.home, "..", "origin.git");
    git(h.home, "init", "-q", "--bare", "-b", "main", remote);
    initRepo(h.cwd);
    commitFile(h.cwd, "config.js", "export const load = (text) => JSON.parse(text);\n", "Config loader");
    git(h.cwd, "remote", "add", "origin", remote);
    git(h.cwd, "push", "-q", "-u", "origin", "main");
    const mainBefore = git(remote, "rev-parse", "main");
    const env = standIn(h, "gh", [
      { args: "repo view --json defaultBranchRef -q .defaultBranchRef.name", output: "main\n" },
      { args: "pr create *", output: "https://github.com/acme/config/pull/7\n" },
    ]);
    const bodyPath = join(h.cwd, "..", "pr-body.md");
    const fill = { "<type>/<short-topic>": "fix/empty-config", "<default>": "main" };

    followSkill("github-pr-workflow", [
      ({ view }) => terminal(commandIn(view, "git fetch origin")),
      ({ view }) => terminal(commandIn(view, "gh repo view --json defaultBranchRef")),
      ({ view, last }) =>
        terminal(
          commandIn(
            view,
            "git switch -c",
            { ...fill, "<default>": last.match(/^main$/m)?.[0] ?? "?" },
            "origin/",
          ),
        ),
      () =>
        reply().toolCall("write_file", {
          path: "config.js",
          content: 'export const load = (text) => (text.trim() === "" ? {} : JSON.parse(text));\n',
        }),
      () => terminal('git commit -qam "Treat an empty config file as no settings"'),
      ({ view }) => terminal(commandIn(view, "git push -u origin HEAD")),
      () => reply().toolCall("skill_view", { name: "github-pr-workflow", file_path: "templates/pr-body.md" }),
      ({ last }) => {
        const body = last
          .slice(last.indexOf("## What"))
          .replace(/<!--[\s\S]*?-->/g, "")
          .replace("## What\n", "## What\n\nAn empty config file no longer crashes the loader.\n")
          .replace("`<test command>`", "`node --test`");
        return reply().toolCall("write_file", { path: bodyPath, content: body });
      },
      ({ view }) =>
        terminal(
          commandIn(view, "gh pr create", {
            ...fill,
            "<imperative summary>": "Treat an empty config file as no settings",
            "/tmp/pr-body.md": bodyPath,
          }),
        ),
      ({ last }) => reply().text(`Opened ${last.match(/https:\/\/\S+/)?.[0] ?? "nothing"}`),
    ]);
    const result = await run(h, "open a PR for the empty config fix", env);
    expect(result.stdout).toContain("Opened https://github.com/acme/config/pull/7");
    expect(git(remote, "log", "-1", "--format=%s", "fix/empty-config")).toBe(
      "Treat an empty config file as no settings",
    );
    expect(git(remote, "rev-parse", "main")).toBe(mainBefore);
    const calls = readFileSync(join(h.home, "..", "bin", "gh.calls"), "utf8");
    expect(calls).toContain(
      `pr create --base main --title Treat an empty config file as no settings --body-file ${bodyPath}`,
    );
    const body = readFileSync(bodyPath, "utf8");
    expect(body).toContain("An empty config file no longer crashes the loader.");
    expect(body).toMatch(/## Why[\s\S]*## Testing\n[\s\S]*`node --test` passes/);
    expect(body).not.toContain("<!--");
  });
});

describe("api-debugging", () => {
  it("reproduces a rejected request with the skill's curl command, reads the body, and fixes the payload", async () => {
    const h = setup();
    const seen: string[] = [];
    const server = createServer((req, res) => {
      let raw = "";
      req.on("data", (d: Buffer) => (raw += d.toString("utf8")));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${raw}`);
        const body = JSON.parse(raw || "{}") as { name?: unknown; quantity?: unknown };
        res.setHeader("content-type", "application/json");
        res.setHeader("x-request-id", "req-42");
        if (typeof body.quantity !== "number") {
          res.writeHead(422);
          res.end(JSON.stringify({ error: "validation failed", fields: { quantity: "must be a number" } }));
          return;
        }
        res.writeHead(201);
        res.end(JSON.stringify({ id: 7, ...body }));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const curl: Step = ({ view }) =>
        terminal(
          `cd ${h.cwd} && ${commandIn(view, "curl -sS -i -X POST", { "https://api.example.com": base })}`,
        );
      followSkill("api-debugging", [
        () =>
          reply().toolCall("write_file", {
            path: "body.json",
            content: '{"name": "bolt", "quantity": "3"}\n',
          }),
        curl,
        () =>
          reply().toolCall("write_file", { path: "body.json", content: '{"name": "bolt", "quantity": 3}\n' }),
        curl,
        ({ results }) => reply().text(`First:\n${results[1]}\nSecond:\n${results[3]}`),
      ]);
      const out = (await run(h, "POST /v1/items keeps failing, why?")).stdout;
      const [first = "", second = ""] = out.split("Second:");
      expect(first).toMatch(/HTTP\/1\.1 422/);
      expect(first).toContain("x-request-id: req-42");
      expect(first).toContain('"quantity":"must be a number"');
      expect(second).toMatch(/HTTP\/1\.1 201/);
      expect(second).toContain('"id":7');
      expect(seen).toEqual([
        'POST /v1/items application/json {"name": "bolt", "quantity": "3"}',
        'POST /v1/items application/json {"name": "bolt", "quantity": 3}',
      ]);
    } finally {
      server.close();
    }
  });
});
