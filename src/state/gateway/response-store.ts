/**
 * Responses API continuity in `response_store.db`, the file and tables Python Hermes keeps:
 * `responses(response_id, data, accessed_at)` with `data` the JSON `{response, conversation_history,
 * instructions, session_id}`, and `conversations(name, response_id)` for named conversations. The
 * latest `capacity` responses are kept (least recently read or written go first), so a restart
 * loses nothing and a client built for Python Hermes finds its `previous_response_id`s. When the
 * file cannot be opened the store falls back to memory (as upstream does) and says why.
 */
import { join } from "node:path";
import { asyncView } from "../async-view.js";
import { type Db, loadDriver } from "../connection.js";
import {
  decodeStoredResponse,
  encodeStoredResponse,
  RESPONSE_TABLES_SQL,
  type ResponseRecords,
  type StoredResponse,
} from "./response-records.js";

export type { ResponseRecords, StoredResponse } from "./response-records.js";

export const RESPONSE_STORE_FILE = "response_store.db";

/**
 * The Responses store as the API server uses it: asynchronous, so a PostgreSQL backend can stand
 * behind it (the contract lives in state/gateway/response-records.ts); `responseRecords` puts the
 * SQLite `ResponseStore` behind it.
 */
export function responseRecords(store: ResponseStore): ResponseRecords {
  return {
    ...asyncView(store, ["get", "put", "delete", "conversation", "setConversation", "close"]),
    capacity: store.capacity,
  };
}

export class ResponseStore {
  private readonly db: Db;
  private last = 0;

  /**
   * Opens (creating) `<home>/response_store.db`; `home` undefined keeps everything in memory.
   * `onWarning` hears why the file could not be used.
   */
  constructor(
    home: string | undefined,
    readonly capacity = 100,
    onWarning?: (message: string) => void,
  ) {
    const Driver = loadDriver();
    let db: Db;
    try {
      db = new Driver(home ? join(home, RESPONSE_STORE_FILE) : ":memory:");
      db.pragma("busy_timeout = 5000");
      try {
        db.pragma("journal_mode = WAL");
      } catch {
        // Network filesystems refuse WAL; the default journal still works there.
      }
      createTables(db);
    } catch (error) {
      onWarning?.(
        `${RESPONSE_STORE_FILE} could not be opened (${String(error)}); stored responses are kept in ` +
          "memory until the server stops.",
      );
      db = new Driver(":memory:");
      createTables(db);
    }
    this.db = db;
  }

  get size(): number {
    const row = this.db.prepare("SELECT COUNT(*) AS n FROM responses").get() as { n: number };
    return row.n;
  }

  /** The stored response (its access time refreshed), or undefined; a damaged row counts as absent. */
  get(id: string): StoredResponse | undefined {
    const row = this.db.prepare("SELECT data FROM responses WHERE response_id = ?").get(id) as
      | { data: string }
      | undefined;
    if (!row) return undefined;
    const parsed = decodeStoredResponse(row.data);
    if (!parsed) return undefined;
    this.db.prepare("UPDATE responses SET accessed_at = ? WHERE response_id = ?").run(this.now(), id);
    return parsed;
  }

  /** Stores (or replaces) a response, then evicts the least recently used past `capacity`. */
  put(id: string, entry: StoredResponse): void {
    const data = encodeStoredResponse(entry);
    this.db.transaction(() => {
      this.db
        .prepare("INSERT OR REPLACE INTO responses (response_id, data, accessed_at) VALUES (?, ?, ?)")
        .run(id, data, this.now());
      const over = this.size - this.capacity;
      if (over > 0) {
        this.db
          .prepare(
            "DELETE FROM responses WHERE response_id IN " +
              "(SELECT response_id FROM responses ORDER BY accessed_at ASC LIMIT ?)",
          )
          .run(over);
      }
    })();
  }

  delete(id: string): boolean {
    return this.db.prepare("DELETE FROM responses WHERE response_id = ?").run(id).changes > 0;
  }

  /** The latest response id of a named conversation, or undefined for a new name. */
  conversation(name: string): string | undefined {
    const row = this.db.prepare("SELECT response_id FROM conversations WHERE name = ?").get(name) as
      | { response_id: string }
      | undefined;
    return row?.response_id;
  }

  setConversation(name: string, responseId: string): void {
    this.db
      .prepare("INSERT OR REPLACE INTO conversations (name, response_id) VALUES (?, ?)")
      .run(name, responseId);
  }

  close(): void {
    this.db.close();
  }

  /**
   * Seconds, as Python's `time.time()` writes `accessed_at`; strictly increasing, so accesses in
   * the same millisecond still evict in the order they happened.
   */
  private now(): number {
    this.last = Math.max(Date.now() / 1000, this.last + 1e-6);
    return this.last;
  }
}

function createTables(db: Db): void {
  db.exec(RESPONSE_TABLES_SQL);
}
