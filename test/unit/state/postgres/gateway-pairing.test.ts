/**
 * DM pairing: the same cases against the pairing files and PostgreSQL (codes, expiry, rate limit,
 * 3 pending, lockout, listing), several instances on one storage (one approval of a code, limits
 * counted across instances), and attacks (guessed, expired, oversized and malformed values).
 */
import { describe, expect, it } from "vitest";
import {
  CODE_ALPHABET,
  type CodeRequest,
  type PairingRecords,
  PairingStore,
  PairingUsageError,
  pairingRecords,
} from "../../../../src/state/gateway/pairing.js";
import { pgPairingRecords } from "../../../../src/state/postgres/gateway-stores.js";
import { BACKENDS, type Storage, useStorages } from "./gateway-harness.js";

const storage = useStorages();
const T0 = 1_700_000_000;

describe.each(BACKENDS)("pairing records (%s)", (kind) => {
  let clock = T0;
  /** A new instance on `s` sharing the test's clock. */
  async function instance(s: Storage, random?: (max: number) => number): Promise<PairingRecords> {
    const options = { now: () => clock, ...(random ? { randomInt: random } : {}) };
    if (s.kind === "file") return pairingRecords(new PairingStore({ home: s.home, ...options }));
    return pgPairingRecords(await s.pool(), options);
  }
  async function fresh(): Promise<PairingRecords> {
    clock = T0;
    return instance(await storage(kind));
  }
  async function codeFor(p: PairingRecords, userId: string, platform = "telegram"): Promise<string> {
    const r = await p.requestCode(platform, { id: userId, name: `name-${userId}` });
    if (r.status !== "created") throw new Error(`expected a code, got ${r.status}`);
    return r.code;
  }

  it("issues an 8-character code from the unambiguous alphabet, valid for 1 h", async () => {
    const p = await fresh();
    const r = await p.requestCode("Telegram", { id: "42", name: "alice" });
    expect(r).toMatchObject({ status: "created", expiresAt: T0 + 3600 });
    expect((r as Extract<CodeRequest, { status: "created" }>).code).toMatch(
      new RegExp(`^[${CODE_ALPHABET}]{8}$`),
    );
  });

  it("draws each character from the injected random source", async () => {
    clock = T0;
    const picks = [0, 1, 2, 3, 28, 29, 30, 31];
    let i = 0;
    const p = await instance(await storage(kind), () => picks[i++ % picks.length] ?? 0);
    expect(await p.requestCode("telegram", { id: "1" })).toMatchObject({
      status: "created",
      code: "ABCD6789",
    });
  });

  it("allows one request per user per 10 min, then replaces the old code", async () => {
    const p = await fresh();
    const first = await codeFor(p, "42");
    clock = T0 + 599;
    expect(await p.requestCode("telegram", { id: "42" })).toEqual({
      status: "rate_limited",
      retryAt: T0 + 600,
    });
    clock = T0 + 600;
    const second = await codeFor(p, "42");
    expect((await p.list()).pending).toHaveLength(1);
    if (first !== second) expect(await p.approve("telegram", first)).toMatchObject({ status: "invalid" });
    expect(await p.approve("telegram", second)).toMatchObject({ status: "approved", userId: "42" });
  });

  it("holds at most 3 pending requests per platform; other platforms and expired codes do not count", async () => {
    const p = await fresh();
    for (const id of ["1", "2", "3"]) await codeFor(p, id);
    expect(await p.requestCode("telegram", { id: "4" })).toEqual({ status: "too_many_pending", max: 3 });
    await codeFor(p, "4", "discord");
    clock = T0 + 3601;
    await codeFor(p, "4");
    expect((await p.list()).pending.map((r) => `${r.platform}:${r.userId}`)).toEqual(["telegram:4"]);
  });

  it("approves case-insensitively, consumes the code, and tells an approved user so", async () => {
    const p = await fresh();
    const code = await codeFor(p, "42");
    expect(await p.approve("TELEGRAM", ` ${code.toLowerCase()} `)).toEqual({
      status: "approved",
      platform: "telegram",
      userId: "42",
      userName: "name-42",
    });
    expect(await p.approve("telegram", code)).toMatchObject({ status: "invalid", attemptsLeft: 4 });
    expect(await p.isApproved("telegram", "42")).toBe(true);
    expect(await p.isApproved("discord", "42")).toBe(false);
    expect([...(await p.approvedIds("telegram"))]).toEqual(["42"]);
    expect(await p.listApproved("telegram")).toEqual([
      { platform: "telegram", userId: "42", userName: "name-42", approvedAt: T0 },
    ]);
    expect(await p.requestCode("telegram", { id: "42" })).toEqual({ status: "already_approved" });
  });

  it("refuses a code after its hour is up, counting the miss", async () => {
    const p = await fresh();
    const code = await codeFor(p, "42");
    clock = T0 + 3601;
    expect(await p.approve("telegram", code)).toEqual({ status: "invalid", attemptsLeft: 4 });
    expect(await p.isApproved("telegram", "42")).toBe(false);
  });

  it("locks the platform for 1 h after 5 wrong codes, even for a valid code; a success resets the streak", async () => {
    const p = await fresh();
    const code = await codeFor(p, "42");
    for (let i = 0; i < 4; i++) await p.approve("telegram", "AAAAAAAA");
    expect(await p.approve("telegram", code)).toMatchObject({ status: "approved" });
    const next = await codeFor(p, "43");
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await p.approve("telegram", "BBBBBBBB"));
    expect(answers.map((a) => a.status === "invalid" && a.attemptsLeft)).toEqual([4, 3, 2, 1, 0]);
    expect(answers[4]).toEqual({ status: "invalid", attemptsLeft: 0, lockedOutUntil: T0 + 3600 });
    expect(await p.approve("telegram", next)).toEqual({ status: "locked_out", until: T0 + 3600 });
    expect(await p.requestCode("telegram", { id: "44" })).toEqual({ status: "locked_out", until: T0 + 3600 });
    expect(await p.approve("discord", "BBBBBBBB")).toMatchObject({ status: "invalid", attemptsLeft: 4 });
    clock = T0 + 3600;
    expect(await p.approve("telegram", next)).toMatchObject({ status: "approved", userId: "43" });
  });

  it("lists pending requests by request id (never the code) and approved users, platforms sorted", async () => {
    const p = await fresh();
    const code = await codeFor(p, "7", "telegram");
    await codeFor(p, "8", "discord");
    await p.approve("telegram", code);
    await codeFor(p, "9", "telegram");
    const { pending, approved } = await p.list();
    expect(pending.map((r) => [r.platform, r.userId, r.createdAt, r.expiresAt])).toEqual([
      ["discord", "8", T0, T0 + 3600],
      ["telegram", "9", T0, T0 + 3600],
    ]);
    for (const r of pending) expect(r.requestId).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(pending)).not.toContain(code);
    expect(approved).toEqual([{ platform: "telegram", userId: "7", userName: "name-7", approvedAt: T0 }]);
  });

  it("lists approved users in the file's key order (numeric ids first, then as approved)", async () => {
    const p = await fresh();
    for (const id of ["bob", "20", "alice", "3"]) {
      await p.approve("slack", await codeFor(p, id, "slack"));
    }
    expect((await p.listApproved("slack")).map((u) => u.userId)).toEqual(["3", "20", "bob", "alice"]);
  });

  it("revokes, denies by request id, and clears pending requests", async () => {
    const p = await fresh();
    await p.approve("telegram", await codeFor(p, "1"));
    expect(await p.revoke("telegram", "1")).toBe(true);
    expect(await p.revoke("telegram", "1")).toBe(false);
    expect(await p.isApproved("telegram", "1")).toBe(false);
    await codeFor(p, "2");
    await codeFor(p, "3");
    const [first] = (await p.list()).pending;
    expect(await p.deny("telegram", first!.requestId)).toBe(true);
    expect(await p.deny("telegram", first!.requestId)).toBe(false);
    expect(await p.deny("telegram", "")).toBe(false);
    expect((await p.list()).pending.map((r) => r.userId)).toEqual(["3"]);
    await codeFor(p, "4", "discord");
    expect(await p.clearPending("telegram")).toBe(1);
    expect(await p.clearPending()).toBe(1);
    expect((await p.list()).pending).toEqual([]);
    expect(await p.listApproved("telegram")).toEqual([]);
  });

  it("does not deny an expired request (it is gone already)", async () => {
    const p = await fresh();
    await codeFor(p, "2");
    const [r] = (await p.list()).pending;
    clock = T0 + 3601;
    expect(await p.deny("telegram", r!.requestId)).toBe(false);
  });

  describe("several instances on one storage", () => {
    it("approves a code once when two instances approve it at the same moment", async () => {
      clock = T0;
      const s = await storage(kind);
      const [a, b] = [await instance(s), await instance(s)];
      const code = await codeFor(a, "42");
      const results = await Promise.all([a.approve("telegram", code), b.approve("telegram", code)]);
      expect(results.map((r) => r.status).sort()).toEqual(["approved", "invalid"]);
      expect(await b.listApproved("telegram")).toHaveLength(1);
    });

    it("counts rate limits, pending slots and the failure streak across instances", async () => {
      clock = T0;
      const s = await storage(kind);
      const [a, b] = [await instance(s), await instance(s)];
      await codeFor(a, "42");
      expect(await b.requestCode("telegram", { id: "42" })).toMatchObject({ status: "rate_limited" });
      const asked = await Promise.all(
        ["1", "2", "3", "4", "5", "6"].map((id, i) => (i % 2 ? a : b).requestCode("telegram", { id })),
      );
      expect(asked.filter((r) => r.status === "created")).toHaveLength(2);
      expect(asked.filter((r) => r.status === "too_many_pending")).toHaveLength(4);
      for (let i = 0; i < 3; i++) await a.approve("telegram", "CCCCCCCC");
      await b.approve("telegram", "CCCCCCCC");
      expect(await a.approve("telegram", "CCCCCCCC")).toMatchObject({
        attemptsLeft: 0,
        lockedOutUntil: T0 + 3600,
      });
      expect(await b.approve("telegram", "CCCCCCCC")).toMatchObject({ status: "locked_out" });
    });
  });

  it("mixed changes racing through two instances all finish (no deadlock), within the limits", async () => {
    clock = T0;
    const s = await storage(kind);
    const [a, b] = [await instance(s), await instance(s)];
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      const p = i % 2 ? a : b;
      const platform = ["telegram", "discord", "slack"][i % 3]!;
      ops.push(p.requestCode(platform, { id: `u${i}` }));
      ops.push(p.approve(platform, "QQQQQQQQ"));
      ops.push(p.list());
      if (i % 4 === 0) ops.push(p.clearPending(i % 8 ? platform : undefined));
    }
    const settled = await Promise.allSettled(ops);
    expect(settled.filter((r) => r.status === "rejected")).toEqual([]);
    const { pending } = await a.list();
    for (const platform of ["telegram", "discord", "slack"]) {
      expect(pending.filter((r) => r.platform === platform).length).toBeLessThanOrEqual(3);
    }
  });

  describe("attacks", () => {
    it("guessing in parallel through three instances gets 5 tries in all, never more", async () => {
      clock = T0;
      const s = await storage(kind);
      const all = [await instance(s), await instance(s), await instance(s)];
      const code = await codeFor(all[0]!, "42");
      const guesses = Array.from({ length: 30 }, (_, i) =>
        `G${String(i).padStart(7, "2")}`.replace(/[01]/g, "Z"),
      );
      const answers = await Promise.all(guesses.map((g, i) => all[i % 3]!.approve("telegram", g)));
      expect(answers.filter((a) => a.status === "invalid")).toHaveLength(5);
      expect(answers.filter((a) => a.status === "locked_out")).toHaveLength(25);
      expect(await all[1]!.approve("telegram", code)).toMatchObject({ status: "locked_out" });
    });

    it("a guessed, oversized or malformed code is a miss, never an error or an approval", async () => {
      const p = await fresh();
      await codeFor(p, "42");
      for (const guess of ["A".repeat(1_000_000), "ABCD\u0000EFG", "' OR 1=1 --", "%", ""]) {
        expect(await p.approve("telegram", guess)).toMatchObject({ status: "invalid" });
      }
      expect(await p.approve("telegram", "ZZZZZZZZ")).toMatchObject({ status: "locked_out" });
      expect(await p.listApproved("telegram")).toEqual([]);
    });

    it("a code for one platform does not approve on another", async () => {
      const p = await fresh();
      const code = await codeFor(p, "42", "telegram");
      expect(await p.approve("discord", code)).toMatchObject({ status: "invalid" });
      expect(await p.approve("telegram", code)).toMatchObject({ status: "approved" });
    });

    it("refuses platform names that are not plain names, before touching anything", async () => {
      const p = await fresh();
      for (const bad of ["../etc", "", "tele gram", "a".repeat(65), "_rate_limits", "x\u0000"]) {
        await expect(p.requestCode(bad, { id: "1" })).rejects.toThrow(PairingUsageError);
        await expect(p.approve(bad, "ABCDEFGH")).rejects.toThrow(PairingUsageError);
        await expect(p.listApproved(bad)).rejects.toThrow(PairingUsageError);
      }
      expect(await p.requestCode("a".repeat(64), { id: "1" })).toMatchObject({ status: "created" });
      await expect(p.requestCode("telegram", { id: "   " })).rejects.toThrow(PairingUsageError);
    });

    it("user ids shaped like object keys are ordinary users, not approved by default", async () => {
      const p = await fresh();
      for (const id of ["__proto__", "constructor", "toString"]) {
        expect(await p.isApproved("telegram", id)).toBe(false);
        expect(await p.revoke("telegram", id)).toBe(false);
      }
      expect(await p.approve("telegram", await codeFor(p, "__proto__"))).toMatchObject({
        status: "approved",
      });
      expect(await p.isApproved("telegram", "__proto__")).toBe(true);
      expect([...(await p.approvedIds("telegram"))]).toEqual(["__proto__"]);
      expect(await p.requestCode("telegram", { id: "constructor" })).toMatchObject({ status: "created" });
    });

    it("keeps a 100 kB user id and an odd name intact", async () => {
      const p = await fresh();
      const id = "u".repeat(100_000);
      const name = "Zoë 🚀 'quoted' \"double\" \\ back";
      const r = await p.requestCode("matrix", { id, name });
      if (r.status !== "created") throw new Error(r.status);
      expect(await p.approve("matrix", r.code)).toEqual({
        status: "approved",
        platform: "matrix",
        userId: id,
        userName: name,
      });
      expect(await p.isApproved("matrix", id)).toBe(true);
    });
  });
});

