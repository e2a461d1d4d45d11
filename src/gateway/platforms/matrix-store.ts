/**
 * A Matrix crypto store that survives a gateway restart. The SDK's Rust crypto keeps its keys in
 * IndexedDB, which Node lacks: with the optional package `fake-indexeddb` (a complete in-memory
 * IndexedDB) installed as the process's IndexedDB, the store's databases are copied to
 * `<home>/matrix/crypto-store.bin` (0600, folder 0700) after syncs and at stop, and copied back in
 * before the crypto starts. So the bot keeps its device (a password login asks for the same device
 * id again), its identity keys and its Olm/Megolm sessions, and decrypts what arrives after a
 * restart without being verified again. Without the package the store stays in memory, as before.
 *
 * The file holds the device's private keys: it is written atomically, owner-only, and is bound to
 * the user and device it belongs to (a snapshot of another device is moved aside, never loaded).
 * Changes in the last moments before a crash (SIGKILL) may be lost; a clean stop saves everything.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { atomicWriteFile } from "../../util/atomic-write.js";

/** The SDK's crypto databases are `matrix-js-sdk::matrix-sdk-crypto` and `…-meta` (its RUST_SDK_STORE_PREFIX). */
export const CRYPTO_DB_PREFIX = "matrix-js-sdk::";

const FORMAT = 1;

export const matrixDir = (home: string): string => join(home, "matrix");
export const cryptoStorePath = (home: string): string => join(matrixDir(home), "crypto-store.bin");

/** The IndexedDB factory surface the copy uses (the standard API). */
export type IdbFactory = {
  databases(): Promise<Array<{ name?: string; version?: number }>>;
  open(name: string, version?: number): IdbOpenRequest;
};
type IdbRequest<T> = {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
};
type IdbOpenRequest = IdbRequest<IdbDatabase> & { onupgradeneeded: (() => void) | null };
type IdbIndex = { keyPath: string | string[]; unique: boolean; multiEntry: boolean };
type IdbCursor = { primaryKey: unknown; value: unknown; continue(): void };
type IdbStore = {
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexNames: ArrayLike<string>;
  index(name: string): IdbIndex;
  openCursor(): IdbRequest<IdbCursor | null>;
  put(value: unknown, key?: unknown): unknown;
  createIndex(name: string, keyPath: string | string[], options: Record<string, boolean>): unknown;
};
type IdbTransaction = {
  objectStore(name: string): IdbStore;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
  error: unknown;
};
type IdbDatabase = {
  objectStoreNames: ArrayLike<string>;
  transaction(names: string[], mode: "readonly" | "readwrite"): IdbTransaction;
  createObjectStore(name: string, options: Record<string, unknown>): IdbStore;
  close(): void;
};

/** One database as copied: its version, stores, their indexes and every record. */
export interface DatabaseCopy {
  name: string;
  version: number;
  stores: Array<{
    name: string;
    keyPath: string | string[] | null;
    autoIncrement: boolean;
    indexes: Array<{ name: string; keyPath: string | string[]; unique: boolean; multiEntry: boolean }>;
    /** [primary key, value] pairs. */
    records: Array<[unknown, unknown]>;
  }>;
}

const done = <T>(request: IdbRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

const finished = (tx: IdbTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });

