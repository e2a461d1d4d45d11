/**
 * state.db faults through the built CLI: another process holding the lock for the whole start-up
 * and turn (the session is still saved, in full), and a damaged or 0-byte state.db (moved aside,
 * reported, and `hermes sessions repair --from` brings back what can be read).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

const LOCK_MS = 14_000;

/** Starts the lock holder and resolves once it holds the lock; `released` resolves with the time it let go. */
async function holdLock(
  path: string,
  ms: number,
): Promise<{ child: ChildProcess; released: Promise<number> }> {
  const worker = resolve(import.meta.dirname, "../support/state-lock-worker.ts");
  const child = spawn(process.execPath, ["--import", "tsx", worker, path, String(ms)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let onLine: (() => void) | undefined;
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    onLine?.();
  });
  const seen = (word: string) =>
    new Promise<number>((ok, fail) => {
      const check = () => {
        if (out.split("\n").includes(word)) ok(Date.now());
      };
      const prev = onLine;
      onLine = () => {
        prev?.();
        check();
      };
      child.on("exit", (code) => {
        if (!out.split("\n").includes(word)) fail(new Error(`lock worker exited ${code} before "${word}"`));
      });
      check();
    });
  await seen("locked");
  return { child, released: seen("released") };
}

function sessionsJson(stdout: string): Array<{ id: string; messageCount: number }> {
  return JSON.parse(stdout) as Array<{ id: string; messageCount: number }>;
}

describe("another process holds state.db", () => {
  it("for 14 s from start-up through a tool-calling turn: the run works, exits 0, and the session is saved in full", {
    timeout: 60_000,
  }, async () => {
    const { home, cwd } = tempHome();
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url));
    const path = join(home, "state.db");
    // A state.db as any earlier run leaves it (WAL mode, current schema).
    openSqliteStore(path).close();
    llm.enqueue(
      reply().toolCall("terminal", { command: "echo queued-$((6*7))" }),
      reply().text("The command printed queued-42."),
    );
    const lock = await holdLock(path, LOCK_MS);
    const started = Date.now();
    const run = await runHermes(["-q", "run the echo"], { home, cwd, timeoutMs: 45_000 });
    const ended = Date.now();
    const releasedAt = await lock.released;

    expect(run.code).toBe(0);
    expect(run.stdout).toContain("The command printed queued-42.");
    expect(run.stderr).toMatch(
      /state\.db is locked by another process; this session's history is kept in memory/,
    );
    expect(run.stderr).toMatch(/state\.db is free again: saved \d+ queued writes \(4 messages\)/);
    expect(run.stderr).not.toMatch(/could not be saved/);
    // The turn finished while the lock was held; the run waited for it and no longer.
    expect(releasedAt).toBeLessThanOrEqual(ended);
    expect(ended - started).toBeLessThan(LOCK_MS + 8000);
    expect(readdirSync(home).filter((f) => f.startsWith("state-unsaved-"))).toEqual([]);

    const list = await runHermes(["sessions", "list", "--json"], { home, cwd });
    const sessions = sessionsJson(list.stdout);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.messageCount).toBe(4);
    const show = await runHermes(["sessions", "show", sessions[0]!.id, "--json"], { home, cwd });
    const shown = JSON.parse(show.stdout) as {
      session: { endedAt: number | null };
      messages: Array<{ role: string; content: string | null }>;
    };
    expect(shown.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(shown.messages[0]!.content).toBe("run the echo");
    expect(shown.messages[2]!.content).toContain("queued-42");
    expect(shown.messages[3]!.content).toBe("The command printed queued-42.");
    expect(shown.session.endedAt).not.toBeNull();
  });
});

/** A good state.db with a few sessions, then a run of pages in the middle overwritten with garbage. */
function damagedStateDb(path: string): string[] {
  const store = openSqliteStore(path);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const s = store.createSession({ source: "cli", title: `old session ${i}` });
    ids.push(s.id);
    store.appendMessages(
      s.id,
      Array.from({ length: 60 }, (_, j) => ({
        role: "user" as const,
        content: `old s${i} m${j} ${"lorem ipsum ".repeat(40)}`,
      })),
    );
  }
  store.close();
  const bytes = readFileSync(path);
  // Garbage over every page holding session 3's messages 20-29 (the table's and the index's copies).
  for (let at = bytes.indexOf("old s3 m2"); at !== -1; at = bytes.indexOf("old s3 m2", at + 1)) {
    const page = Math.floor(at / 4096);
    if (page === 0) continue;
    for (let i = page * 4096; i < (page + 1) * 4096; i++) bytes[i] = (i * 31) % 251;
  }
  writeFileSync(path, bytes);
  return ids;
}

describe("an unreadable state.db", () => {
  it("with damaged pages: moved aside and reported, the run works, repair --from recovers the old sessions", async () => {
    const { home, cwd } = tempHome();
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url));
    const path = join(home, "state.db");
    const oldIds = damagedStateDb(path);
    llm.enqueue(reply().text("fresh answer"));
    const run = await runHermes(["-q", "hello"], { home, cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("fresh answer");
    const moved = readdirSync(home).filter((f) => /^state\.db\.corrupt-\d{8}T\d{6}Z$/.test(f));
    expect(moved).toHaveLength(1);
    const file = join(home, moved[0]!);
    expect(run.stderr).toContain(`its pages are damaged). It was moved aside to ${file}`);
    expect(run.stderr).toContain(`hermes sessions repair --from ${file}`);

    const repair = await runHermes(["sessions", "repair", "--from", file], { home, cwd });
    expect(repair.code).toBe(0);
    const counts =
      /sessions: (\d+) recovered, 0 skipped, \d+ unreadable\n\s+messages: (\d+) recovered, 0 skipped, (\d+) unreadable/.exec(
        repair.stdout,
      );
    expect(counts, repair.stdout + repair.stderr).not.toBeNull();
    expect(Number(counts![2])).toBeGreaterThan(200);
    expect(Number(counts![2])).toBeLessThan(360);
    expect(Number(counts![3])).toBeGreaterThan(0);
    const list = sessionsJson(
      (await runHermes(["sessions", "list", "--json", "--limit", "50"], { home, cwd })).stdout,
    );
    const ids = new Set(list.map((s) => s.id));
    // The new session and most old ones; the old ones are back under their own ids.
    expect(list.length).toBeGreaterThanOrEqual(5);
    expect(oldIds.filter((id) => ids.has(id)).length).toBeGreaterThanOrEqual(4);
  });

  it("0 bytes: moved aside and reported, the run works, and repair --from says nothing is recoverable", async () => {
    const { home, cwd } = tempHome();
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url));
    const path = join(home, "state.db");
    writeFileSync(path, "");
    // Written well before the run (a file created a moment ago may be another process's new database).
    utimesSync(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    llm.enqueue(reply().text("fine"));
    const run = await runHermes(["-q", "hi"], { home, cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("fine");
    const moved = readdirSync(home).filter((f) => f.startsWith("state.db.corrupt-"));
    expect(moved).toHaveLength(1);
    expect(run.stderr).toContain("empty (0 bytes)");
    const repair = await runHermes(["sessions", "repair", "--from", join(home, moved[0]!)], { home, cwd });
    expect(repair.code).toBe(1);
    expect(repair.stdout).toMatch(/Nothing recovered: .* is empty \(0 bytes\)/);
    const list = sessionsJson((await runHermes(["sessions", "list", "--json"], { home, cwd })).stdout);
    expect(list).toHaveLength(1);
  });
});
