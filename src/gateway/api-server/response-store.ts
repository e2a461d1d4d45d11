/**
 * Responses API continuity: response id → the session that produced it, with the response object
 * for `GET /v1/responses/{id}`. Kept in memory, least recently used first out (Hermes keeps the
 * same mapping in `response_store.db`; here it is lost when the server restarts, and the sessions
 * themselves stay in state.db).
 */

export interface StoredResponse {
  sessionId: string;
  response: Record<string, unknown>;
}

export class ResponseStore {
  private readonly entries = new Map<string, StoredResponse>();

  constructor(readonly capacity = 100) {}

  get size(): number {
    return this.entries.size;
  }

  /** The stored response (marked most recently used), or undefined. */
  get(id: string): StoredResponse | undefined {
    const entry = this.entries.get(id);
    if (entry) {
      this.entries.delete(id);
      this.entries.set(id, entry);
    }
    return entry;
  }

  set(id: string, entry: StoredResponse): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  delete(id: string): boolean {
    return this.entries.delete(id);
  }
}
