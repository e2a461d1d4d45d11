import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import {
  openPostgresBackend,
  type PgFactories,
  PostgresBackendError,
  requireFactories,
} from "../../../src/knowledge/postgres-backend.js";
import { openStateBackend } from "../../../src/knowledge/state-backend.js";
import { fileKnowledgeStores, knowledgeStores } from "../../../src/knowledge/stores.js";
import { openedOnUse } from "../../../src/state/async-view.js";
import { localCoordinator } from "../../../src/state/coordination.js";
import { PairingStore, pairingRecords } from "../../../src/state/gateway/pairing.js";
import { ResponseStore, responseRecords } from "../../../src/state/gateway/response-store.js";
import { chatSessionIndex, SessionIndex } from "../../../src/state/gateway/session-index.js";
import { memoryWebhookDeliveries } from "../../../src/state/gateway/webhook-deliveries.js";
import {
  WebhookSubscriptionStore,
  webhookSubscriptions,
} from "../../../src/state/gateway/webhook-subscriptions.js";
import { openPgDatabase } from "../../../src/state/postgres/database.js";
import { appliedVersions } from "../../../src/state/postgres/migrate.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { postgresSkipReason } from "../../support/postgres.js";
import { postgresForSuite } from "../../support/postgres-suite.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), "hermes-backend-"));
  dirs.push(d);
  return d;
}
function config(state: Partial<HermesConfig["state"]> = {}): HermesConfig {
  const c = defaultConfig();
  c.state = { ...c.state, ...state } as HermesConfig["state"];
  return c;
}

describe("openStateBackend on a SQLite home", () => {
  it("opens the home's files and state.db, the very stores the surfaces used before", async () => {
    const h = home();
    const backend = await openStateBackend(h, config(), { env: {} });
    expect(backend.kind).toBe("sqlite");
    expect(backend.coordinator.shared).toBe(false);

    const request = await backend.pairing.requestCode("telegram", { id: "u1", name: "ann" });
    expect(request.status).toBe("created");
    const code = request.status === "created" ? request.code : "";
    await backend.pairing.approve("telegram", code);
    // The file store sees what the backend wrote.
    expect(new PairingStore({ home: h }).isApproved("telegram", "u1")).toBe(true);
    expect(await backend.pairing.approvedIds("telegram")).toEqual(new Set(["u1"]));

    const job = await backend.cronJobs().create({ schedule: "every 2h", prompt: "check the mail" });
    expect(JSON.parse(readFileSync(join(h, "cron", "jobs.json"), "utf8")).jobs[0].id).toBe(job.id);
    expect((await backend.cronJobs().list()).map((j) => j.id)).toEqual([job.id]);

    const added = await backend.memory({}).add("memory", "prefers tea");
    expect(added.success).toBe(true);
    expect(readFileSync(join(h, "memories", "MEMORY.md"), "utf8")).toContain("prefers tea");

    expect(await backend.skillUsage.record("mail-triage", "use")).toBe(true);
    expect((await backend.skillUsage.read())["mail-triage"]?.use_count).toBe(1);

    await backend.commandAllowlist.add("rm -rf build");
    await backend.commandAllowlist.add("rm -rf build");
    expect(await backend.commandAllowlist.list()).toEqual(["rm -rf build"]);
    expect(readFileSync(join(h, "config.yaml"), "utf8")).toContain("rm -rf build");

    const sessions = backend.openSessions();
    const id = await sessions.startSession({ source: "api_server" }, { role: "user", content: "hi" });
    expect(id).toBeGreaterThan(0);
    expect(await sessions.drain(1000)).toBe(true);
    await sessions.close();
    expect(existsSync(join(h, "state.db"))).toBe(true);

    const responses = backend.openResponses();
    await responses.put("resp_1", {
      sessionId: "s1",
      response: { id: "resp_1" },
      conversationHistory: [],
      instructions: null,
    });
    expect((await responses.get("resp_1"))?.sessionId).toBe("s1");
    await responses.close();
    expect(existsSync(join(h, "response_store.db"))).toBe(true);

    const index = backend.chatIndex();
    expect(await index.get("agent:main:telegram:dm:42")).toBeUndefined();
    await backend.close();
  });

  it("leaves tools on the home's files: nothing is registered for a SQLite home", async () => {
    const h = home();
    const backend = await openStateBackend(h, config(), { env: {} });
    await knowledgeStores(h).memory({}).add("user", "lives in Lyon");
    expect(await backend.memory({}).entries("user")).toEqual(["lives in Lyon"]);
    await backend.close();
  });
});

