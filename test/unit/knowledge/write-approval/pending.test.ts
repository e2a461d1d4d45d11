/**
 * The pending store in Python Hermes's format: records it stages are read here, ids never become
 * paths outside `pending/<subsystem>/`, and a record is claimed by exactly one approver.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  memorySummary,
  skillGist,
  writeApprovalEnabled,
} from "../../../../src/knowledge/write-approval/gate.js";
import {
  claimPending,
  isPendingId,
  listPending,
  pendingCount,
  readPending,
  releaseClaim,
  stagePending,
} from "../../../../src/knowledge/write-approval/pending.js";

const home = () => mkdtempSync(join(tmpdir(), "hermes-pending-"));

/** A record exactly as Python's `stage_write` writes it (`atomic_json_write`, ensure_ascii). */
const PYTHON_RECORD = `{
  "id": "5e1d2c3b",
  "subsystem": "memory",
  "action": "add",
  "summary": "add to user profile: Prefers caf\\u00e9 au lait",
  "origin": "background_review",
  "created_at": 1764120000.123456,
  "payload": {"action": "add", "target": "user", "content": "Prefers caf\\u00e9 au lait", "old_text": null}
}`;

describe("pending ids", () => {
  it.each([
    ["5e1d2c3b", true],
    ["abc_DEF-9", true],
    ["../x", false],
    ["..", false],
    ["a/b", false],
    ["a\\b", false],
    ["x.json", false],
    ["", false],
    [" 5e1d2c3b", false],
    ["x".repeat(65), false],
    ["%2e%2e", false],
  ])("%j is an id: %s", (id, ok) => {
    expect(isPendingId(id)).toBe(ok);
  });
});

describe("pending store", () => {
  it("stages a record with upstream's keys at pending/<subsystem>/<id>.json", async () => {
    const h = home();
    const record = await stagePending(h, "skills", {
      payload: { action: "create", name: "x", content: "---\nname: x\n---\n" },
      summary: " create 'x' ",
      origin: "background_review",
      base: { file: "SKILL.md", sha256: null },
      now: () => 1_764_120_000_500,
    });
    expect(record.id).toMatch(/^[0-9a-f]{8}$/);
    const onDisk = JSON.parse(readFileSync(join(h, "pending", "skills", `${record.id}.json`), "utf8"));
    expect(onDisk).toEqual({
      id: record.id,
      subsystem: "skills",
      action: "create",
      summary: "create 'x'",
      origin: "background_review",
      created_at: 1_764_120_000.5,
      payload: { action: "create", name: "x", content: "---\nname: x\n---\n" },
      base: { file: "SKILL.md", sha256: null },
    });
    expect(pendingCount(h, "skills")).toBe(1);
    expect(pendingCount(h, "memory")).toBe(0);
  });

  it("reads a record Python Hermes staged (escaped unicode, float time, BOM, no base)", () => {
    const h = home();
    mkdirSync(join(h, "pending", "memory"), { recursive: true });
    writeFileSync(join(h, "pending", "memory", "5e1d2c3b.json"), `\uFEFF${PYTHON_RECORD}`);
    const read = readPending(h, "memory", "5e1d2c3b");
    expect(read).toEqual({
      ok: true,
      record: {
        id: "5e1d2c3b",
        subsystem: "memory",
        action: "add",
        summary: "add to user profile: Prefers café au lait",
        origin: "background_review",
        created_at: 1764120000.123456,
        payload: { action: "add", target: "user", content: "Prefers café au lait", old_text: null },
      },
    });
  });

  it("lists oldest first, reports unreadable files, ignores other names and claimed records", async () => {
    const h = home();
    const dir = join(h, "pending", "memory");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "bbbb.json"),
      JSON.stringify({ id: "bbbb", created_at: 20, payload: { action: "add" } }),
    );
    writeFileSync(
      join(dir, "aaaa.json"),
      JSON.stringify({ id: "aaaa", created_at: 10, payload: { action: "add" } }),
    );
    writeFileSync(join(dir, "broken.json"), "{not json");
    writeFileSync(join(dir, "notes.txt"), "ignored");
    writeFileSync(join(dir, "cccc.json.applying"), JSON.stringify({ id: "cccc", payload: {} }));
    const list = listPending(h, "memory");
    expect(list.map((r) => (r.ok ? r.record.id : `!${r.id}`))).toEqual(["!broken", "aaaa", "bbbb"]);
    expect(pendingCount(h, "memory")).toBe(3);
  });

  it("refuses a record whose id or subsystem disagrees with where it lies", () => {
    const h = home();
    const dir = join(h, "pending", "skills");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "aaaa.json"), JSON.stringify({ id: "bbbb", payload: {} }));
    writeFileSync(join(dir, "cccc.json"), JSON.stringify({ id: "cccc", subsystem: "memory", payload: {} }));
    expect(readPending(h, "skills", "aaaa")).toMatchObject({ ok: false });
    expect(readPending(h, "skills", "cccc")).toMatchObject({ ok: false });
  });

  it("never reads outside the folder: traversal ids find nothing", () => {
    const h = home();
    mkdirSync(join(h, "pending", "skills"), { recursive: true });
    writeFileSync(
      join(h, "pending", "evil.json"),
      JSON.stringify({ id: "evil", payload: { action: "delete" } }),
    );
    writeFileSync(join(h, "config.json"), JSON.stringify({ payload: {} }));
    for (const id of ["../evil", "../../config", "..%2fevil", "/etc/passwd", "skills/../../config"]) {
      expect(readPending(h, "skills", id)).toBeUndefined();
      expect(() => claimPending(h, "skills", id)).toThrow(/not a pending write id/);
    }
  });

  it("lets exactly one approver claim a record, and puts it back when released", async () => {
    const h = home();
    const { id } = await stagePending(h, "memory", { payload: { action: "add" }, summary: "s" });
    const first = claimPending(h, "memory", id);
    expect(first).toBeDefined();
    expect(claimPending(h, "memory", id)).toBeUndefined();
    expect(listPending(h, "memory")).toEqual([]);
    releaseClaim(first as string);
    expect(readdirSync(join(h, "pending", "memory"))).toEqual([`${id}.json`]);
  });
});

describe("gate words", () => {
  it.each<[unknown, boolean]>([
    [true, true],
    [false, false],
    ["on", true],
    ["Yes", true],
    ["approve", true],
    ["off", false],
    ["maybe", false],
    [1, false],
    [undefined, false],
  ])("write_approval %j → %s", (value, on) => {
    expect(writeApprovalEnabled({ skills: { write_approval: value } }, "skills")).toBe(on);
    expect(writeApprovalEnabled({ skills: { write_approval: value } }, "memory")).toBe(false);
  });

  it("summarises writes as upstream does", () => {
    expect(
      skillGist({ action: "create", name: "x", content: "---\nname: x\ndescription: 'Does X.'\n---\nbody" }),
    ).toBe("create 'x' — Does X. (43 chars)");
    expect(skillGist({ action: "patch", name: "x", old_string: "a\nb", new_string: "c" })).toBe(
      "patch 'x' SKILL.md (+1/-2 lines)",
    );
    expect(skillGist({ action: "delete", name: "x" })).toBe("delete skill 'x'");
    expect(memorySummary({ action: "replace", target: "user", old_text: "tea", content: "coffee" })).toBe(
      "replace in user profile: tea → coffee",
    );
    expect(
      memorySummary({ action: "batch", target: "memory", operations: [{ action: "remove", old_text: "x" }] }),
    ).toBe("apply 1 op(s) to memory: remove: x");
  });
});
