/**
 * The pairing store against a temp home with a fake clock: codes, expiry, rate limit, max pending,
 * lockout, file modes, Python Hermes's file shapes, and corrupt files left alone.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CODE_ALPHABET,
  type CodeRequest,
  PairingFileError,
  PairingStore,
  PairingUsageError,
} from "../../../../src/state/gateway/pairing.js";

let home: string;
let now: number;
const T0 = 1_700_000_000;

function store(): PairingStore {
  return new PairingStore({ home, now: () => now });
}

async function codeFor(s: PairingStore, userId: string, name = ""): Promise<string> {
  const r = await s.requestCode("telegram", { id: userId, name });
  if (r.status !== "created") throw new Error(`expected a code, got ${r.status}`);
  return r.code;
}

const read = (file: string): unknown => JSON.parse(readFileSync(join(home, "pairing", file), "utf8"));

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hermes-pairing-"));
  now = T0;
});

describe("requestCode", () => {
  it("issues an 8-character code from the unambiguous alphabet, valid for 1 h", async () => {
    const r = await store().requestCode("Telegram", { id: "42", name: "alice" });
    expect(r.status).toBe("created");
    const { code, expiresAt } = r as Extract<CodeRequest, { status: "created" }>;
    expect(code).toMatch(new RegExp(`^[${CODE_ALPHABET}]{8}$`));
    expect(code).not.toMatch(/[01OI]/);
    expect(expiresAt).toBe(T0 + 3600);
  });

  it("draws each character from the injected random source", async () => {
    const picks = [0, 1, 2, 3, 28, 29, 30, 31];
    let i = 0;
    const s = new PairingStore({ home, now: () => now, randomInt: () => picks[i++ % picks.length] ?? 0 });
    const r = await s.requestCode("telegram", { id: "1" });
    expect(r).toMatchObject({ status: "created", code: "ABCD6789" });
  });

  it("stores only a salted hash of the code, in Python Hermes's shape, mode 0600", async () => {
    const code = await codeFor(store(), "42", "alice");
    const text = readFileSync(join(home, "pairing", "telegram-pending.json"), "utf8");
    expect(text).not.toContain(code);
    const pending = JSON.parse(text) as Record<string, Record<string, unknown>>;
    const [[id, entry]] = Object.entries(pending) as [[string, Record<string, unknown>]];
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(entry).toEqual({
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      salt: expect.stringMatching(/^[0-9a-f]{32}$/),
      user_id: "42",
      user_name: "alice",
      created_at: T0,
    });
    expect(read("_rate_limits.json")).toEqual({ "telegram:42": T0 });
    for (const f of ["telegram-pending.json", "_rate_limits.json"]) {
      expect(statSync(join(home, "pairing", f)).mode & 0o777).toBe(0o600);
    }
  });

  it("allows one request per user per 10 min, then replaces the old code", async () => {
    const s = store();
    const first = await codeFor(s, "42");
    now = T0 + 599;
    expect(await s.requestCode("telegram", { id: "42" })).toEqual({
      status: "rate_limited",
      retryAt: T0 + 600,
    });
    now = T0 + 600;
    const second = await codeFor(s, "42");
    expect((await s.list()).pending).toHaveLength(1);
    expect((await s.approve("telegram", first)).status).toBe("invalid");
    expect(await s.approve("telegram", second)).toMatchObject({ status: "approved", userId: "42" });
  });

  it("holds at most 3 pending requests per platform; other platforms are separate", async () => {
    const s = store();
    for (const id of ["1", "2", "3"]) await codeFor(s, id);
    expect(await s.requestCode("telegram", { id: "4" })).toEqual({ status: "too_many_pending", max: 3 });
    expect((await s.requestCode("discord", { id: "4" })).status).toBe("created");
    // Once one expires there is room again.
    now = T0 + 3601;
    expect((await s.requestCode("telegram", { id: "4" })).status).toBe("created");
  });

  it("tells an already-approved user so instead of issuing a code", async () => {
    const s = store();
    await s.approve("telegram", await codeFor(s, "42"));
    now += 700;
    expect(await s.requestCode("telegram", { id: "42" })).toEqual({ status: "already_approved" });
  });

  it("rejects a platform name that is not a safe file name", async () => {
    await expect(store().requestCode("../etc", { id: "1" })).rejects.toBeInstanceOf(PairingUsageError);
    await expect(store().requestCode("telegram", { id: " " })).rejects.toBeInstanceOf(PairingUsageError);
  });
});

describe("approve", () => {
  it("approves case-insensitively, records the user, and consumes the code", async () => {
    const s = store();
    const code = await codeFor(s, "42", "alice");
    now = T0 + 60;
    expect(await s.approve("TELEGRAM", ` ${code.toLowerCase()} `)).toEqual({
      status: "approved",
      platform: "telegram",
      userId: "42",
      userName: "alice",
    });
    expect(read("telegram-approved.json")).toEqual({ "42": { user_name: "alice", approved_at: T0 + 60 } });
    expect(statSync(join(home, "pairing", "telegram-approved.json")).mode & 0o777).toBe(0o600);
    expect(s.isApproved("telegram", "42")).toBe(true);
    expect(s.approvedIds("telegram")).toEqual(new Set(["42"]));
    expect(read("telegram-pending.json")).toEqual({});
    expect((await s.approve("telegram", code)).status).toBe("invalid");
  });

  it("refuses a code after its hour is up", async () => {
    const s = store();
    const code = await codeFor(s, "42");
    now = T0 + 3601;
    expect((await s.approve("telegram", code)).status).toBe("invalid");
    expect(s.isApproved("telegram", "42")).toBe(false);
    expect((await s.list()).pending).toEqual([]);
  });

  it("a code for one platform does not approve on another", async () => {
    const s = store();
    const code = await codeFor(s, "42");
    expect((await s.approve("discord", code)).status).toBe("invalid");
  });

  it("locks the platform for 1 h after 5 wrong codes, even for a valid code", async () => {
    const s = store();
    const code = await codeFor(s, "42");
    for (let left = 4; left >= 1; left--) {
      expect(await s.approve("telegram", "WRONG234")).toEqual({ status: "invalid", attemptsLeft: left });
    }
    expect(await s.approve("telegram", "WRONG234")).toEqual({
      status: "invalid",
      attemptsLeft: 0,
      lockedOutUntil: T0 + 3600,
    });
    expect(await s.approve("telegram", code)).toEqual({ status: "locked_out", until: T0 + 3600 });
    expect(await s.requestCode("telegram", { id: "7" })).toEqual({ status: "locked_out", until: T0 + 3600 });
    // Other platforms are unaffected.
    expect((await s.requestCode("discord", { id: "7" })).status).toBe("created");
    expect(read("_rate_limits.json")).toMatchObject({
      "_lockout:telegram": T0 + 3600,
      "_failures:telegram": 0,
    });
    now = T0 + 3600;
    const fresh = await codeFor(s, "9");
    expect((await s.approve("telegram", fresh)).status).toBe("approved");
  });

  it("a success resets the failure streak", async () => {
    const s = store();
    for (let i = 0; i < 4; i++) await s.approve("telegram", "WRONG234");
    await s.approve("telegram", await codeFor(s, "42"));
    expect(await s.approve("telegram", "WRONG234")).toEqual({ status: "invalid", attemptsLeft: 4 });
  });

  it("never puts the code in an error message", async () => {
    const s = store();
    const code = await codeFor(s, "42");
    writeFileSync(join(home, "pairing", "_rate_limits.json"), "{oops");
    const error = await s.approve("telegram", code).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairingFileError);
    expect(String((error as Error).message)).not.toContain(code);
  });
});

describe("list, revoke, clearPending", () => {
  it("lists pending requests (with request ids, never codes) and approved users across platforms", async () => {
    const s = store();
    const code = await codeFor(s, "1", "one");
    await s.requestCode("discord", { id: "2", name: "two" });
    await s.approve("telegram", code);
    now = T0 + 120;
    const { pending, approved } = await s.list();
    expect(JSON.stringify(pending)).not.toContain(code);
    expect(pending).toEqual([
      {
        platform: "discord",
        requestId: expect.stringMatching(/^[0-9a-f]{16}$/),
        userId: "2",
        userName: "two",
        createdAt: T0,
        expiresAt: T0 + 3600,
      },
    ]);
    expect(approved).toEqual([{ platform: "telegram", userId: "1", userName: "one", approvedAt: T0 }]);
  });

  it("revokes a paired user and says when there was none", async () => {
    const s = store();
    await s.approve("telegram", await codeFor(s, "42"));
    expect(await s.revoke("telegram", "42")).toBe(true);
    expect(s.isApproved("telegram", "42")).toBe(false);
    expect(await s.revoke("telegram", "42")).toBe(false);
    expect(read("telegram-approved.json")).toEqual({});
  });

  it("clears pending requests of one platform or all", async () => {
    const s = store();
    await codeFor(s, "1");
    await codeFor(s, "2");
    await s.requestCode("discord", { id: "3" });
    expect(await s.clearPending("discord")).toBe(1);
    expect((await s.list()).pending.map((p) => p.platform)).toEqual(["telegram", "telegram"]);
    expect(await s.clearPending()).toBe(2);
    expect(await s.clearPending()).toBe(0);
  });
});

describe("files written by Python Hermes", () => {
  // sha256(bytes.fromhex(salt) + b"ABCD2345"), computed with Python's hashlib.
  const salt = "00112233445566778899aabbccddeeff";
  const hash = "4c5e9f48b74339260bec5c6b22bf8bb73fd2d25801843c85c535554724b8c4eb";

  function seedPython(): void {
    const dir = join(home, "pairing");
    mkdirSync(dir, { recursive: true });
    // Python's json.dump output, with a legacy plaintext entry next to a current hashed one.
    writeFileSync(
      join(dir, "telegram-pending.json"),
      JSON.stringify({
        a1b2c3d4e5f60718: { hash, salt, user_id: "42", user_name: "alice", created_at: T0 - 10.5 },
        QWERTY23: { user_id: "77", user_name: "legacy", created_at: T0 - 5 },
      }),
    );
    writeFileSync(
      join(dir, "discord-approved.json"),
      JSON.stringify({ "999": { user_name: "bob", approved_at: T0 - 100.25 } }),
    );
    writeFileSync(
      join(dir, "_rate_limits.json"),
      JSON.stringify({ "telegram:42": T0 - 10.5, "_failures:telegram": 2 }),
    );
  }

  it("approves a code Python issued and keeps Python's other entries as they were", async () => {
    seedPython();
    const s = store();
    expect(s.isApproved("discord", "999")).toBe(true);
    expect((await s.list()).pending.map((p) => [p.userId, p.requestId])).toEqual([
      ["42", "a1b2c3d4e5f60718"],
      ["77", ""],
    ]);
    // Legacy plaintext codes are never approved (as in current Hermes).
    expect((await s.approve("telegram", "QWERTY23")).status).toBe("invalid");
    expect(await s.approve("telegram", "abcd2345")).toMatchObject({ status: "approved", userId: "42" });
    expect(read("telegram-pending.json")).toEqual({
      QWERTY23: { user_id: "77", user_name: "legacy", created_at: T0 - 5 },
    });
    expect(read("discord-approved.json")).toEqual({ "999": { user_name: "bob", approved_at: T0 - 100.25 } });
    expect(read("_rate_limits.json")).toEqual({ "telegram:42": T0 - 10.5, "_failures:telegram": 0 });
  });

  it("reads files with a UTF-8 byte-order mark", async () => {
    const dir = join(home, "pairing");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "telegram-approved.json"),
      `\uFEFF${JSON.stringify({ "5": { user_name: "", approved_at: 1 } })}`,
    );
    expect(store().isApproved("telegram", "5")).toBe(true);
  });

  it("uses platforms/pairing when only Hermes's newer layout exists", async () => {
    const dir = join(home, "platforms", "pairing");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "telegram-approved.json"),
      JSON.stringify({ "5": { user_name: "", approved_at: 1 } }),
    );
    expect(store().dir).toBe(dir);
    expect(store().isApproved("telegram", "5")).toBe(true);
  });

  it("reports a corrupt file, naming it, and does not overwrite it", async () => {
    const dir = join(home, "pairing");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "telegram-approved.json");
    const s = store();
    const code = await codeFor(s, "1");
    writeFileSync(path, '{"42": {"user_name": "al');
    const error = await s.approve("telegram", code).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairingFileError);
    expect((error as Error).message).toContain(path);
    expect(readFileSync(path, "utf8")).toBe('{"42": {"user_name": "al');
    expect(() => s.isApproved("telegram", "42")).toThrow(PairingFileError);
    await expect(s.revoke("telegram", "42")).rejects.toBeInstanceOf(PairingFileError);
    expect(readFileSync(path, "utf8")).toBe('{"42": {"user_name": "al');
  });

  it("treats a JSON array as corrupt too", async () => {
    const dir = join(home, "pairing");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "telegram-pending.json"), "[]");
    await expect(store().requestCode("telegram", { id: "1" })).rejects.toBeInstanceOf(PairingFileError);
    expect(readFileSync(join(dir, "telegram-pending.json"), "utf8")).toBe("[]");
  });
});

describe("deny", () => {
  it("drops one pending request by its id, leaves the others, approves nobody", async () => {
    const s = store();
    const keep = await codeFor(s, "1", "ann");
    await codeFor(s, "2", "bob");
    const { pending } = await s.list();
    const bob = pending.find((p) => p.userId === "2");
    expect(await s.deny("telegram", bob?.requestId ?? "")).toBe(true);
    expect((await s.list()).pending.map((p) => p.userId)).toEqual(["1"]);
    expect(s.isApproved("telegram", "2")).toBe(false);
    expect(await s.deny("telegram", bob?.requestId ?? "")).toBe(false);
    expect(await s.deny("telegram", "")).toBe(false);
    expect(await s.deny("telegram", "__proto__")).toBe(false);
    await expect(s.deny("../x", "abc")).rejects.toThrow(PairingUsageError);
    expect((await s.approve("telegram", keep)).status).toBe("approved");
  });

  it("does not count toward the lockout and ignores expired requests", async () => {
    const s = store();
    await codeFor(s, "3");
    const id = (await s.list()).pending[0]?.requestId ?? "";
    now = T0 + 3601;
    expect(await s.deny("telegram", id)).toBe(false);
    expect((read("_rate_limits.json") as Record<string, number>)["_failures:telegram"] ?? 0).toBe(0);
  });
});
