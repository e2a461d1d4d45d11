/**
 * Chat → session index writes carry their chat claim's fencing token (chat-fence.ts
 * `fenceIndexWrites`, wired by `ChatRelay.fenceIndex`): the claim of the write's own chat is read
 * before the gate, so an index write made under a claim is checked by the database against that
 * claim even when it reaches the database after a take-over. On PostgreSQL, through the router
 * and the chat relay: instance A opens a session for a chat and its index write pointing the chat
 * there passes its gate, then is held up on its way while A is cut off and B takes the chat over
 * and answers in a session of its own; when A's write arrives, the database refuses it and the
 * chat keeps pointing at B's session (with the local gate alone it is pointed back at A's).
 * The PostgreSQL backend's own index through the wrapper; the wrapper on its own: which claim
 * each write carries, and what is left as it was (the file index of one machine, keys not held
 * here).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { claimGate, fenceIndexWrites } from "../../../../src/gateway/coordination/chat-fence.js";
import { openStateBackend } from "../../../../src/knowledge/state-backend.js";
import {
  type ChatClaim,
  ChatClaimLostError,
  type ClaimFence,
  type Coordinator,
} from "../../../../src/state/coordination.js";
import {
  type ChatSessionIndex,
  chatSessionIndex,
  type IndexedSource,
  SessionIndex,
} from "../../../../src/state/gateway/session-index.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import {
  type PgChatSessionIndex,
  pgChatSessionIndex,
} from "../../../../src/state/postgres/gateway-chat-index.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openPgSessionStore } from "../../../../src/state/postgres/session-store.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { cuttable, FAST_COORDINATION as FAST } from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { say } from "../../../support/scripted-transport.js";

const source: IndexedSource = { platform: "telegram", chatType: "dm", chatId: "1", userId: "1" };
const NOW = new Date("2026-11-27T01:00:00.000Z");

/** A claim as a test drives it. */
function claimFor(key: string, token: string | undefined) {
  const controller = new AbortController();
  const claim: ChatClaim = {
    key,
    valid: () => !controller.signal.aborted,
    ensure: async () => {
      if (controller.signal.aborted) throw controller.signal.reason;
    },
    lost: controller.signal,
    release: async () => undefined,
    ...(token ? { fence: { key, token } } : {}),
  };
  return { claim, lose: () => controller.abort(new ChatClaimLostError(key, "taken over")) };
}