/** Copies every database whose name starts with `prefix`, each in one read transaction (consistent). */
export async function copyDatabases(factory: IdbFactory, prefix: string): Promise<DatabaseCopy[]> {
  const out: DatabaseCopy[] = [];
  for (const info of await factory.databases()) {
    if (!info.name?.startsWith(prefix)) continue;
    const db = await done(factory.open(info.name));
    try {
      const names = Array.from(db.objectStoreNames);
      const copy: DatabaseCopy = { name: info.name, version: info.version ?? 1, stores: [] };
      if (names.length > 0) {
        const tx = db.transaction(names, "readonly");
        for (const name of names) {
          const store = tx.objectStore(name);
          const records: Array<[unknown, unknown]> = [];
          await new Promise<void>((resolve, reject) => {
            const cursor = store.openCursor();
            cursor.onsuccess = () => {
              const at = cursor.result;
              if (!at) return resolve();
              records.push([at.primaryKey, at.value]);
              at.continue();
            };
            cursor.onerror = () => reject(cursor.error);
          });
          copy.stores.push({
            name,
            keyPath: store.keyPath,
            autoIncrement: store.autoIncrement,
            indexes: Array.from(store.indexNames).map((n) => {
              const index = store.index(n);
              return { name: n, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
            }),
            records,
          });
        }
        await finished(tx);
      }
      out.push(copy);
    } finally {
      db.close();
    }
  }
  return out;
}

/** Recreates copied databases that do not exist yet (an existing one is left as it is). */
export async function restoreDatabases(factory: IdbFactory, copies: readonly DatabaseCopy[]): Promise<void> {
  const existing = new Set((await factory.databases()).map((d) => d.name));
  for (const copy of copies) {
    if (existing.has(copy.name)) continue;
    const request = factory.open(copy.name, copy.version);
    request.onupgradeneeded = () => {
      for (const s of copy.stores) {
        const store = request.result.createObjectStore(s.name, {
          keyPath: s.keyPath,
          autoIncrement: s.autoIncrement,
        });
        for (const i of s.indexes)
          store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
      }
    };
    const db = await done(request);
    try {
      if (copy.stores.length === 0) continue;
      const tx = db.transaction(
        copy.stores.map((s) => s.name),
        "readwrite",
      );
      for (const s of copy.stores) {
        const store = tx.objectStore(s.name);
        for (const [key, value] of s.records) {
          if (s.keyPath === null) store.put(value, key);
          else store.put(value);
        }
      }
      await finished(tx);
    } finally {
      db.close();
    }
  }
}

/**
 * Makes `fake-indexeddb` the process's IndexedDB when there is none; the factory, or null when
 * the package is not installed (the crypto store then stays in memory).
 */
export function installIndexedDb(
  load: (name: string) => unknown = (name) => createRequire(import.meta.url)(name),
): IdbFactory | null {
  const g = globalThis as { indexedDB?: IdbFactory };
  if (g.indexedDB) return g.indexedDB;
  try {
    load("fake-indexeddb/auto");
  } catch {
    return null;
  }
  return g.indexedDB ?? null;
}

interface StoreFile {
  format: number;
  user_id: string;
  device_id: string;
  saved_at: string;
  databases: DatabaseCopy[];
}

/** The saved crypto store of one home's Matrix bot. */
export class MatrixCryptoStore {
  private last: Buffer | undefined;
  private saving: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private bound: { user: string; device: string } | undefined;

  constructor(
    private readonly home: string,
    private readonly factory: IdbFactory,
    private readonly report: (line: string) => void = () => undefined,
  ) {}

  private read(): StoreFile | undefined {
    let raw: Buffer;
    try {
      raw = readFileSync(cryptoStorePath(this.home));
    } catch {
      return undefined;
    }
    try {
      const file = deserialize(raw) as StoreFile;
      if (file?.format === FORMAT && typeof file.device_id === "string" && Array.isArray(file.databases))
        return file;
    } catch {
      // reported below
    }
    this.setAside("it could not be read");
    return undefined;
  }

  private setAside(why: string): void {
    const path = cryptoStorePath(this.home);
    const aside = `${path}.${Date.now()}.old`;
    try {
      renameSync(path, aside);
      this.report(
        `Matrix crypto store ${path} was set aside as ${aside}: ${why}; this start uses a new device`,
      );
    } catch {
      // nothing there
    }
  }

  /** The device the saved store belongs to, when it belongs to `userId`. */
  savedDevice(userId: string): string | undefined {
    const file = this.read();
    return file && file.user_id === userId ? file.device_id : undefined;
  }

  /**
   * Loads the saved store into IndexedDB when it belongs to this user and device; true when it
   * did. A store of another user or device is set aside (its keys would not match the device).
   */
  async restore(userId: string, deviceId: string): Promise<boolean> {
    this.bound = { user: userId, device: deviceId };
    const file = this.read();
    if (!file) return false;
    if (file.user_id !== userId || file.device_id !== deviceId) {
      this.setAside(
        `it belongs to ${file.user_id} device ${file.device_id}, not ${userId} device ${deviceId}`,
      );
      return false;
    }
    await restoreDatabases(this.factory, file.databases);
    return true;
  }

  /** Saves soon (after a burst of syncs settles). */
  saveSoon(delayMs = 1000): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save().catch((err: unknown) =>
        this.report(
          `could not save the Matrix crypto store: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    }, delayMs);
    this.timer.unref?.();
  }

  /** Saves now (one save at a time; unchanged content is not rewritten). */
  save(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const bound = this.bound;
    if (!bound) return this.saving;
    this.saving = this.saving.then(async () => {
      const databases = await copyDatabases(this.factory, CRYPTO_DB_PREFIX);
      const body = serialize(databases);
      if (this.last?.equals(body)) return;
      const file: StoreFile = {
        format: FORMAT,
        user_id: bound.user,
        device_id: bound.device,
        saved_at: new Date().toISOString(),
        databases,
      };
      mkdirSync(matrixDir(this.home), { recursive: true, mode: 0o700 });
      chmodSync(matrixDir(this.home), 0o700);
      await atomicWriteFile(cryptoStorePath(this.home), serialize(file), { mode: 0o600 });
      this.last = body;
    });
    return this.saving;
  }
}
