/**
 * Several OS processes writing one state.db at once, as a gateway, a CLI chat and a cron run do.
 * The children run the store from the built library (`dist/lib/index.js`, which `npm test` builds
 * first) or, when it has not been built, from the TypeScript sources through tsx.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();
const ROOT = resolve(import.meta.dirname, "../../..");

/** The store module a child should import, and the node flags that make it importable. */
function storeEntry(): { url: string; execArgv: string[] } {
  const dist = join(ROOT, "dist/lib/index.js");
  if (existsSync(dist) && readFileSync(dist, "utf8").includes("openSessionStore")) {
    return { url: pathToFileURL(dist).href, execArgv: [] };
  }
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return {
    url: pathToFileURL(join(ROOT, "src/state/sqlite-store.ts")).href,
    execArgv: ["--import", pathToFileURL(tsx).href],
  };
}

const CHILD = `
import { createInterface } from "node:readline";
const [entry, path, shared, own, name, turnsArg, single] = process.argv.slice(2);
const { openSessionStore } = await import(entry);
const store = openSessionStore(path, { busyTimeoutMs: 50, retryBudgetMs: 60000 });
process.stdout.write("ready\\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;
const turns = Number(turnsArg);
for (let t = 0; t < turns; t++) {
  const turn = [
    { role: "user", content: name + " turn " + t + " question" },
    { role: "assistant", content: null, tool_calls: [{ id: name + "-" + t, type: "function", function: { name: "terminal", arguments: "{}" } }] },
    { role: "tool", content: name + " turn " + t + " output", tool_call_id: name + "-" + t, name: "terminal" },
    { role: "assistant", content: name + " turn " + t + " answer" },
  ];
  // The shared session gets each message as the turn produces it; the own session a batch per turn.
  for (const m of turn) await store.appendMessage(shared, m);
  if (single === "1") for (const m of turn) await store.appendMessage(own, m);
  else await store.appendMessages(own, turn);
  await store.recordUsage(shared, { inputTokens: 10, outputTokens: 1 });
}
await store.close();
process.stdout.write("done\\n");
`;

function waitFor(child: ChildProcess, word: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.split("\n").includes(word)) {
        child.stdout?.off("data", onData);
        resolvePromise();
      }
    };
    child.stdout?.on("data", onData);
    child.on("exit", (code) => {
      if (!out.split("\n").includes(word)) reject(new Error(`child exited ${code} before "${word}": ${err}`));
    });
  });
}

describe("several processes writing one state.db", () => {
  it("loses nothing: exact rows, counters and per-process order", { timeout: 120_000 }, async () => {
    const d = dir();
    const path = join(d, "state.db");
    const script = join(d, "child.mjs");
    writeFileSync(script, CHILD);
    const store = track(openSqliteStore(path));
    const shared = store.createSession({ source: "gateway" }).id;
    const names = ["alpha", "beta", "gamma"];
    const own = names.map((name) => store.createSession({ source: "cli", title: name }).id);
    const TURNS = 125; // 500 messages per process in the shared session, 500 in its own
    const { url, execArgv } = storeEntry();
    const children = names.map((name, i) =>
      spawn(
        process.execPath,
        [...execArgv, script, url, path, shared, own[i]!, name, String(TURNS), i === 0 ? "1" : "0"],
        {
          stdio: ["pipe", "pipe", "pipe"],
        },
      ),
    );
    await Promise.all(children.map((c) => waitFor(c, "ready")));
    for (const c of children) c.stdin?.write("go\n");
    await Promise.all(children.map((c) => waitFor(c, "done")));

    const messages = store.getMessages(shared);
    expect(messages).toHaveLength(names.length * TURNS * 4);
    expect(store.getSession(shared)).toMatchObject({
      messageCount: names.length * TURNS * 4,
      toolCallCount: names.length * TURNS,
      inputTokens: names.length * TURNS * 10,
      apiCallCount: names.length * TURNS,
    });
    for (const [i, name] of names.entries()) {
      const mine = messages.filter((m) => JSON.stringify(m).includes(name));
      expect(mine).toHaveLength(TURNS * 4);
      // Each process's messages keep the order it wrote them in.
      const expected = Array.from({ length: TURNS }, (_, t) => [
        `${name} turn ${t} question`,
        null,
        `${name} turn ${t} output`,
        `${name} turn ${t} answer`,
      ]).flat();
      expect(mine.map((m) => m.content)).toEqual(expected);
      expect(store.getMessages(own[i]!).map((m) => m.content)).toEqual(expected);
      expect(store.getSession(own[i]!)).toMatchObject({ messageCount: TURNS * 4, toolCallCount: TURNS });
    }
    expect(store.search({ query: "gamma answer", limit: 100 })).toHaveLength(100);
    const report = store.check();
    expect(report, JSON.stringify(report)).toEqual({ integrity: true, problems: [], fixed: [] });
  });
});