describe("fenceIndexWrites", () => {
  /** An index that can fence: records each call with the token of the view it went through. */
  function recording() {
    const calls: string[] = [];
    const views: ClaimFence[] = [];
    const make = (fence?: ClaimFence) => ({
      get: async (key: string) => {
        calls.push(`get ${key} ${fence?.token ?? "unfenced"}`);
        return undefined;
      },
      set: async (key: string, id: string) => {
        calls.push(`set ${key} ${id} ${fence?.token ?? "unfenced"}`);
      },
      touch: async (key: string) => {
        calls.push(`touch ${key} ${fence?.token ?? "unfenced"}`);
      },
      fencedBy(f: ClaimFence) {
        views.push(f);
        return make(f);
      },
    });
    return { index: make(), calls, views };
  }

  it("sends each chat's write through the view of that chat's claim; reads and keys not held unfenced", async () => {
    const { index, calls, views } = recording();
    const one = claimFor("chat:1", "t1");
    const two = claimFor("chat:2", "t2");
    const held = new Map<string, ChatClaim>([
      ["chat:1", one.claim],
      ["chat:2", two.claim],
    ]);
    const gated: string[] = [];
    const fenced = fenceIndexWrites(
      index,
      (key) => {
        gated.push(key);
        return undefined;
      },
      (key) => held.get(key),
    );
    await fenced.set("chat:1", "s1");
    await fenced.set("chat:2", "s2");
    await fenced.touch("chat:1");
    await fenced.get("chat:1");
    await fenced.set("chat:3", "s3");
    expect(calls).toEqual([
      "set chat:1 s1 t1",
      "set chat:2 s2 t2",
      "touch chat:1 t1",
      "get chat:1 unfenced",
      "set chat:3 s3 unfenced",
    ]);
    // Every write asked its own chat's gate; reads none. One view per claim, made once.
    expect(gated).toEqual(["chat:1", "chat:2", "chat:1", "chat:3"]);
    expect(views.map((v) => v.token)).toEqual(["t1", "t2"]);
  });

  it("reads the claim before the gate: a write that waited for a claim lost meanwhile still carries it", async () => {
    const { index, calls } = recording();
    const one = claimFor("chat:1", "t1");
    const held = new Map<string, ChatClaim>([["chat:1", one.claim]]);
    let confirm!: () => void;
    const fenced = fenceIndexWrites(
      index,
      () => new Promise<void>((r) => (confirm = r)),
      (key) => held.get(key),
    );
    const writing = fenced.set("chat:1", "stale");
    one.lose();
    held.delete("chat:1");
    confirm();
    await writing;
    // Made under t1, checked against t1 (the database refuses it), never an unfenced write.
    expect(calls).toEqual(["set chat:1 stale t1"]);
  });

  it("leaves the file index of one machine as it was: the gate alone", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-index-token-"));
    try {
      const file = chatSessionIndex(new SessionIndex(home));
      const one = claimFor("chat:1", "t1");
      let refuse = false;
      const fenced = fenceIndexWrites(
        file,
        () => (refuse ? Promise.reject(new ChatClaimLostError("chat:1", "taken over")) : undefined),
        () => one.claim,
      );
      await fenced.set("chat:1", "s1", source, NOW);
      expect(await file.get("chat:1")).toMatchObject({ session_id: "s1" });
      refuse = true;
      await expect(fenced.set("chat:1", "s2", source, NOW)).rejects.toBeInstanceOf(ChatClaimLostError);
      await expect(fenced.touch("chat:1", new Date())).rejects.toBeInstanceOf(ChatClaimLostError);
      expect(await file.get("chat:1")).toMatchObject({ session_id: "s1", updated_at: NOW.toISOString() });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/** `index` whose `set` calls wait while held (a write on its way to the database), fencing or not. */
function delayedSets(index: PgChatSessionIndex, fencing: boolean) {
  let held = false;
  const waiters: Array<() => void> = [];
  let waiting = 0;
  const wrap = (inner: ChatSessionIndex): ChatSessionIndex => ({
    get: (key) => inner.get(key),
    set: async (...args) => {
      waiting++;
      while (held) await new Promise<void>((r) => waiters.push(r));
      waiting--;
      return inner.set(...args);
    },
    markInterrupted: (...args) => inner.markInterrupted(...args),
    takeInterrupted: (key) => inner.takeInterrupted(key),
    touch: (...args) => inner.touch(...args),
  });
  const outer = wrap(index);
  return {
    index: fencing ? { ...outer, fencedBy: (f: ClaimFence) => wrap(index.fencedBy(f)) } : outer,
    hold: () => {
      held = true;
    },
    open: () => {
      held = false;
      for (const w of waiters.splice(0)) w();
    },
    waiting: () => waiting,
  };
}

describe.skipIf(postgresSkipReason)(
  "an index write that passed its gate just before its instance stalled",
  () => {
    let pg: PostgresFixture;
    const dbs: PgDatabase[] = [];
    const coordinators: Coordinator[] = [];
    const runs: Instances[] = [];
    beforeAll(async () => {
      pg = await startPostgres();
    }, 60_000);
    afterAll(async () => {
      for (const run of runs) await run.stop();
      for (const c of coordinators) await c.close().catch(() => {});
      for (const db of dbs) await db.close().catch(() => {});
      await pg?.dispose();
    });

    async function open(url: string): Promise<PgDatabase> {
      const db = await openPgDatabase(url, { max: 4 });
      dbs.push(db);
      return db;
    }

    it("the PostgreSQL backend's own index fences through the gateway's wrapper (the runner's wiring)", async () => {
      const url = await pg.createDatabase();
      const home = mkdtempSync(join(tmpdir(), "hermes-index-token-home-"));
      const config = defaultConfig();
      config.state = { ...config.state, backend: "postgres" } as typeof config.state;
      const backend = await openStateBackend(home, config, { env: { HERMES_DATABASE_URL: url } });
      try {
        const key = "agent:main:telegram:dm:42";
        const result = await backend.coordinator.claimChat(key);
        if (!("claimed" in result)) throw new Error("not claimed");
        const claim = result.claimed;
        const index = fenceIndexWrites(backend.chatIndex(), claimGate(claim), () => claim);
        await index.set(key, "landed", source, NOW);
        // Another instance's take-over, as the database sees it: a new token on the claim row.
        const admin = await open(url);
        await admin.query("UPDATE coord_chat_claims SET holder = 'other', token = 'other' WHERE key = $1", [
          key,
        ]);
        await expect(index.set(key, "stale", source, new Date())).rejects.toBeInstanceOf(ChatClaimLostError);
        expect(claim.lost.aborted).toBe(true);
        expect(await backend.chatIndex().get(key)).toMatchObject({ session_id: "landed" });
        // The CLI's index on the same backend (no claim) still writes.
        await backend.chatIndex().set(key, "from-cli", source, new Date());
        expect(await backend.chatIndex().get(key)).toMatchObject({ session_id: "from-cli" });
      } finally {
        await backend.close();
        rmSync(home, { recursive: true, force: true });
      }
    });

    /**
     * A opens a session for the chat; its index write is held up after its gate while A is cut off
     * and B takes the chat over and answers; then A's write goes on. What the chat points at after.
     */
    async function staleWrite(fencing: boolean) {
      const url = await pg.createDatabase();
      const admin = await open(url);
      await migrate(admin, MIGRATIONS);
      const aLink = cuttable(await open(url));
      const aLog: string[] = [];
      const a = await openPgCoordinator(
        aLink.db,
        { host: "a", pid: 1, instanceId: "a" },
        { ...FAST, log: (l) => aLog.push(l) },
      );
      const b = await openPgCoordinator(await open(url), { host: "b", pid: 2, instanceId: "b" }, FAST);
      coordinators.push(a, b);
      const aIndex = delayedSets(pgChatSessionIndex(await open(url)), fencing);
      const bIndex = pgChatSessionIndex(await open(url));
      const store = await openPgSessionStore(await open(url));
      const config = {
        display: { ...defaultConfig().display, busy_input_mode: "queue", tool_progress: "off" },
      };
      const run = startInstances(["a", "b"], {
        coordinators: [a, b],
        config,
        stores: [await openPgSessionStore(await open(url)), store],
        indexes: [aIndex.index, bIndex],
      });
      runs.push(run);
      const [ia, ib] = run.list as [Instance, Instance];
      ia.model.push(say("answer one"));
      ib.model.push(say("answer two"));
      // A opens the chat's session; its write pointing the chat there passes its gate and waits.
      aIndex.hold();
      ia.adapter.from("100", "one");
      await until(() => aIndex.waiting() > 0, "A's index write on its way");
      // A stalls past the TTL: B takes the chat over and answers in a session of its own.
      aLink.cut();
      ib.adapter.from("100", "two");
      await until(() => ib.adapter.texts().includes("answer two"), "B's answer", 15_000);
      const entryRow = async () =>
        (
          await admin.query<{ session_key: string; session_id: string }>("SELECT * FROM gateway_chat_index")
        )[0];
      const bSession = await until(async () => (await entryRow())?.session_id, "B's index entry");
      // A's write reaches the database now.
      aIndex.open();
      await new Promise((r) => setTimeout(r, 300));
      const after = await entryRow();
      aLink.restore();
      const sessions = await store.listSessions({});
      const withAnswer: string[] = [];
      for (const s of sessions)
        if ((await store.getMessages(s.id)).some((m) => m.content === "answer two")) withAnswer.push(s.id);
      return { ia, ib, aLog, bSession, after, sessions, withAnswer, bIndex };
    }

    it("is refused by the database when it arrives after the take-over: the chat keeps pointing at B's session", async () => {
      const got = await staleWrite(true);
      expect(got.withAnswer).toHaveLength(1);
      // B's own session was written to the index, and A's late write did not move the chat off it.
      const bSession = got.bSession;
      expect(bSession).toBe(got.withAnswer[0]);
      expect(got.after?.session_id).toBe(bSession);
      // A's session never got a row (its turn stopped before its first message was stored).
      expect(got.sessions.map((s) => s.id)).toEqual([bSession]);
      await until(
        () => got.aLog.some((l) => /lost chat .*database refused a chat index write/.test(l)),
        "A's refusal",
      );
      expect(got.ia.adapter.texts().some((t) => t.includes("answer one"))).toBe(false);
      expect(got.ia.model.requests).toHaveLength(0);
      // The chat goes on in B's session.
      got.ib.model.push(say("answer three"));
      got.ib.adapter.from("100", "three");
      await until(() => got.ib.adapter.texts().includes("answer three"), "B's next answer", 15_000);
      const request = JSON.stringify(got.ib.model.requests.at(-1));
      expect(request).toContain("answer two");
      expect((await got.bIndex.get(got.after!.session_key))?.session_id).toBe(bSession);
    }, 60_000);

    it("with the local gate alone the same late write points the chat back at A's stale session", async () => {
      const got = await staleWrite(false);
      const bSession = got.bSession;
      expect(bSession).toBe(got.withAnswer[0]);
      expect(got.after?.session_id).toEqual(expect.any(String));
      expect(got.after?.session_id).not.toBe(bSession);
    }, 60_000);
  },
);
