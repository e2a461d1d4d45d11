import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, sessionStorePath } from "../../src/state/sqlite-store.js";
import { runHermes, tempHome } from "../support/cli.js";
import { createPythonStateDb } from "../support/python-state-db.js";

const DAY = 86_400;
const now = () => Date.now() / 1000;

interface Seeded {
  home: string;
  cwd: string;
  ids: { deploy: string; grocery: string; old: string };
}

/** A home whose state.db holds three sessions: two recent ones and one ended 200 days ago. */
function seededHome(at = tempHome()): Seeded {
  let clock = now();
  const store = openSqliteStore(sessionStorePath(at.home), { now: () => clock });
  try {
    const deploy = store.createSession({
      source: "cli",
      model: "test/model-a",
      title: "Deploy pipeline",
      startedAt: now() - 3600,
    });
    store.appendMessages(deploy.id, [
      { role: "user", content: 'Why does deploy.sh fail with an "unbalanced quote? Also foo* and a:b.' },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "terminal", arguments: JSON.stringify({ command: "bash -n deploy.sh" }) },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        name: "terminal",
        content: "deploy.sh: line 3: unexpected EOF",
      },
      { role: "assistant", content: "Line 3 has an unbalanced quote; the -x flag shows it." },
    ]);
    store.recordUsage(deploy.id, { inputTokens: 1200, outputTokens: 300, costUsd: 0.0123 });
    const grocery = store.createSession({ source: "telegram", title: "Groceries", startedAt: now() - 600 });
    store.appendMessages(grocery.id, [
      { role: "user", content: "Add apples and pears to the list" },
      { role: "assistant", content: "Added apples and pears." },
    ]);
    // Started, last active and ended 200 days ago: what prune removes.
    clock = now() - 200 * DAY;
    const old = store.createSession({ source: "cli", title: "Ancient" });
    store.appendMessage(old.id, { role: "user", content: "an old question" });
    store.endSession(old.id, "user_exit");
    clock = now();
    return { ...at, ids: { deploy: deploy.id, grocery: grocery.id, old: old.id } };
  } finally {
    store.close();
  }
}

const hermes = (h: { home: string; cwd: string }, ...args: string[]) => runHermes(["sessions", ...args], h);

async function listedIds(h: { home: string; cwd: string }): Promise<string[]> {
  const r = await hermes(h, "list", "--json");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as Array<{ id: string }>).map((s) => s.id);
}

