/**
 * The saved Matrix crypto store: without `fake-indexeddb` nothing is installed (the store stays in
 * memory, as before); with it, databases are copied to `<home>/matrix/crypto-store.bin` (0600,
 * folder 0700) and back with their versions, stores, indexes and records (in-line and out-of-line
 * keys, binary values); a snapshot is bound to its user and device, and one of another device or
 * an unreadable one is set aside, never loaded. The Rust crypto itself round-trips in the
 * end-to-end test (matrix-restart.test.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CRYPTO_DB_PREFIX,
  copyDatabases,
  cryptoStorePath,
  type IdbFactory,
  installIndexedDb,
  MatrixCryptoStore,
} from "../../../src/gateway/platforms/matrix-store.js";

const fakeIdb = (() => {
  try {
    return createRequire(import.meta.url)("fake-indexeddb") as {
      IDBFactory: new () => IdbFactory;
    };
  } catch {
    return undefined;
  }
})();

describe("installIndexedDb", () => {
  it("without the package installs nothing and says so with null", () => {
    const g = globalThis as { indexedDB?: unknown };
    const had = g.indexedDB;
    delete g.indexedDB;
    try {
      expect(
        installIndexedDb(() => {
          throw new Error("Cannot find module 'fake-indexeddb/auto'");
        }),
      ).toBeNull();
      expect(g.indexedDB).toBeUndefined();
    } finally {
      if (had) g.indexedDB = had;
    }
  });

  it("keeps an IndexedDB the process already has", () => {
    const g = globalThis as { indexedDB?: unknown };
    const had = g.indexedDB;
    const existing = { databases: async () => [], open: () => ({}) };
    g.indexedDB = existing;
    try {
      expect(installIndexedDb(() => ({}))).toBe(existing);
    } finally {
      if (had) g.indexedDB = had;
      else delete g.indexedDB;
    }
  });
});

const req = <T>(r: { onsuccess: unknown; onerror: unknown; result: T; error: unknown }) =>
  new Promise<T>((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });

/** A crypto-like database: a keyPath store with an index and an out-of-line store of bytes. */
async function seed(factory: IdbFactory): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: the IndexedDB API at a test boundary
  const open = (factory as any).open(`${CRYPTO_DB_PREFIX}matrix-sdk-crypto`, 7);
  open.onupgradeneeded = () => {
    const db = open.result;
    const sessions = db.createObjectStore("sessions", { keyPath: ["room", "id"] });
    sessions.createIndex("by_room", "room", { unique: false });
    db.createObjectStore("core");
  };
  const db = await req<{
    transaction: (
      n: string[],
      m: string,
    ) => {
      objectStore: (n: string) => { put: (v: unknown, k?: unknown) => void };
      oncomplete: unknown;
    };
    close: () => void;
  }>(open);
  const tx = db.transaction(["sessions", "core"], "readwrite");
  tx.objectStore("sessions").put({ room: "!r", id: "s1", key: new Uint8Array([1, 2, 3]) });
  tx.objectStore("sessions").put({ room: "!q", id: "s2", key: new Uint8Array([4]) });
  tx.objectStore("core").put(new Uint8Array([9, 9, 9]), "account");
  await new Promise((resolve) => {
    tx.oncomplete = resolve;
  });
  db.close();
}

describe.skipIf(!fakeIdb)("MatrixCryptoStore (fake-indexeddb installed)", () => {
  const fresh = () => new (fakeIdb as { IDBFactory: new () => IdbFactory }).IDBFactory();

  it("saves owner-only and loads the same databases into a new process's IndexedDB", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-mx-"));
    const first = fresh();
    await seed(first);
    const store = new MatrixCryptoStore(home, first);
    expect(await store.restore("@bot:x", "DEV1")).toBe(false); // nothing saved yet
    await store.save();
    expect(statSync(cryptoStorePath(home)).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "matrix")).mode & 0o777).toBe(0o700);

    const second = fresh();
    const again = new MatrixCryptoStore(home, second);
    expect(again.savedDevice("@bot:x")).toBe("DEV1");
    expect(again.savedDevice("@other:x")).toBeUndefined();
    expect(await again.restore("@bot:x", "DEV1")).toBe(true);
    expect(await copyDatabases(second, CRYPTO_DB_PREFIX)).toEqual(
      await copyDatabases(first, CRYPTO_DB_PREFIX),
    );
    const [db] = await copyDatabases(second, CRYPTO_DB_PREFIX);
    expect(db?.version).toBe(7);
    expect(db?.stores.find((s) => s.name === "sessions")?.indexes).toEqual([
      { name: "by_room", keyPath: "room", unique: false, multiEntry: false },
    ]);
    expect(db?.stores.find((s) => s.name === "core")?.records).toEqual([
      ["account", new Uint8Array([9, 9, 9])],
    ]);
  });

  it("sets aside a snapshot of another device, and an unreadable one, instead of loading it", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-mx-"));
    const first = fresh();
    await seed(first);
    const store = new MatrixCryptoStore(home, first);
    await store.restore("@bot:x", "DEV1");
    await store.save();
    const lines: string[] = [];
    const other = fresh();
    expect(await new MatrixCryptoStore(home, other, (l) => lines.push(l)).restore("@bot:x", "DEV2")).toBe(
      false,
    );
    expect(await copyDatabases(other, CRYPTO_DB_PREFIX)).toEqual([]);
    expect(lines.join("\n")).toContain("belongs to @bot:x device DEV1, not @bot:x device DEV2");
    expect(readdirSync(join(home, "matrix")).some((f) => f.endsWith(".old"))).toBe(true);

    mkdirSync(join(home, "matrix"), { recursive: true });
    writeFileSync(cryptoStorePath(home), "not a snapshot");
    const broken: string[] = [];
    expect(await new MatrixCryptoStore(home, fresh(), (l) => broken.push(l)).restore("@bot:x", "DEV1")).toBe(
      false,
    );
    expect(broken.join("\n")).toContain("could not be read");
  });

  it("does not rewrite an unchanged store", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-mx-"));
    const factory = fresh();
    await seed(factory);
    const store = new MatrixCryptoStore(home, factory);
    await store.restore("@bot:x", "DEV1");
    await store.save();
    const before = statSync(cryptoStorePath(home)).ino;
    await store.save();
    expect(statSync(cryptoStorePath(home)).ino).toBe(before);
  });
});
