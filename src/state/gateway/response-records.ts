/**
 * The Responses API store's contract (stored responses for `previous_response_id`, and named
 * conversations), below the gateway so every backend can implement it: the SQLite file
 * `response_store.db` (state/gateway/response-store.ts) and PostgreSQL
 * (state/postgres/gateway-responses.ts). Both keep a response as the JSON Python Hermes writes:
 * `{response, conversation_history, instructions, session_id}`.
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

/** The Responses store as the API server uses it. */
export interface ResponseRecords {
  /** The stored response (its access time refreshed), or undefined; a damaged one counts as absent. */
  get(id: string): Promise<StoredResponse | undefined>;
  /** Stores (or replaces) a response, then evicts the least recently used past `capacity`. */
  put(id: string, entry: StoredResponse): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** The latest response id of a named conversation, or undefined for a new name. */
  conversation(name: string): Promise<string | undefined>;
  setConversation(name: string, responseId: string): Promise<void>;
  /** Releases what the store holds open (the shared database pool is not its to close). */
  close(): Promise<void>;
  /** Responses kept at most. */
  readonly capacity: number;
}

/** The tables of `response_store.db`, as Python Hermes creates them. */
export const RESPONSE_TABLES_SQL =
  "CREATE TABLE IF NOT EXISTS responses (response_id TEXT PRIMARY KEY, data TEXT NOT NULL, accessed_at REAL NOT NULL);" +
  "CREATE TABLE IF NOT EXISTS conversations (name TEXT PRIMARY KEY, response_id TEXT NOT NULL);";

/** The `data` JSON of a stored response, in Python Hermes's shape. */
export function encodeStoredResponse(entry: StoredResponse): string {
  return JSON.stringify({
    response: entry.response,
    conversation_history: entry.conversationHistory,
    instructions: entry.instructions,
    session_id: entry.sessionId,
  });
}

/** A stored `data` JSON back as a {@link StoredResponse}; undefined when damaged. */
export function decodeStoredResponse(text: string): StoredResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const data = value as Record<string, unknown>;
  const response = data["response"];
  if (typeof response !== "object" || response === null) return undefined;
  return {
    sessionId: typeof data["session_id"] === "string" ? data["session_id"] : "",
    response: response as Record<string, unknown>,
    conversationHistory: Array.isArray(data["conversation_history"])
      ? (data["conversation_history"] as Message[])
      : [],
    instructions: typeof data["instructions"] === "string" ? data["instructions"] : null,
  };
}
