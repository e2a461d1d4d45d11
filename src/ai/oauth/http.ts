/**
 * The few HTTP shapes OAuth endpoints speak: a form or JSON POST, a GET with a header, each
 * answering JSON. A connection failure or a timeout becomes an `OAuthError` naming the URL; an
 * HTTP error is returned (status and parsed body) for the flow to read its `error` field.
 */
import { type OAuthDeps, OAuthError, type OAuthProviderId } from "./types.js";

export interface JsonAnswer {
  status: number;
  /** The parsed body when it was a JSON object, else {}. */
  body: Record<string, unknown>;
  /** The raw body, cut to 300 characters, for messages. */
  raw: string;
}

export interface RequestSpec {
  method?: "GET" | "POST";
  form?: Record<string, string>;
  json?: unknown;
  headers?: Record<string, string>;
}

/** Sends one request and reads a JSON answer. Throws `OAuthError` (code `network`) when no answer came. */
export async function requestJson(
  provider: OAuthProviderId,
  url: string,
  spec: RequestSpec,
  deps: OAuthDeps,
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { Accept: "application/json", ...(spec.headers ?? {}) };
  let body: string | undefined;
  if (spec.form) {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(spec.form).toString();
  } else if (spec.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(spec.json);
  }
  let response: Response;
  try {
    response = await deps.fetch(url, {
      method: spec.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(deps.timeoutMs ?? 15_000),
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new OAuthError(provider, `could not reach ${url} (${why})`, { code: "network" });
  }
  const raw = await response.text().catch(() => "");
  let parsed: unknown;
  try {
    parsed = raw ? JSON.parse(raw) : {};
  } catch {
    parsed = {};
  }
  const obj = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  return { status: response.status, body: obj as Record<string, unknown>, raw: raw.slice(0, 300) };
}

/** `error` / `error_description` of an OAuth error answer, for a message ("" when absent). */
export function oauthErrorText(answer: JsonAnswer): string {
  const error = answer.body["error"];
  const description = answer.body["error_description"];
  const code = typeof error === "string" ? error : "";
  const detail = typeof description === "string" ? description : "";
  if (code && detail) return `${code}: ${detail}`;
  return code || detail || answer.raw || `HTTP ${answer.status}`;
}

/** A URL under `base` (a trailing slash on `base` is dropped). */
export function under(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}
