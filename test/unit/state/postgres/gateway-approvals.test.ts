/**
 * Approvals pending on every instance and per-chat toggles in PostgreSQL: listing only live,
 * unexpired, unanswered approvals; answers recorded once (two at the same moment: one wins);
 * protected paths only denied; answers collected by the instance that waits; and stored toggles
 * read back validated, whatever a hand-edited row holds.
 */
import { describe, expect, it } from "vitest";
import { ApprovalAnswerError } from "../../../../src/state/gateway/shared-approvals.js";
import type { ApprovalInfo } from "../../../../src/state/gateway-control.js";
import type { PgDatabase } from "../../../../src/state/postgres/database.js";
import { pgChatSettings, pgPendingApprovals } from "../../../../src/state/postgres/gateway-approvals.js";
import { postgresSkipReason } from "../../../support/postgres.js";
import { useStorages } from "./gateway-harness.js";

const storage = useStorages();

async function database(): Promise<PgDatabase> {
  return (await storage("postgres")).pool();
}

/** An instance row as the coordinator keeps it; `staleMs` ago when it stopped beating. */
async function instance(db: PgDatabase, id: string, staleMs = 0): Promise<void> {
  await db.query(
    `INSERT INTO coord_instances (id, host, pid, last_seen_at)
     VALUES ($1, 'host', 1, clock_timestamp() - ($2::double precision * interval '1 millisecond'))`,
    [id, staleMs],
  );
}

function approval(id: string, over: Partial<ApprovalInfo> = {}): ApprovalInfo {
  const now = Date.now();
  return {
    id,
    session_key: `agent:main:telegram:dm:${id}`,
    platform: "telegram",
    chat_id: `chat-${id}`,
    user_id: "u1",
    command: "rm -rf /tmp/work",
    reason: "recursive delete",
    protected_path: false,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + 60_000).toISOString(),
    ...over,
  };
}