describe("hermes sessions: reading", () => {
  it("lists sessions as a table and as JSON", async () => {
    const h = seededHome();
    const table = await hermes(h, "list");
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+SOURCE\s+MODEL\s+MSGS\s+ACTIVE\s+PREVIEW$/);
    expect(lines[1]).toContain(h.ids.grocery);
    expect(table.stdout).toMatch(
      new RegExp(`${h.ids.deploy}\\s+Deploy pipeline\\s+cli\\s+test/model-a\\s+4\\s`),
    );
    expect(table.stdout).not.toContain("\x1b[");

    const sessions = JSON.parse((await hermes(h, "list", "--json")).stdout) as Array<Record<string, unknown>>;
    expect(sessions.map((s) => s["id"])).toEqual([h.ids.grocery, h.ids.deploy, h.ids.old]);
    expect(sessions[1]).toMatchObject({ title: "Deploy pipeline", messageCount: 4, source: "cli" });

    const telegram = JSON.parse(
      (await hermes(h, "list", "--source", "telegram", "--json")).stdout,
    ) as unknown[];
    expect(telegram).toHaveLength(1);
    const limited = await hermes(h, "list", "--limit", "1");
    expect(limited.stdout.trim().split("\n")).toHaveLength(2);
    expect(limited.stderr).toContain("--limit");
    expect((await hermes(h, "list", "--limit", "zero")).code).toBe(2);
    expect((await hermes(h)).stdout).toBe(table.stdout);
  });

  it("shows a session by id or title, with tool calls on one line", async () => {
    const h = seededHome();
    const byId = await hermes(h, "show", h.ids.deploy);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain('"Deploy pipeline"');
    expect(byId.stdout).toMatch(/cost\s+\$0\.0123/);
    expect(byId.stdout).toContain("→ terminal bash -n deploy.sh");
    expect(byId.stdout).toMatch(/tool terminal ⎿ deploy\.sh: line 3: unexpected EOF/);
    expect(byId.stdout).toContain("Line 3 has an unbalanced quote");

    const byTitle = await hermes(h, "show", "Deploy pipeline", "--json");
    const parsed = JSON.parse(byTitle.stdout) as { session: { id: string }; messages: unknown[] };
    expect(parsed.session.id).toBe(h.ids.deploy);
    expect(parsed.messages).toHaveLength(4);
  });

  it("searches with search-syntax characters taken literally", async () => {
    const h = seededHome();
    for (const query of ['"unbalanced', "foo*", "a:b"]) {
      const r = await hermes(h, "search", query);
      expect(r.code, `${query}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(h.ids.deploy);
      expect(r.stdout).not.toMatch(/>>>|<<</);
    }
    const dash = await hermes(h, "search", "--", "-x");
    expect(dash.code).toBe(0);
    const json = await hermes(h, "search", "apples", "--json");
    const hits = JSON.parse(json.stdout) as Array<{ sessionId: string; snippet: string }>;
    expect(hits.map((hit) => hit.sessionId)).toContain(h.ids.grocery);
    // Each hit shows its own message's text.
    const pears = JSON.parse((await hermes(h, "search", "pears", "--json")).stdout) as Array<{
      snippet: string;
    }>;
    expect(pears.map((hit) => hit.snippet.replace(/>>>|<<</g, "")).sort()).toEqual([
      "Add apples and pears to the list",
      "Added apples and pears.",
    ]);
    const filtered = JSON.parse((await hermes(h, "search", "apples", "--source", "cli", "--json")).stdout);
    expect(filtered).toEqual([]);
    expect((await hermes(h, "search", "nothingmatchesthis")).stdout).toContain("No messages match");
  });

  it("prints stats and checks a healthy file", async () => {
    const h = seededHome();
    const stats = await hermes(h, "stats");
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/Sessions\s+3/);
    expect(stats.stdout).toMatch(/Messages\s+7/);
    const json = JSON.parse((await hermes(h, "stats", "--json")).stdout) as { sessions: number };
    expect(json.sessions).toBe(3);
    const check = await hermes(h, "repair", "--check");
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain("Integrity: ok");
    expect(check.stdout).toContain("No problems found.");
  });

  it("uses a profile's home with -p, before or after the subcommand", async () => {
    const root = tempHome();
    const profileHome = join(root.home, ".hermes", "profiles", "work");
    mkdirSync(profileHome, { recursive: true });
    const seeded = seededHome({ home: profileHome, cwd: root.cwd });
    const env = { HERMES_HOME: "" };
    const after = await runHermes(["sessions", "list", "--json", "-p", "work"], { ...root, env });
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toHaveLength(3);
    const before = await runHermes(["-p", "work", "sessions", "show", seeded.ids.deploy], { ...root, env });
    expect(before.code, before.stderr).toBe(0);
    expect((await runHermes(["sessions", "list", "-p", "../x"], { ...root, env })).code).toBe(2);
  });
});

describe("hermes sessions: export", () => {
  it("writes one JSONL line per session in Python Hermes's shape, to a file or stdout", async () => {
    const h = seededHome();
    const out = join(h.cwd, "export.jsonl");
    const r = await hermes(h, "export", out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Exported 3 sessions to ${out}`);
    const lines = readFileSync(out, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    const rows = lines.map(
      (l) => JSON.parse(l) as Record<string, unknown> & { messages: Array<Record<string, unknown>> },
    );
    const deploy = rows.find((row) => row["id"] === h.ids.deploy);
    expect(deploy).toMatchObject({ source: "cli", title: "Deploy pipeline", message_count: 4 });
    expect(typeof deploy?.["started_at"]).toBe("number");
    expect(deploy?.messages).toHaveLength(4);
    expect(deploy?.messages[0]).toMatchObject({ session_id: h.ids.deploy, role: "user" });
    expect(deploy?.messages[1]?.["tool_calls"]).toEqual([expect.objectContaining({ id: "call_1" })]);
    expect(deploy?.messages[2]).toMatchObject({ tool_name: "terminal", tool_call_id: "call_1" });
    expect(readdirSync(h.cwd).filter((f) => f.endsWith(".tmp"))).toEqual([]);

    const piped = await hermes(h, "export", "-");
    expect(piped.code).toBe(0);
    const pipedLines = piped.stdout.trimEnd().split("\n");
    expect(pipedLines).toHaveLength(3);
    for (const line of pipedLines) expect(() => JSON.parse(line)).not.toThrow();

    const one = await hermes(h, "export", "-", "--session-id", "Groceries");
    const only = one.stdout.trimEnd().split("\n");
    expect(only).toHaveLength(1);
    expect(JSON.parse(only[0] ?? "")).toMatchObject({ id: h.ids.grocery });
    const bySource = await hermes(h, "export", "-", "--source", "telegram");
    expect(bySource.stdout.trimEnd().split("\n")).toHaveLength(1);
    expect((await hermes(h, "export", "-", "--session-id", "nope")).code).toBe(1);
  });
});

describe("hermes sessions: changes", () => {
  it("renames a session and refuses a title another session has", async () => {
    const h = seededHome();
    const renamed = await hermes(h, "rename", h.ids.grocery, "Weekly", "shop");
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain('"Weekly shop"');
    expect(JSON.parse((await hermes(h, "show", "Weekly shop", "--json")).stdout).session.id).toBe(
      h.ids.grocery,
    );
    const taken = await hermes(h, "rename", h.ids.grocery, "Deploy pipeline");
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/Deploy pipeline/);
    expect(JSON.parse((await hermes(h, "show", h.ids.grocery, "--json")).stdout).session.title).toBe(
      "Weekly shop",
    );
  });

  it("deletes with -y and refuses without it when stdin is not a terminal", async () => {
    const h = seededHome();
    const refused = await hermes(h, "delete", h.ids.grocery);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("-y");
    expect(await listedIds(h)).toContain(h.ids.grocery);
    const deleted = await hermes(h, "delete", h.ids.grocery, "-y");
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain("2 messages");
    expect(await listedIds(h)).not.toContain(h.ids.grocery);
  });

  it("prunes old ended sessions only with -y", async () => {
    const h = seededHome();
    const refused = await hermes(h, "prune");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("pass -y");
    expect(await listedIds(h)).toHaveLength(3);
    const pruned = await hermes(h, "prune", "-y");
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain("Pruned 1 session");
    expect(await listedIds(h)).toEqual([h.ids.grocery, h.ids.deploy]);
    const nothing = await hermes(h, "prune", "--older-than", "30");
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toContain("nothing to prune");
  });

  it("optimizes the database", async () => {
    const h = seededHome();
    const r = await hermes(h, "optimize");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Optimized: .+ → .+/m);
    expect(await listedIds(h)).toHaveLength(3);
  });
});

