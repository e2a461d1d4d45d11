import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { schemaStamp } from "../../../src/state/schema.js";
import { isKnownComplete, recordComplete, stampsFile } from "../../../src/state/schema-stamps.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();
let savedCache: string | undefined;

beforeEach(() => {
  savedCache = process.env["XDG_CACHE_HOME"];
  process.env["XDG_CACHE_HOME"] = mkdtempSync(join(tmpdir(), "hermes-stamps-"));
});
afterEach(() => {
  if (savedCache === undefined) delete process.env["XDG_CACHE_HOME"];
  else process.env["XDG_CACHE_HOME"] = savedCache;
});

const stampOf = (path: string) => {
  const db = rawDb(path, { readonly: true });
  try {
    return schemaStamp(db);
  } finally {
    db.close();
  }
};
const triggers = (path: string) => {
  const db = rawDb(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as { name: string }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
};

describe("schema stamps", () => {
  it("records a complete schema once, and the same file reopened keeps its stamp", () => {
    const path = join(dir(), "state.db");
    track(openSqliteStore(path)).close();
    const stamp = stampOf(path);
    expect(isKnownComplete(stamp)).toBe(true);
    expect(readFileSync(stampsFile(), "utf8")).toBe(`${stamp}\n`);
    track(openSqliteStore(path)).close();
    expect(stampOf(path)).toBe(stamp);
    expect(readFileSync(stampsFile(), "utf8")).toBe(`${stamp}\n`);
  });

  it("any change to the schema is a new stamp, so a dropped trigger or a lost version row is put back", () => {
    const path = join(dir(), "state.db");
    track(openSqliteStore(path)).close();
    const complete = stampOf(path);
    const db = rawDb(path);
    db.prepare("DROP TRIGGER messages_fts_trigram_insert").run();
    db.prepare("DELETE FROM schema_version").run();
    db.close();
    expect(stampOf(path)).not.toBe(complete);
    track(openSqliteStore(path)).close();
    expect(triggers(path)).toContain("messages_fts_trigram_insert");
    const check = rawDb(path, { readonly: true });
    expect(check.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 17 }]);
    check.close();
    expect(stampOf(path)).toBe(complete);
  });

  it("a column another Hermes added is a schema of its own, found complete and recorded", () => {
    const path = join(dir(), "state.db");
    track(openSqliteStore(path)).close();
    const db = rawDb(path);
    db.prepare("ALTER TABLE sessions ADD COLUMN newer_hermes_field TEXT").run();
    db.close();
    const widened = stampOf(path);
    expect(isKnownComplete(widened)).toBe(false);
    track(openSqliteStore(path)).close();
    expect(isKnownComplete(widened)).toBe(true);
  });

  it("trusts a recorded stamp without comparing (which is why only complete schemas are recorded)", () => {
    const path = join(dir(), "state.db");
    track(openSqliteStore(path)).close();
    const db = rawDb(path);
    db.prepare("DROP TRIGGER messages_fts_insert").run();
    db.close();
    recordComplete(stampOf(path));
    track(openSqliteStore(path)).close();
    expect(triggers(path)).not.toContain("messages_fts_insert");
  });

  it("ignores lines that are not stamps, keeps the newest sixteen, and survives an unwritable cache", () => {
    const file = stampsFile();
    const stamps = Array.from({ length: 20 }, (_, i) => i.toString(16).padStart(64, "0"));
    for (const s of stamps) recordComplete(s);
    const kept = readFileSync(file, "utf8").trim().split("\n");
    expect(kept).toHaveLength(16);
    expect(kept[0]).toBe(stamps[19]);
    expect(isKnownComplete(stamps[0] ?? "")).toBe(false);
    writeFileSync(file, `not a stamp\n${"A".repeat(64)}\n${stamps[3]}\n`);
    expect(isKnownComplete("A".repeat(64))).toBe(false);
    expect(isKnownComplete(stamps[3] ?? "")).toBe(true);
    const blocked = join(dir(), "file");
    writeFileSync(blocked, "");
    process.env["XDG_CACHE_HOME"] = blocked;
    const path = join(dir(), "state.db");
    expect(() => track(openSqliteStore(path)).close()).not.toThrow();
    expect(isKnownComplete(stampOf(path))).toBe(false);
  });
});