describe.skipIf(postgresSkipReason)("pending approvals of every instance (PostgreSQL)", () => {
  it("lists live instances' approvals oldest first, with the instance that waits", async () => {
    const db = await database();
    await instance(db, "a");
    await instance(db, "b");
    const records = pgPendingApprovals(db);
    await records.add("b", approval("2222", { created_at: new Date(Date.now() - 1000).toISOString() }));
    await records.add("a", approval("1111"));
    const listed = await records.list();
    expect(listed.map((a) => [a.instance, a.id])).toEqual([
      ["b", "2222"],
      ["a", "1111"],
    ]);
    expect(listed[1]).toMatchObject({
      command: "rm -rf /tmp/work",
      platform: "telegram",
      protected_path: false,
    });
    await records.remove("b", "2222");
    await records.remove("b", "2222");
    expect((await records.list()).map((a) => a.id)).toEqual(["1111"]);
  });

  it("leaves out approvals of a dead instance, expired ones and answered ones", async () => {
    const db = await database();
    await instance(db, "live");
    await instance(db, "dead", 60_000);
    const records = pgPendingApprovals(db);
    await records.add("dead", approval("dead1"));
    await records.add("live", approval("old1", { expires_at: new Date(Date.now() - 1).toISOString() }));
    await records.add("live", approval("ans1"));
    await records.add("live", approval("open"));
    await records.answer("ans1", "once", "control");
    expect((await records.list()).map((a) => a.id)).toEqual(["open"]);
    await expect(records.answer("dead1", "once", "control")).rejects.toThrow(/no longer running/);
    await expect(records.answer("old1", "once", "control")).rejects.toThrow(/timed out/);
    await expect(records.answer("ans1", "deny", "control")).rejects.toThrow(/answered already \(once\)/);
    await expect(records.answer("nope", "deny", "control")).rejects.toThrow(ApprovalAnswerError);
  });

  it("records an answer once for the instance that waits, which collects it", async () => {
    const db = await database();
    await instance(db, "a");
    const records = pgPendingApprovals(db);
    await records.add("a", approval("abcd"));
    expect(await records.answers("a")).toEqual([]);
    // Two answers at the same moment (the pool runs them on two connections): one is recorded.
    const results = await Promise.allSettled([
      records.answer("abcd", "session", "dashboard"),
      records.answer("abcd", "deny", "mcp"),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const won = results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ instance: string }>;
    expect(won.value).toEqual({ instance: "a" });
    const collected = await records.answers("a");
    expect(collected).toHaveLength(1);
    expect(["session", "deny"]).toContain(collected[0]?.decision);
    expect(await records.answers("b")).toEqual([]);
    await records.clear("a");
    expect(await records.answers("a")).toEqual([]);
  });

  it("a protected path is only denied from outside the chat; bad decisions are refused", async () => {
    const db = await database();
    await instance(db, "a");
    const records = pgPendingApprovals(db);
    await records.add("a", approval("prot", { protected_path: true, command: "echo x > ~/.hermes/.env" }));
    for (const decision of ["once", "session", "always"] as const)
      await expect(records.answer("prot", decision, "control")).rejects.toThrow(/protected path/);
    // A confused caller's spellings never reach SQL as a decision.
    await expect(records.answer("prot", "yes" as never, "control")).rejects.toThrow(/decision must be/);
    await expect(records.answer("prot", "deny' OR '1'='1" as never, "control")).rejects.toThrow(
      /decision must be/,
    );
    expect(await records.answers("a")).toEqual([]);
    expect(await records.answer("prot", "deny", "control")).toEqual({ instance: "a" });
    expect((await records.answers("a"))[0]).toMatchObject({ id: "prot", decision: "deny", by: "control" });
  });

  it("keeps commands with quotes, unicode and a NUL (shown as \\0) intact", async () => {
    const db = await database();
    await instance(db, "a");
    const records = pgPendingApprovals(db);
    const command = `rm -rf "/tmp/ünïcødé"; echo '); DROP TABLE coord_instances; --'\u0000tail`;
    await records.add("a", approval("q1", { command }));
    const [listed] = await records.list();
    expect(listed?.command).toBe(command.replace("\u0000", "\\0"));
    expect(await db.query("SELECT 1 FROM coord_instances")).toHaveLength(1);
  });
});

describe.skipIf(postgresSkipReason)("per-chat toggles (PostgreSQL)", () => {
  it("stores what a command changed and reads it back on another connection", async () => {
    const s = await storage("postgres");
    const a = pgChatSettings(await s.pool());
    const b = pgChatSettings(await s.pool());
    expect(await a.get("agent:main:telegram:dm:1")).toBeUndefined();
    await a.set("agent:main:telegram:dm:1", { toolProgress: "verbose", yolo: true });
    expect(await b.get("agent:main:telegram:dm:1")).toEqual({ toolProgress: "verbose", yolo: true });
    await b.set("agent:main:telegram:dm:1", { toolProgress: "off", yolo: false });
    expect(await a.get("agent:main:telegram:dm:1")).toEqual({ toolProgress: "off", yolo: false });
    expect(await a.get("agent:main:telegram:dm:2")).toBeUndefined();
  });

  it("keeps each chat's /voice mode apart from its other settings", async () => {
    const s = await storage("postgres");
    const a = pgChatSettings(await s.pool());
    const b = pgChatSettings(await s.pool());
    expect(await a.voiceMode("telegram:42")).toBeUndefined();
    await a.setVoiceMode("telegram:42", "all");
    await a.setVoiceMode("slack:C1", "voice_only");
    expect(await b.voiceMode("telegram:42")).toBe("all");
    await b.setVoiceMode("telegram:42", "off");
    expect(await a.voiceMode("telegram:42")).toBe("off");
    expect(await a.voiceMode("slack:C1")).toBe("voice_only");
    expect(await a.get("telegram:42")).toBeUndefined();
    // Read with a chat's other settings in one query, as before each turn.
    expect(await a.get("agent:main:telegram:dm:42", "telegram:42")).toEqual({ voice: "off" });
    await a.set("agent:main:telegram:dm:42", { yolo: true });
    expect(await b.get("agent:main:telegram:dm:42", "telegram:42")).toEqual({ voice: "off", yolo: true });
    expect(await b.get("agent:main:telegram:dm:42", "telegram:99")).toEqual({ yolo: true });
    await b.set("agent:main:telegram:dm:43", { yolo: false });
    await (await s.pool()).query("UPDATE gateway_chat_settings SET settings = 'null'");
    expect(await b.get("agent:main:telegram:dm:43")).toEqual({});
  });

  it("reads a damaged or hand-edited row as only its valid fields", async () => {
    const db = await database();
    const settings = pgChatSettings(db);
    await settings.set("k1", { toolProgress: "all", yolo: false });
    await db.query("UPDATE gateway_chat_settings SET settings = $1", [
      '{"toolProgress":"loud","yolo":"yes"}',
    ]);
    expect(await settings.get("k1")).toEqual({});
    await db.query("UPDATE gateway_chat_settings SET settings = $1", ["not json"]);
    expect(await settings.get("k1")).toBeUndefined();
    // A key as long as a chat platform may make one is still one row.
    const long = `agent:main:discord:thread:${"x".repeat(5000)}`;
    await settings.set(long, { yolo: true });
    expect(await settings.get(long)).toEqual({ yolo: true });
  });
});
