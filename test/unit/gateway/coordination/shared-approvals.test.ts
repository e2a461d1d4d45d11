/**
 * Approvals across instances over a real PostgreSQL: instance A's turn waits on an approval (real
 * `ChatApprovals`, asked in a recording chat); instance B lists it and answers it, and A's turn
 * gets exactly that answer; an answer recorded where no instance runs (the dashboard's path) still
 * arrives; a protected path is only denied from outside; and nothing stays listed once answered
 * or when A stops.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GatewayControlState } from "../../../../src/gateway/control/state.js";
import { SharedApprovals } from "../../../../src/gateway/coordination/shared-approvals.js";
import { ChatApprovals } from "../../../../src/gateway/messaging/approvals.js";
import type { PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import type { Coordinator } from "../../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { pgPendingApprovals } from "../../../../src/state/postgres/gateway-approvals.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import type { ApprovalRequest } from "../../../../src/tools/types.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

function chat(): PlatformAdapter & { sent: string[] } {
  const sent: string[] = [];
  return {
    platform: "telegram",
    sent,
    capabilities: { maxMessageLength: 4000, edit: false, buttons: false, typing: false, media: false },
    send: async (_target: unknown, text: string) => {
      sent.push(text);
      return { messageId: String(sent.length) };
    },
  } as unknown as PlatformAdapter & { sent: string[] };
}

const request = (command: string, protectedPath = false): ApprovalRequest =>
  ({
    command,
    reason: "recursive delete",
    ...(protectedPath ? { protectedPath: true } : {}),
  }) as ApprovalRequest;

interface Side {
  coordinator: Coordinator;
  approvals: ChatApprovals;
  shared: SharedApprovals;
  adapter: ReturnType<typeof chat>;
}

describe.skipIf(postgresSkipReason)("approvals across instances (PostgreSQL)", () => {
  let pg: PostgresFixture;
  const pools: PgDatabase[] = [];
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    for (const db of pools.splice(0)) await db.close().catch(() => undefined);
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  /** Two instances (A, B) on one fresh database, each with its router's approvals linked. */
  async function twoInstances(pollMs = 200): Promise<{ a: Side; b: Side; db: PgDatabase }> {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url, { max: 6 });
    pools.push(db);
    await migrate(db, MIGRATIONS);
    const side = async (name: string): Promise<Side> => {
      const own = await openPgDatabase(url, { max: 4 });
      pools.push(own);
      const coordinator = await openPgCoordinator(own, { host: name, pid: 1, instanceId: name });
      const shared = new SharedApprovals(pgPendingApprovals(own), coordinator, { pollMs });
      const approvals = new ChatApprovals(30_000, shared.observe(new GatewayControlState()));
      shared.attach(approvals);
      closers.push(() => coordinator.close());
      closers.push(() => shared.close());
      return { coordinator, approvals, shared, adapter: chat() };
    };
    return { a: await side("instance-a"), b: await side("instance-b"), db };
  }

  const ask = (side: Side, key: string, req: ApprovalRequest) =>
    side.approvals.ask(key, req, { adapter: side.adapter, target: { chatId: "c1" }, userId: "u1" });

  async function listedOn(side: Side, count: number) {
    for (let i = 0; i < 100; i++) {
      const listed = await side.shared.list();
      if (listed.length === count) return listed;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`never saw ${count} approvals listed`);
  }

  it("B lists A's approval and B's answer reaches A's waiting turn", async () => {
    const { a, b } = await twoInstances(60_000); // no polling: the coordinator's message carries it
    const decided = ask(a, "agent:main:telegram:dm:u1", request("rm -rf /tmp/build"));
    const [listed] = await listedOn(b, 1);
    expect(listed).toMatchObject({ instance: "instance-a", command: "rm -rf /tmp/build", chat_id: "c1" });
    expect(await b.shared.respond(listed!.id, "session")).toEqual({ instance: "instance-a" });
    expect(await decided).toBe("session");
    expect(a.adapter.sent.at(-1)).toMatch(/Approved for this session \(answered from outside the chat\)/);
    await listedOn(b, 0);
    // Answered once: a second answer is refused with the reason.
    await expect(b.shared.respond(listed!.id, "deny")).rejects.toThrow(
      /No pending approval|answered already/,
    );
  });

  it("an answer recorded where no instance runs (dashboard, mcp serve) arrives by A's own check", async () => {
    const { a, db } = await twoInstances(100);
    const decided = ask(a, "k1", request("git push --force"));
    const records = pgPendingApprovals(db);
    let id: string | undefined;
    for (let i = 0; i < 100 && !id; i++) {
      id = (await records.list())[0]?.id;
      if (!id) await new Promise((r) => setTimeout(r, 50));
    }
    await records.answer(id!, "deny", "dashboard");
    expect(await decided).toBe("deny");
    expect(await records.list()).toEqual([]);
  });

  it("a protected path can only be denied from another instance", async () => {
    const { a, b } = await twoInstances();
    const decided = ask(a, "k2", request("echo hi >> ~/.hermes/config.yaml", true));
    const [listed] = await listedOn(b, 1);
    expect(listed?.protected_path).toBe(true);
    await expect(b.shared.respond(listed!.id, "once")).rejects.toThrow(/protected path/);
    await expect(b.shared.respond(listed!.id, "always")).rejects.toThrow(/protected path/);
    await b.shared.respond(listed!.id, "deny");
    expect(await decided).toBe("deny");
  });

  it("an approval answered in its own chat first is gone from every list; a stale answer is dropped", async () => {
    const { a, b } = await twoInstances(100);
    const decided = ask(a, "k3", request("rm -rf /srv/cache"));
    const [listed] = await listedOn(b, 1);
    expect(a.approvals.answer("k3", "once")).toBe(true);
    expect(await decided).toBe("once");
    await listedOn(b, 0);
    await expect(b.shared.respond(listed!.id, "deny")).rejects.toThrow(/No pending approval/);
  });

  it("B answers its own approvals locally, and A's stop forgets A's", async () => {
    const { a, b } = await twoInstances();
    const mine = ask(b, "kb", request("rm -rf /tmp/b"));
    void ask(a, "ka", request("rm -rf /tmp/a"));
    const listed = await listedOn(b, 2);
    const own = listed.find((x) => x.instance === "instance-b")!;
    expect(await b.shared.respond(own.id, "once")).toEqual({ instance: "instance-b" });
    expect(await mine).toBe("once");
    a.approvals.denyAll();
    await a.shared.close();
    expect(await b.shared.list()).toEqual([]);
  });
});
