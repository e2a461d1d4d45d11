/**
 * Bounded HTTP GET for the skills hub: http(s) only, redirects followed by hand (at most
 * {@link MAX_REDIRECTS}, each hop re-checked), a timeout per request, and a byte cap enforced while
 * the body streams so a huge or endless response never fills memory. A public URL that redirects to
 * a loopback or private address is refused (the classic way to turn a fetch against its user).
 */
import { isIP } from "node:net";
import { HubError } from "./bundle.js";

export const MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 20_000;

export interface HttpOptions {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  timeoutMs?: number;
  /** Injected by tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Extra request headers; an Authorization header is never sent to another host after a redirect. */
  headers?: Record<string, string>;
  /** Refuse a redirect to any other host (API calls: an answer must come from the API itself). */
  sameHost?: boolean;
}

export interface HttpResult {
  status: number;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  /** The final response's headers. */
  headers?: Headers;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GETs `url`. Resolves with any final status (the caller decides what a 404 means); rejects with a
 * {@link HubError} for network failures, timeouts, bad schemes, too many redirects or a body over
 * `maxBytes`.
 */
export async function httpGet(url: string, options: HttpOptions): Promise<HttpResult> {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let current = parseHttpUrl(url);
  const startedPrivate = isPrivateHost(current.hostname);
  const origin = current.host;
  let headers: Record<string, string> = {
    accept: "*/*",
    "user-agent": "hermes-skills-hub",
    ...options.headers,
  };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response: Response;
    try {
      response = await doFetch(current, {
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
        headers,
      });
    } catch (error) {
      throw new HubError(`could not fetch ${current.href}: ${describeFetchError(error, timeoutMs)}`);
    }
    if (REDIRECTS.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get("location");
      if (!location) throw new HubError(`${current.href} answered ${response.status} without a Location.`);
      const next = parseHttpUrl(new URL(location, current).href);
      if (!startedPrivate && isPrivateHost(next.hostname)) {
        throw new HubError(`${current.href} redirects to a private address (${next.host}); refused.`);
      }
      if (next.host !== origin) {
        if (options.sameHost) {
          throw new HubError(`${current.href} redirects to another host (${next.host}); refused.`);
        }
        // Credentials meant for one host never follow a redirect to another.
        headers = Object.fromEntries(
          Object.entries(headers).filter(([k]) => !/^(?:authorization|cookie|x-api-key)$/i.test(k)),
        );
      }
      current = next;
      continue;
    }
    const body = await readCapped(response, options.maxBytes, current.href, timeoutMs);
    return { status: response.status, body, url: current.href, headers: response.headers };
  }
  throw new HubError(`${url} redirected more than ${MAX_REDIRECTS} times.`);
}

function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HubError(`"${url}" is not a valid URL.`, 2);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new HubError(`only http and https URLs can be fetched, not "${parsed.protocol}" (${url}).`, 2);
  }
  if (parsed.username || parsed.password) {
    throw new HubError(`URLs with credentials are refused (${parsed.host}).`, 2);
  }
  return parsed;
}

async function readCapped(
  response: Response,
  maxBytes: number,
  url: string,
  timeoutMs: number,
): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new HubError(`${url} is ${declared} bytes; the limit is ${maxBytes}.`);
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        await response.body.cancel().catch(() => {});
        throw new HubError(`${url} is larger than ${maxBytes} bytes; refused.`);
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    if (error instanceof HubError) throw error;
    throw new HubError(`could not read ${url}: ${describeFetchError(error, timeoutMs)}`);
  }
  return Buffer.concat(chunks);
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError" || error.name === "AbortError") {
      return `no answer within ${Math.round(timeoutMs / 1000)} s`;
    }
    const cause = (error as Error & { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message) return cause.message;
    return error.message;
  }
  return String(error);
}

/** Loopback, private, link-local and unspecified addresses, by literal host (no DNS lookup). */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "metadata.google.internal") return true;
  const kind = isIP(host);
  if (kind === 4) {
    const [a = 0, b = 0] = host.split(".").map(Number);
    return (
      a === 10 ||
      a === 127 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (kind === 6) {
    return (
      host === "::1" ||
      host === "::" ||
      host.startsWith("fc") ||
      host.startsWith("fd") ||
      host.startsWith("fe80") ||
      host.startsWith("::ffff:")
    );
  }
  return false;
}
