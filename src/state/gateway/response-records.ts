/**
 * The Responses API store's contract (`previous_response_id` continuity and named conversations),
 * below the gateway so any backend can implement it: the SQLite `response_store.db`
 * (gateway/api-server/response-store.ts) and PostgreSQL.
 */
import type { Message } from "../../ai/types.js";

/** What one stored response holds. */
export interface StoredResponse {
  /** The session (state.db) that produced it: a continuation resumes it. */
  sessionId: string;
  /** The response object `GET /v1/responses/{id}` returns. */
  response: Record<string, unknown>;
  /**
   * The conversation up to and including this response, OpenAI-shaped. Written for Python Hermes
   * (which replays it); read here only when the session is gone from state.db.
   */
  conversationHistory: Message[];
  /** The `instructions` the response was made with: carried to a continuation that sends none. */
  instructions: string | null;
}

/** The Responses store as the API server uses it (every method answers a promise). */
export interface ResponseRecords {
  /** How many responses are kept (least recently used go first). */
  readonly capacity: number;
  /** The stored response (its access time refreshed), or undefined; a damaged one counts as absent. */
  get(id: string): Promise<StoredResponse | undefined>;
  /** Stores (or replaces) a response, then evicts the least recently used past `capacity`. */
  put(id: string, entry: StoredResponse): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** The latest response id of a named conversation, or undefined for a new name. */
  conversation(name: string): Promise<string | undefined>;
  setConversation(name: string, responseId: string): Promise<void>;
  close(): Promise<void>;
}
