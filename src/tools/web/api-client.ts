/**
 * Calls to the search and extraction services (Firecrawl, Tavily, Exa, Brave, SearXNG,
 * DuckDuckGo). Their endpoints come from the user's own configuration, so they may be local (a
 * self-hosted SearXNG or Firecrawl); what the model chooses is only the query or the page URL. Every
 * failure becomes a {@link BackendError} whose message names the service and says what to do.
 */
import { guardedFetch, WebFetchError } from "./url-guard.js";

export const API_TIMEOUT_MS = 60_000;
const API_MAX_BYTES = 8 * 1024 * 1024;

/** A service answered with an error, garbage or not at all. */
export class BackendError extends Error {
  readonly backend: string;
  readonly status: number | undefined;
  constructor(backend: string, message: string, status?: number) {
    super(message);
    this.name = "BackendError";
    this.backend = backend;
    this.status = status;
  }
}

export interface ApiRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /** The variable holding the key, named in authentication errors. */
  keyName?: string;
}

export interface ApiResponse {
  status: number;
  text: string;
  url: string;
  headers: Headers;
}

/** Sends the request and returns the answer whatever its status (the caller maps statuses). */
export async function callApi(backend: string, url: string, request: ApiRequest = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  if (request.json !== undefined) headers["content-type"] = "application/json";
  try {
    const response = await guardedFetch(url, {
      allowPrivate: true,
      method: request.method ?? (request.json === undefined ? "GET" : "POST"),
      headers,
      body: request.json === undefined ? undefined : JSON.stringify(request.json),
      timeoutMs: request.timeoutMs ?? API_TIMEOUT_MS,
      maxBytes: API_MAX_BYTES,
      onTooLarge: "error",
      signal: request.signal,
    });
    return {
      status: response.status,
      text: response.body.toString("utf8"),
      url: response.url,
      headers: response.headers,
    };
  } catch (error) {
    if (error instanceof WebFetchError && error.code === "aborted") throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new BackendError(backend, `${backend} could not be reached: ${reason}`);
  }
}

/** Sends the request and parses a successful JSON answer; any other answer throws a BackendError. */
export async function callJsonApi(backend: string, url: string, request: ApiRequest = {}): Promise<unknown> {
  const response = await callApi(backend, url, request);
  if (response.status < 200 || response.status >= 300) {
    throw statusError(backend, response.status, response.text, request.keyName);
  }
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    throw new BackendError(
      backend,
      `${backend} answered with something other than JSON (HTTP ${response.status}): ${preview(response.text)}`,
      response.status,
    );
  }
}

/** A readable error for a non-2xx answer, with the service's own message when it gave one. */
export function statusError(backend: string, status: number, body: string, keyName?: string): BackendError {
  const detail = serviceMessage(body).replace(/[.\s]+$/, "");
  const said = detail ? `: ${detail}` : "";
  let message: string;
  if (status === 401 || status === 403) {
    message = `${backend} refused the request (HTTP ${status})${said}. ${keyName ? `Check ${keyName}.` : "Check the API key."}`;
  } else if (status === 402) {
    message = `${backend} says the account is out of credits (HTTP 402)${said}.`;
  } else if (status === 429) {
    message = `${backend} is rate limiting requests (HTTP 429)${said}. Wait a little and try again.`;
  } else if (status >= 500) {
    message = `${backend} had a server error (HTTP ${status})${said}. Try again later.`;
  } else {
    message = `${backend} rejected the request (HTTP ${status})${said}.`;
  }
  return new BackendError(backend, message, status);
}

/** The `error` / `message` / `detail` a JSON error body carries, else the start of the text. */
function serviceMessage(body: string): string {
  const text = body.trim();
  if (!text) return "";
  try {
    const parsed = JSON.parse(text) as unknown;
    const found = pickMessage(parsed);
    if (found) return preview(found);
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return /^\s*</.test(text) ? "" : preview(text);
}

function pickMessage(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  for (const key of ["error", "message", "detail", "details", "reason"]) {
    const found = pickMessage(record[key]);
    if (found) return found;
  }
  return undefined;
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** `value` when it is a non-empty string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value : undefined;
}

/** `value` as an array of records (non-objects dropped); empty when it is not an array. */
export function records(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v));
}

/** `value` as a record, or an empty one. */
export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `base` without trailing slashes, joined to `path`. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path.startsWith("/") ? path : `/${path}`}`;
}
