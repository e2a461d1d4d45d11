/**
 * The page's one way to the server: `fetch` under `/api/` with the token (taken from the URL the
 * CLI printed, kept in this tab's sessionStorage and removed from the address bar) and, for
 * changes, the CSRF token from `GET /api/csrf`. Errors become `ApiFailure` with the server's text.
 */

const TOKEN_KEY = "hermes-dashboard-token";

export class ApiFailure extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  constructor(status: number, message: string, body: Record<string, unknown> = {}) {
    super(message);
    this.name = "ApiFailure";
    this.status = status;
    this.body = body;
  }
}

/** Moves `?token=` from the address bar into sessionStorage (run once at start). */
export function adoptTokenFromUrl(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    url.searchParams.delete("token");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }
}

function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

let csrf: Promise<string> | null = null;

function authHeaders(): Record<string, string> {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

async function parse(res: Response): Promise<unknown> {
  const type = res.headers.get("content-type") ?? "";
  const body: unknown = type.includes("json") ? await res.json().catch(() => ({})) : await res.text();
  if (!res.ok) {
    const record = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
    const text =
      typeof record["error"] === "string"
        ? record["error"]
        : res.status === 401
          ? "not signed in"
          : `HTTP ${res.status}`;
    const message =
      res.status === 401
        ? `${text}: open the dashboard with the URL \`hermes dashboard\` printed (it carries the token).`
        : text;
    throw new ApiFailure(res.status, message, record);
  }
  return body;
}

/** Builds `/api/<path>?<query>`, leaving out empty values. */
export function apiUrl(path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  const qs = params.toString();
  return `/api/${path.replace(/^\/+/, "")}${qs ? `?${qs}` : ""}`;
}

export async function apiGet<T = Record<string, unknown>>(
  path: string,
  query: Record<string, string | number | undefined | null> = {},
  signal?: AbortSignal,
): Promise<T> {
  const res = await fetch(apiUrl(path, query), { headers: authHeaders(), ...(signal ? { signal } : {}) });
  return (await parse(res)) as T;
}

async function csrfToken(): Promise<string> {
  csrf ??= apiGet<{ csrf: string }>("csrf").then(
    (r) => r.csrf,
    (error: unknown) => {
      csrf = null;
      throw error;
    },
  );
  return csrf;
}

/** A state-changing request with the CSRF token and a JSON body. */
export async function apiSend<T = Record<string, unknown>>(
  method: "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  body: Record<string, unknown> = {},
): Promise<T> {
  const res = await fetch(apiUrl(path), {
    method,
    headers: { ...authHeaders(), "x-csrf-token": await csrfToken(), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await parse(res)) as T;
}

/**
 * Opens a server-sent-events stream under `/api/` (a POST whose answer is `text/event-stream`) and
 * calls `onEvent` for each `event:`/`data:` frame; resolves when the stream ends.
 */
export async function apiStream(
  path: string,
  body: Record<string, unknown>,
  onEvent: (event: string, data: unknown) => void,
  signal?: AbortSignal,
): Promise<void> {
  const res = await fetch(apiUrl(path), {
    method: "POST",
    headers: {
      ...authHeaders(),
      "x-csrf-token": await csrfToken(),
      "content-type": "application/json",
      accept: "text/event-stream",
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  if (!res.ok || !res.body) {
    await parse(res);
    return;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length > 0) {
        const text = data.join("\n");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Plain-text data stays a string.
        }
        onEvent(event, parsed);
      }
      end = buffer.indexOf("\n\n");
    }
  }
}

/** Fetches a download route with the token and hands the file to the browser to save. */
export async function apiDownload(path: string, fallbackName: string): Promise<void> {
  const res = await fetch(apiUrl(path), { headers: authHeaders() });
  if (!res.ok) await parse(res);
  const disposition = res.headers.get("content-disposition") ?? "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  const href = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = href;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