describe("openStateBackend on a PostgreSQL home", () => {
  it("refuses a postgres home without a database URL, with the fix in the message", async () => {
    await expect(openStateBackend(home(), config({ backend: "postgres" }), { env: {} })).rejects.toThrow(
      /HERMES_DATABASE_URL/,
    );
  });

  it("a postgres home whose database does not answer fails, masked, and nothing falls back to the files", async () => {
    const h = home();
    const env = { HERMES_DATABASE_URL: "postgres://hermes:s3cret@127.0.0.1:1/hermes" };
    const error = await openStateBackend(h, config({ backend: "postgres" }), { env }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PostgresBackendError);
    expect((error as Error).message).toMatch(
      /^PostgreSQL backend at postgres:\/\/hermes:\S+@127\.0\.0\.1:1\/hermes: /,
    );
    expect((error as Error).message).not.toContain("s3cret");
    // Nothing fell back to SQLite or the files.
    expect(existsSync(join(h, "state.db"))).toBe(false);
    expect(existsSync(join(h, "cron"))).toBe(false);
  });

  it("says which single store is missing", () => {
    const all = fakeFactories(home());
    const { pgCronJobs: _, ...rest } = all;
    expect(() => requireFactories(rest)).toThrow(
      "PostgreSQL backend: cron jobs is not available in this build",
    );
    expect(requireFactories(all)).toBe(all);
  });

  it("reports an unreachable database with the password masked", async () => {
    const choice = {
      kind: "postgres" as const,
      url: "postgres://hermes:s3cret@127.0.0.1:1/hermes",
      poolSize: 2,
      label: "postgres://hermes:***@127.0.0.1:1/hermes",
    };
    const error = await openPostgresBackend(home(), config(), choice, {}, async () =>
      fakeFactories(home()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresBackendError);
    expect((error as Error).message).toContain(
      "PostgreSQL backend at postgres://hermes:***@127.0.0.1:1/hermes",
    );
    expect((error as Error).message).not.toContain("s3cret");
  });
});

/** Every factory, each answering a file or SQLite store kept in `dir` (the assembly is what is tested). */
function fakeFactories(dir: string, calls: string[] = []): PgFactories {
  const files = fileKnowledgeStores(dir);
  return {
    openPgSessionStore: async () => {
      calls.push("sessions");
      const store = openSessionStore(join(dir, "state.db"));
      return new Proxy(store, {
        get(target, prop) {
          if (prop === "close")
            return async () => {
              calls.push("sessions.close");
              await target.close();
            };
          const value = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    pgChatSessionIndex: () => chatSessionIndex(new SessionIndex(dir)),
    pgPairingRecords: () => pairingRecords(new PairingStore({ home: dir })),
    pgWebhookSubscriptions: () => webhookSubscriptions(new WebhookSubscriptionStore({ home: dir })),
    pgResponseRecords: () => responseRecords(new ResponseStore(dir)),
    pgWebhookDeliveries: () => memoryWebhookDeliveries(),
    pgCommandAllowlist: () => ({ list: async () => [], add: async () => true, remove: async () => true }),
    pgCronJobs: (_db, options) => files.cronJobs(options),
    pgMemoryRecords: (_db, limits) => files.memory(limits),
    pgSkillUsageRecords: () => files.skillUsage,
    pgSkillLibrary: (_db, mirrorDir) => ({
      refresh: async () => {
        calls.push(`skills.refresh ${mirrorDir}`);
      },
      sink: () => ({ saved: async () => {}, deleted: async () => {} }),
    }),
    openPgCoordinator: async (_db, info) => {
      calls.push(`coordinator ${info.pid}`);
      const local = localCoordinator();
      return {
        ...local,
        close: async () => {
          calls.push("coordinator.close");
          await local.close();
        },
      };
    },
  };
}

describe.skipIf(postgresSkipReason)("the PostgreSQL backend's assembly over a real server", () => {
  const pg = postgresForSuite();

  it("migrates, mirrors the skills, shares one session store, and hands the tools its stores until closed", async () => {
    const url = await pg().createDatabase();
    const h = home();
    const dataDir = home();
    const calls: string[] = [];
    const choice = { kind: "postgres" as const, url, poolSize: 2, label: url };
    const backend = await openPostgresBackend(h, config(), choice, {}, async () =>
      fakeFactories(dataDir, calls),
    );
    expect(backend.kind).toBe("postgres");
    expect(calls).toEqual(["sessions", `skills.refresh ${join(h, "skills")}`, `coordinator ${process.pid}`]);

    const db = await openPgDatabase(url);
    expect((await appliedVersions(db)).length).toBeGreaterThan(0);
    await db.close();

    // Tools reach the backend's stores by the home while it is open.
    await knowledgeStores(h).memory({}).add("memory", "the deploy key rotates monthly");
    expect(readFileSync(join(dataDir, "memories", "MEMORY.md"), "utf8")).toContain("deploy key");
    expect(existsSync(join(h, "memories"))).toBe(false);

    // A surface closing its session store leaves it open for the others.
    const a = backend.openSessions();
    const b = backend.openSessions();
    await a.startSession({ source: "api_server" }, { role: "user", content: "one" });
    await a.close();
    expect(await a.drain(10)).toBe(true);
    await b.startSession({ source: "api_server" }, { role: "user", content: "two" });
    expect((await b.listSessions()).length).toBe(2);

    await backend.close();
    await backend.close();
    expect(calls.slice(3)).toEqual(["coordinator.close", "sessions.close"]);
    // Closed: the tools are back on the home's files.
    await knowledgeStores(h).memory({}).add("memory", "local note");
    expect(existsSync(join(h, "memories", "MEMORY.md"))).toBe(true);
  });

  it("with this build's own stores: two instances share sessions, memory, pairing, cron and coordination", async () => {
    const url = await pg().createDatabase();
    const env = { HERMES_DATABASE_URL: url };
    const [ha, hb] = [home(), home()];
    const a = await openStateBackend(ha, config({ backend: "postgres" }), { env });
    const b = await openStateBackend(hb, config({ backend: "postgres" }), { env });
    try {
      expect([a.kind, b.kind]).toEqual(["postgres", "postgres"]);
      expect(a.coordinator.shared).toBe(true);
      const started = await a
        .openSessions()
        .startSession({ source: "api_server" }, { role: "user", content: "hello from A" });
      expect(started).toBeGreaterThan(0);
      const seen = await b.openSessions().search({ query: "hello" });
      expect(seen.map((hit) => hit.snippet)).toEqual([">>>hello<<< from A"]);
      await a.memory({}).add("memory", "shared across instances");
      expect(await b.memory({}).entries("memory")).toContain("shared across instances");
      await a.commandAllowlist.add("rm -rf build/");
      expect(await b.commandAllowlist.list()).toContain("rm -rf build/");
      const job = await a.cronJobs().create({ prompt: "daily digest", schedule: "every 1h" });
      expect((await b.cronJobs().list()).map((j) => j.id)).toContain(job.id);
      expect((await b.coordinator.instances()).length).toBe(2);
      // The dashboard reads the same state without joining the instances.
      const dashboard = await openStateBackend(home(), config({ backend: "postgres" }), {
        env,
        joinInstances: false,
      });
      expect(await dashboard.memory({}).entries("memory")).toContain("shared across instances");
      expect(dashboard.coordinator.shared).toBe(false);
      expect((await b.coordinator.instances()).length).toBe(2);
      await dashboard.close();
      // Nothing of the state was written into either home's files.
      for (const h of [ha, hb]) {
        expect(existsSync(join(h, "state.db"))).toBe(false);
        expect(existsSync(join(h, "memories", "MEMORY.md"))).toBe(false);
        expect(existsSync(join(h, "cron", "jobs.json"))).toBe(false);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("a store opened on first use (CLI commands on a postgres home)", () => {
  it("opens once, on the first call, and rejects every call when opening fails", async () => {
    let opened = 0;
    const view = openedOnUse(async () => {
      opened++;
      return { n: 1, add: (by: number) => by + 1, twice: (by: number) => by * 2 };
    }, ["add", "twice"]);
    expect(opened).toBe(0);
    expect(await Promise.all([view.add(1), view.twice(3)])).toEqual([2, 6]);
    expect(opened).toBe(1);

    const failing = openedOnUse(async (): Promise<{ get(): number }> => {
      throw new Error("PostgreSQL backend: cron jobs is not available in this build");
    }, ["get"]);
    await expect(failing.get()).rejects.toThrow("cron jobs is not available");
    await expect(failing.get()).rejects.toThrow("cron jobs is not available");
  });
});
