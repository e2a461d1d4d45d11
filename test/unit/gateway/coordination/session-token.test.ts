/**
 * Session writes carry their chat claim's fencing token (chat-fence.ts `fenceStore`, wired by
 * `ChatRelay.fenceSession` and the API server's `fenceParts`): the claim is read before the gate,
 * so a write made under a claim is checked by the database against that claim even when it
 * reaches the database after a take-over. On PostgreSQL, through the router and the chat relay:
 * instance A's answer passes its gate, its statement is held up on the way to the database while
 * A is cut off and B takes the chat over; when the statement arrives, the database refuses it,
 * A's turn stops and sends nothing, and the session holds B's turn only. A real process stopped
 * with SIGSTOP between its gates and the database (with and without the token), the PostgreSQL
 * backend's own store through the wrapper, and the wrapper on its own: what is fenced, with which
 * claim, and what is left as it was (SQLite, one instance).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { claimGate, fenceParts, fenceStore } from "../../../../src/gateway/coordination/chat-fence.js";
import { openStateBackend } from "../../../../src/knowledge/state-backend.js";
import {
  type ChatClaim,
  ChatClaimLostError,
  type ClaimFence,
  type Coordinator,
  localCoordinator,
} from "../../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openPgSessionStore } from "../../../../src/state/postgres/session-store.js";
import { openSessionStore } from "../../../../src/state/sqlite-store.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { FAST_COORDINATION as FAST } from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { say } from "../../../support/scripted-transport.js";

const WORKER = resolve(import.meta.dirname, "../../../support/session-token-worker.ts");

/** `db` whose statements matching `which` wait while held (a slow or cut link to the database). */
function holdable(db: PgDatabase) {
  let which: ((sql: string) => boolean) | undefined;
  const waiters: Array<() => void> = [];
  const wrapped = new Proxy(db, {
    get(target, prop) {
      if (prop === "query")
        return async (sql: string, params?: unknown[]) => {
          while (which?.(sql)) await new Promise<void>((r) => waiters.push(r));
          return target.query(sql, params);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    db: wrapped,
    hold: (match: (sql: string) => boolean = () => true) => {
      which = match;
    },
    open: () => {
      which = undefined;
      for (const w of waiters.splice(0)) w();
    },
    waiting: () => waiters.length,
  };
}

/** A claim as a test drives it. */
function claimFor(key: string, token: string | undefined) {
  const controller = new AbortController();
  let valid = true;
  const claim: ChatClaim = {
    key,
    valid: () => valid,
    ensure: async () => {
      if (controller.signal.aborted) throw controller.signal.reason;
    },
    lost: controller.signal,
    release: async () => undefined,
    ...(token ? { fence: { key, token } } : {}),
  };
  return {
    claim,
    lose() {
      valid = false;
      controller.abort(new ChatClaimLostError(key, "taken over"));
    },
  };
}

describe("fenceStore", () => {
  /** A store that can fence: records each call with the token of the view it went through. */
  function recording() {
    const calls: string[] = [];
    const views: ClaimFence[] = [];
    const make = (fence?: ClaimFence) => ({
      appendMessage: async (id: string) => {
        calls.push(`append ${id} ${fence?.token ?? "unfenced"}`);
        return 1;
      },
      getSession: async (id: string) => {
        calls.push(`get ${id} ${fence?.token ?? "unfenced"}`);
        return null;
      },
      fencedBy(f: ClaimFence) {
        views.push(f);
        return make(f);
      },
    });
    return { store: make(), calls, views };
  }

  it("sends each write through the view of the claim held when it was made; reads and claimless writes unfenced", async () => {
    const { store, calls, views } = recording();
    let current: ChatClaim | undefined;
    let verdict: Promise<void> | undefined;
    const fenced = fenceStore(
      store,
      () => verdict,
      () => current,
    );
    await fenced.appendMessage("s1");
    const one = claimFor("telegram:1", "t1");
    current = one.claim;
    await fenced.appendMessage("s2");
    await fenced.appendMessage("s3");
    await fenced.getSession("s3");
    const two = claimFor("telegram:1", "t2");
    current = two.claim;
    await fenced.appendMessage("s4");
    expect(calls).toEqual([
      "append s1 unfenced",
      "append s2 t1",
      "append s3 t1",
      "get s3 unfenced",
      "append s4 t2",
    ]);
    // One view per claim, made once.
    expect(views.map((v) => v.token)).toEqual(["t1", "t2"]);
  });

  it("reads the claim before the gate: a write that waited for a claim lost meanwhile still carries it", async () => {
    const { store, calls } = recording();
    const one = claimFor("slack:C1", "t1");
    let current: ChatClaim | undefined = one.claim;
    let confirm!: () => void;
    const fenced = fenceStore(
      store,
      () => new Promise<void>((r) => (confirm = r)),
      () => current,
    );
    const writing = fenced.appendMessage("s1");
    // The claim is lost and forgotten here while the write waits (as the relay drops it).
    one.lose();
    current = undefined;
    confirm();
    await writing;
    // Made under t1, checked against t1: the database refuses it, never an unfenced write.
    expect(calls).toEqual(["append s1 t1"]);
  });

  it("leaves a store that cannot fence (SQLite) and a claim without a token (one instance) as they were", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-token-"));
    try {
      const sqlite = openSessionStore(join(dir, "state.db"));
      const local = await localCoordinator().claimChat("telegram:5");
      if (!("claimed" in local)) throw new Error("not claimed");
      expect(local.claimed.fence).toBeUndefined();
      const parts = fenceParts({ store: sqlite }, claimGate(local.claimed), () => local.claimed);
      const s = await parts.store!.createSession({ source: "telegram" });
      await parts.store!.appendMessage(s.id, { role: "user", content: "hi" });
      expect((await sqlite.getMessages(s.id)).map((m) => m.content)).toEqual(["hi"]);
      // A lost claim still stops the writes at the gate.
      const lost = claimFor("telegram:5", undefined);
      const gatedStore = fenceParts({ store: sqlite }, claimGate(lost.claim), () => lost.claim).store!;
      lost.lose();
      await expect(gatedStore.appendMessage(s.id, { role: "user", content: "no" })).rejects.toBeInstanceOf(
        ChatClaimLostError,
      );
      expect(await sqlite.getMessages(s.id)).toHaveLength(1);
      sqlite.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresSkipReason)(
  "a session write that passed its gate just before its instance stalled",
  () => {
    let pg: PostgresFixture;
    const dbs: PgDatabase[] = [];
    const coordinators: Coordinator[] = [];
    let running: Instances | undefined;
    beforeAll(async () => {
      pg = await startPostgres();
    }, 60_000);
    afterAll(async () => {
      await running?.stop();
      for (const c of coordinators) await c.close().catch(() => {});
      for (const db of dbs) await db.close().catch(() => {});
      await pg?.dispose();
    });

    async function open(url: string): Promise<PgDatabase> {
      const db = await openPgDatabase(url, { max: 4 });
      dbs.push(db);
      return db;
    }

    it("the PostgreSQL backend's own session store fences through the gateway's wrapper (the runner's wiring)", async () => {
      const url = await pg.createDatabase();
      const home = mkdtempSync(join(tmpdir(), "hermes-token-home-"));
      const config = defaultConfig();
      config.state = { ...config.state, backend: "postgres" } as typeof config.state;
      const backend = await openStateBackend(home, config, { env: { HERMES_DATABASE_URL: url } });
      try {
        const result = await backend.coordinator.claimChat("telegram:42");
        if (!("claimed" in result)) throw new Error("not claimed");
        const claim = result.claimed;
        const store = fenceParts({ store: backend.openSessions() }, claimGate(claim), () => claim).store!;
        const s = await store.createSession({ source: "telegram" });
        await store.appendMessage(s.id, { role: "user", content: "landed" });
        // Another instance's take-over, as the database sees it: a new token on the claim row.
        const admin = await open(url);
        await admin.query("UPDATE coord_chat_claims SET holder = 'other', token = 'other' WHERE key = $1", [
          "telegram:42",
        ]);
        await expect(
          store.appendMessage(s.id, { role: "assistant", content: "late" }),
        ).rejects.toBeInstanceOf(ChatClaimLostError);
        expect(claim.lost.aborted).toBe(true);
        expect((await backend.openSessions().getMessages(s.id)).map((m) => m.content)).toEqual(["landed"]);
      } finally {
        await backend.close();
        rmSync(home, { recursive: true, force: true });
      }
    });

    it("is refused by the database when it arrives after the take-over: nothing stored or sent, B's turn intact", async () => {
      const url = await pg.createDatabase();
      await migrate(await open(url), MIGRATIONS);
      const aLink = holdable(await open(url));
      const aStoreLink = holdable(await open(url));
      const aLog: string[] = [];
      const a = await openPgCoordinator(
        aLink.db,
        { host: "a", pid: 1, instanceId: "a" },
        { ...FAST, log: (l) => aLog.push(l) },
      );
      const b = await openPgCoordinator(await open(url), { host: "b", pid: 2, instanceId: "b" }, FAST);
      coordinators.push(a, b);
      const aStore = await openPgSessionStore(aStoreLink.db);
      const bStore = await openPgSessionStore(await open(url));
      const config = {
        display: { ...defaultConfig().display, busy_input_mode: "queue", tool_progress: "off" },
      };
      running = startInstances(["a", "b"], {
        coordinators: [a, b],
        config,
        sharedIndex: true,
        stores: [aStore, bStore],
      });
      const [ia, ib] = running.list as [Instance, Instance];

      let answer!: () => void;
      ia.model.push(say("answer one"), new Promise<void>((r) => (answer = r)));
      ib.model.push(say("answer two"));
      ia.adapter.from("100", "one");
      await until(() => ia.model.requests.length === 1, "A's model call");
      // A's answer arrives while A holds the chat (its gate passes), but its append is held up on
      // the way to the database...
      aStoreLink.hold((sql) => sql.includes("hermes_append_messages"));
      answer();
      await until(() => aStoreLink.waiting() > 0, "A's append on its way");
      // ...and A stalls past the TTL: B takes the chat over and answers.
      aLink.hold();
      ib.adapter.from("100", "two");
      await until(() => ib.adapter.texts().includes("answer two"), "B's answer", 15_000);
      // A's append reaches the database now: refused, and A's turn stops at once.
      aStoreLink.open();
      await until(
        () => aLog.some((l) => /lost chat .*database refused a session write/.test(l)),
        "A's refusal",
      );
      aLink.open();
      await new Promise((r) => setTimeout(r, 500));
      expect(ia.adapter.texts().some((t) => t.includes("answer one"))).toBe(false);
      expect(ia.adapter.texts().some((t) => t.includes("went wrong"))).toBe(false);
      const sessions = await bStore.listSessions({});
      expect(sessions).toHaveLength(1);
      const stored = (await bStore.getMessages(sessions[0]!.id)).map((m) => [m.role, m.content]);
      expect(stored).toEqual([
        ["user", "one"],
        ["user", "two"],
        ["assistant", "answer two"],
      ]);
    }, 60_000);

    /**
     * Runs the worker in `mode`: it makes three writes that pass their gate and wait for its busy
     * store connection; it is stopped (SIGSTOP) right then, B takes the chat over, and it continues.
     */
    async function stoppedWriter(mode: "fenced" | "gated") {
      const url = await pg.createDatabase();
      const admin = await open(url);
      await migrate(admin, MIGRATIONS);
      const b = await openPgCoordinator(await open(url), { host: "b", pid: 2, instanceId: "b" }, FAST);
      coordinators.push(b);
      const child = spawn(
        process.execPath,
        ["--import", "tsx", WORKER, url, "telegram:77", JSON.stringify(FAST), mode],
        { stdio: ["pipe", "pipe", "inherit"] },
      );
      try {
        const lines = createInterface({ input: child.stdout! });
        const next = () =>
          new Promise<Record<string, unknown>>((r) => lines.once("line", (l) => r(JSON.parse(l))));
        const ready = await next();
        const queuedLine = next();
        child.stdin!.write("go\n");
        const queued = await queuedLine;
        child.kill("SIGSTOP");
        const stoppedAt = Date.now();
        expect(queued).toEqual({ queued: true, validAtCall: true });
        const end = Date.now() + 10_000;
        let taken: ChatClaim | undefined;
        while (!taken && Date.now() < end) {
          const result = await b.claimChat("telegram:77");
          if ("claimed" in result) taken = result.claimed;
          else await new Promise((r) => setTimeout(r, 25));
        }
        expect(taken).toBeDefined();
        // Continued after the busy statement ended, so its writes go out at once.
        await new Promise((r) => setTimeout(r, Math.max(0, 1_200 - (Date.now() - stoppedAt))));
        const report = next();
        child.kill("SIGCONT");
        const outcome = await report;
        const id = String(ready["sessionId"]);
        const messages = await admin.query<{ content: string }>(
          "SELECT content FROM messages WHERE session_id = $1 ORDER BY id",
          [id],
        );
        const row = await admin.query<{ model: string | null; end_reason: string | null }>(
          "SELECT model, end_reason FROM sessions WHERE id = $1",
          [id],
        );
        return { outcome, messages: messages.map((m) => m.content), session: row[0] };
      } finally {
        child.kill("SIGKILL");
      }
    }

    it("a process stopped (SIGSTOP) between its gates and the database: with the token nothing lands after the take-over", async () => {
      const fenced = await stoppedWriter("fenced");
      expect(fenced.outcome).toEqual({
        results: ["ChatClaimLostError", "ChatClaimLostError", "ChatClaimLostError"],
        lost: true,
      });
      expect(fenced.messages).toEqual(["before"]);
      expect(fenced.session).toEqual({ model: null, end_reason: null });
      // The same stop with the local gates alone: the late writes land after the take-over (the
      // limit the token closes).
      const gated = await stoppedWriter("gated");
      expect(gated.outcome["results"]).toEqual(["ok", "ok", "ok"]);
      expect(gated.messages).toEqual(["before", "late answer"]);
      expect(gated.session).toEqual({ model: "late-model", end_reason: "late_end" });
    }, 60_000);
  },
);