describe("hermes sessions: failures", () => {
  it("says which reference matched nothing", async () => {
    const h = seededHome();
    for (const args of [
      ["show", "nope"],
      ["delete", "nope", "-y"],
      ["rename", "nope", "x"],
    ]) {
      const r = await hermes(h, ...args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('No session matches "nope". Try `hermes sessions list`.');
    }
  });

  it("reports a corrupt state.db, exits 1 and leaves its bytes alone", async () => {
    const h = tempHome();
    const path = sessionStorePath(h.home);
    const garbage = randomBytes(8192);
    writeFileSync(path, garbage);
    for (const args of [
      ["list"],
      ["show", "x"],
      ["search", "x"],
      ["stats"],
      ["repair", "--check"],
      ["delete", "x", "-y"],
    ]) {
      const r = await hermes(h, ...args);
      expect(r.code, `${args.join(" ")}: ${r.stdout}`).toBe(1);
      expect(r.stderr).toMatch(/^hermes sessions: .+/m);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const insights = await runHermes(["insights"], h);
    expect(insights.code).toBe(1);
    expect(readFileSync(path).equals(garbage)).toBe(true);
  });

  it('says "No sessions yet." without creating state.db', async () => {
    const h = tempHome();
    for (const args of [
      ["list"],
      ["stats"],
      ["search", "x"],
      ["prune", "-y"],
      ["optimize"],
      ["repair", "--check"],
    ]) {
      const r = await hermes(h, ...args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("No sessions yet.");
    }
    expect((await hermes(h, "list", "--json")).stdout.trim()).toBe("[]");
    expect((await hermes(h, "show", "x")).code).toBe(1);
    const insights = await runHermes(["insights"], h);
    expect(insights.stdout).toContain("No sessions yet.");
    expect(readdirSync(h.home).filter((f) => f.startsWith("state.db"))).toEqual([]);
  });

  it("answers unknown subcommands and bad options with exit 2", async () => {
    const h = seededHome();
    expect((await hermes(h, "frobnicate")).code).toBe(2);
    expect((await hermes(h, "prune", "--older-than", "-3")).code).toBe(2);
    const help = await hermes(h, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("export");
  });
});

describe("hermes insights", () => {
  it("prints totals, tools, models, sources and activity, or the JSON object", async () => {
    const h = seededHome();
    const text = await runHermes(["insights"], h);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("last 30 days");
    expect(text.stdout).toMatch(/Sessions\s+2/);
    expect(text.stdout).toMatch(/Top tools\n\s+terminal\s+1\s+█+/);
    expect(text.stdout).toContain("test/model-a");
    expect(text.stdout).toContain("$0.0123");
    expect(text.stdout).toContain("telegram");
    expect(text.stdout).toMatch(/Activity/);

    const json = await runHermes(["insights", "--json", "--days", "365"], h);
    const insights = JSON.parse(json.stdout) as {
      sessions: number;
      tools: Array<{ name: string; calls: number }>;
    };
    expect(insights.sessions).toBe(3);
    expect(insights.tools).toEqual([{ name: "terminal", calls: 1 }]);
    const cli = JSON.parse((await runHermes(["insights", "--json", "--source", "telegram"], h)).stdout);
    expect(cli.sessions).toBe(1);
    expect((await runHermes(["insights", "--days", "0"], h)).code).toBe(2);
  });
});

describe("hermes sessions on a state.db written by Python Hermes", () => {
  it("lists, shows, searches, exports, checks and reports on it without changing its rows", async () => {
    const h = tempHome();
    const path = sessionStorePath(h.home);
    const { sessionIds } = createPythonStateDb(path);
    // A reader may leave an empty -wal (and a -shm) beside the file; the data must not change.
    const bytes = () =>
      ["", "-wal"].map((suffix) =>
        existsSync(path + suffix) ? readFileSync(path + suffix).toString("hex") : "",
      );
    const before = bytes();
    const [parser, , telegram] = sessionIds;
    const list = await hermes(h, "list", "--json");
    expect(list.code, list.stderr).toBe(0);
    const listed = (JSON.parse(list.stdout) as Array<{ id: string }>).map((s) => s.id);
    expect([...listed].sort()).toEqual([...sessionIds].sort());

    const show = await hermes(h, "show", parser ?? "");
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('"Refactor the parser"');
    expect(show.stdout).toMatch(/→ read_file /);
    // A lineage's base title finds its newest session, as in Python Hermes.
    const newest = await hermes(h, "show", "Refactor the parser", "--json");
    expect(JSON.parse(newest.stdout).session.title).toBe("Refactor the parser #2");

    const cjk = await hermes(h, "search", "今天天气", "--json");
    expect(cjk.code, cjk.stderr).toBe(0);
    expect((JSON.parse(cjk.stdout) as Array<{ sessionId: string }>).map((hit) => hit.sessionId)).toContain(
      telegram,
    );

    const exported = await hermes(h, "export", "-");
    const rows = exported.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; message_count: number; messages: unknown[] });
    expect(rows.map((r) => r.id).sort()).toEqual([...sessionIds].sort());

    const check = await hermes(h, "repair", "--check");
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain("Integrity: ok");
    const insights = await runHermes(["insights", "--json", "--days", "100000"], h);
    expect(insights.code, insights.stderr).toBe(0);
    expect(JSON.parse(insights.stdout).sessions).toBe(sessionIds.length);
    expect(bytes()).toEqual(before);
  });
});