describe.skipIf(!BACKENDS.includes("postgres"))("pairing records in PostgreSQL only", () => {
  it("stores no code, only its salted hash", async () => {
    const s = await storage("postgres");
    const db = await s.pool();
    const p = pgPairingRecords(db, { now: () => T0 });
    const r = await p.requestCode("telegram", { id: "42", name: "alice" });
    if (r.status !== "created") throw new Error(r.status);
    const rows = await db.query("SELECT * FROM gateway_pairing_pending");
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(r.code);
    expect(rows[0]).toMatchObject({ hash: expect.stringMatching(/^[0-9a-f]{64}$/), user_id: "42" });
  });

  it("refuses a NUL in a user's id or name with a clear error and stores nothing", async () => {
    const s = await storage("postgres");
    const db = await s.pool();
    const p = pgPairingRecords(db, { now: () => T0 });
    await expect(p.requestCode("telegram", { id: "4\u00002" })).rejects.toThrow(/user id contains a NUL/);
    await expect(p.requestCode("telegram", { id: "42", name: "a\u0000b" })).rejects.toThrow(
      PairingUsageError,
    );
    expect(await db.query("SELECT * FROM gateway_pairing_pending")).toEqual([]);
    expect(await p.isApproved("telegram", "4\u00002")).toBe(false);
  });
});
