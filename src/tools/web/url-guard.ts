/**
 * Outbound HTTP for tools that fetch URLs a model chose. A model (or a page it read) can name
 * `http://127.0.0.1:8080/admin` or `http://169.254.169.254/` as easily as a public page, so every
 * hop is checked: the host is resolved, and any loopback, private, link-local, CGNAT, unspecified,
 * multicast or IPv4-mapped private address is refused unless `security.allow_private_urls` is on.
 * The same check runs again at connect time on the addresses the socket actually uses, so a name
 * that resolves differently the second time (DNS rebinding) cannot slip through.
 */
import type * as DnsPromises from "node:dns/promises";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import type * as Https from "node:https";
import { createRequire } from "node:module";
import { isIP, type LookupFunction } from "node:net";
import type { Readable, Transform } from "node:stream";
import type * as Zlib from "node:zlib";
import type { HermesConfig } from "../../config/defaults.js";
import { isPrivateAddress } from "../../util/ip-ranges.js";

export { isPrivateAddress };

// node:https (TLS behind it), node:dns/promises and node:zlib load when a tool first fetches a
// URL, not with the tool list every session builds at start-up.
let httpsLib: typeof Https | undefined;
let dnsLib: typeof DnsPromises | undefined;
let zlibLib: typeof Zlib | undefined;
const dnsModule = () =>
  (dnsLib ??= createRequire(import.meta.url)("node:dns/promises") as typeof DnsPromises);
const zlibModule = () => (zlibLib ??= createRequire(import.meta.url)("node:zlib") as typeof Zlib);
function httpsRequest(
  url: URL,
  options: RequestOptions,
  callback: (res: IncomingMessage) => void,
): ReturnType<typeof Https.request> {
  httpsLib ??= createRequire(import.meta.url)("node:https") as typeof Https;
  return httpsLib.request(url, options, callback);
}

export const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_USER_AGENT =
  "Mozilla/5.0 (compatible; Hermes-Agent; +https://github.com/NousResearch/hermes-agent)";

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a host name to every address it has (tests inject one; default `dns.lookup`, all). */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface UrlGuardOptions {
  /** `security.allow_private_urls`: when true nothing is refused for its address. */
  allowPrivate: boolean;
  /** Name resolution. Default: `dns.lookup(host, { all: true })`. */
  lookup?: LookupFn | undefined;
  /** Which resolved addresses are refused. Default: {@link isPrivateAddress}. */
  isBlockedAddress?: ((address: string) => boolean) | undefined;
}

export type WebFetchErrorCode =
  | "invalid_url"
  | "blocked"
  | "dns"
  | "network"
  | "timeout"
  | "aborted"
  | "too_large"
  | "too_many_redirects";

/** An expected failure to fetch a URL; `message` is written for the model and the user. */
export class WebFetchError extends Error {
  readonly code: WebFetchErrorCode;
  constructor(code: WebFetchErrorCode, message: string) {
    super(message);
    this.name = "WebFetchError";
    this.code = code;
  }
}

/** The URL's host resolves to an address that private-URL protection refuses. */
export class UrlBlockedError extends WebFetchError {
  readonly url: string;
  readonly address: string;
  constructor(url: string, host: string, address: string) {
    const what = host === address ? address : `${host} (${address})`;
    super(
      "blocked",
      `Refused to fetch ${url}: ${what} is a private, loopback or otherwise internal address. ` +
        "Set security.allow_private_urls: true in config.yaml to allow fetching internal addresses.",
    );
    this.name = "UrlBlockedError";
    this.url = url;
    this.address = address;
  }
}

/** `security.allow_private_urls` from the configuration (false when absent or not a boolean). */
export function allowPrivateUrls(config: HermesConfig | Readonly<Record<string, unknown>>): boolean {
  const security = (config as Record<string, unknown>)["security"];
  if (!security || typeof security !== "object") return false;
  return (security as Record<string, unknown>)["allow_private_urls"] === true;
}

const defaultLookup: LookupFn = async (hostname) =>
  dnsModule().lookup(hostname, { all: true, verbatim: true });

function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebFetchError(
      "invalid_url",
      `"${url}" is not a valid URL; give a full http:// or https:// address.`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new WebFetchError(
      "invalid_url",
      `Only http and https URLs can be fetched, not ${parsed.protocol.replace(/:$/, "")} (${url}).`,
    );
  }
  return parsed;
}

/** The addresses of `host` that may be contacted; throws when any of them is refused. */
async function vetHost(
  url: string,
  host: string,
  options: UrlGuardOptions,
): Promise<readonly ResolvedAddress[]> {
  const blocked = options.isBlockedAddress ?? isPrivateAddress;
  const literal = isIP(host);
  let addresses: readonly ResolvedAddress[];
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await (options.lookup ?? defaultLookup)(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new WebFetchError("dns", `Could not resolve host ${host} (${code}); check the URL.`);
    }
    if (addresses.length === 0)
      throw new WebFetchError("dns", `Host ${host} has no addresses; check the URL.`);
  }
  if (!options.allowPrivate) {
    const bad = addresses.find((a) => blocked(a.address));
    if (bad) throw new UrlBlockedError(url, host, bad.address);
  }
  return addresses;
}

/**
 * Parses `url` (http and https only) and, unless `allowPrivate`, resolves its host and refuses it
 * when any address is internal (see {@link isPrivateAddress}). Resolves with the parsed URL.
 * Throws {@link UrlBlockedError} for a refused address and {@link WebFetchError} for a malformed
 * URL, another scheme or a host that does not resolve.
 */
export async function checkUrl(url: string, options: UrlGuardOptions): Promise<URL> {
  const parsed = parseHttpUrl(url);
  if (options.allowPrivate && !options.lookup) return parsed;
  await vetHost(parsed.href, parsed.hostname.replace(/^\[|\]$/g, ""), options);
  return parsed;
}

/** A `lookup` for the socket that connects only to vetted addresses. */
function connectLookup(url: string, options: UrlGuardOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    vetHost(url, hostname, options).then(
      (addresses) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        const first = usable[0];
        if (!first) {
          const error = Object.assign(new Error(`no IPv${family} address for ${hostname}`), {
            code: "ENOTFOUND",
          });
          callback(error, "", 0);
        } else if (lookupOptions.all) {
          callback(null, usable as { address: string; family: number }[]);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, "", 0),
    );
  };
}

export interface GuardedFetchInit extends UrlGuardOptions {
  method?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: string | Buffer | undefined;
  /** Total time for every hop, the headers and the whole body. */
  timeoutMs: number;
  /** Largest decoded body kept, in bytes. */
  maxBytes: number;
  /** `truncate` (default): keep the first `maxBytes` and set `truncated`; `error`: reject. */
  onTooLarge?: "truncate" | "error" | undefined;
  /** Redirects followed before giving up (default 5); each hop is checked like the first. */
  maxRedirects?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface GuardedResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body was longer than `maxBytes` and was cut. */
  truncated: boolean;
}

const SENSITIVE_HEADERS = [
  "authorization",
  "cookie",
  "proxy-authorization",
  "x-api-key",
  "x-subscription-token",
];

/**
 * Fetches `url` without ever contacting a refused address: redirects are followed by hand (each
 * hop re-checked; credentials are dropped when the origin changes), the total time is bounded by
 * `timeoutMs` (a server that never finishes its body is cut), and the decoded body is capped at
 * `maxBytes`. Resolves with any final status (the caller decides what a 404 means). Rejects with
 * {@link UrlBlockedError} or {@link WebFetchError} (`timeout`, `aborted`, `too_large`, `network`,
 * `dns`, `too_many_redirects`, `invalid_url`).
 */
export async function guardedFetch(url: string, init: GuardedFetchInit): Promise<GuardedResponse> {
  const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const deadline = AbortSignal.timeout(init.timeoutMs);
  const signal = init.signal ? AbortSignal.any([deadline, init.signal]) : deadline;
  const failure = (): WebFetchError =>
    deadline.aborted
      ? new WebFetchError(
          "timeout",
          `${url} did not answer completely within ${formatSeconds(init.timeoutMs)}.`,
        )
      : new WebFetchError("aborted", `Fetching ${url} was interrupted.`);
  let current = await checkUrl(url, init);
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers: Record<string, string> = { "user-agent": DEFAULT_USER_AGENT, accept: "*/*" };
  for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;
  headers["accept-encoding"] = "gzip, deflate, br";
  for (let hop = 0; ; hop++) {
    if (signal.aborted) throw failure();
    const response = await send(current, { method, headers, body, init, signal, failure });
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location) {
      response.destroy();
      if (hop >= maxRedirects) {
        throw new WebFetchError("too_many_redirects", `${url} redirected more than ${maxRedirects} times.`);
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new WebFetchError("invalid_url", `${current.href} redirected to an invalid URL (${location}).`);
      }
      next = await checkUrl(next.href, init);
      if (next.origin !== current.origin) for (const name of SENSITIVE_HEADERS) delete headers[name];
      const status = response.statusCode ?? 0;
      if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = undefined;
        delete headers["content-type"];
      }
      current = next;
      continue;
    }
    const { data, truncated } =
      method === "HEAD"
        ? { data: Buffer.alloc(0), truncated: false }
        : await readBody(response, init, signal, failure, current.href);
    if (method === "HEAD") response.destroy();
    return {
      url: current.href,
      status: response.statusCode ?? 0,
      headers: toHeaders(response),
      body: data,
      truncated,
    };
  }
}

interface SendArgs {
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  init: GuardedFetchInit;
  signal: AbortSignal;
  failure: () => WebFetchError;
}

function send(target: URL, args: SendArgs): Promise<IncomingMessage> {
  const { method, headers, body, init, signal, failure } = args;
  return new Promise((resolve, reject) => {
    const options: RequestOptions = {
      method,
      headers:
        body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: false,
      signal,
    };
    // Without protection (and without an injected resolver) the socket resolves names itself.
    if (!init.allowPrivate || init.lookup) options.lookup = connectLookup(target.href, init);
    const request = (target.protocol === "https:" ? httpsRequest : httpRequest)(target, options, resolve);
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (signal.aborted) reject(failure());
      else if (error instanceof WebFetchError) reject(error);
      else
        reject(
          new WebFetchError("network", `Could not fetch ${target.href}: ${describeNetworkError(error)}.`),
        );
    });
    request.end(body);
  });
}

function readBody(
  response: IncomingMessage,
  init: GuardedFetchInit,
  signal: AbortSignal,
  failure: () => WebFetchError,
  url: string,
): Promise<{ data: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const declared = Number(response.headers["content-length"] ?? Number.NaN);
    if (init.onTooLarge === "error" && Number.isFinite(declared) && declared > init.maxBytes) {
      response.destroy();
      reject(tooLarge(url, init.maxBytes));
      return;
    }
    const stream = decoded(response);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      outcome();
    };
    const onAbort = () => {
      finish(() => reject(failure()));
      response.destroy();
      if (stream !== response) stream.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) return onAbort();
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      if (size + chunk.length > init.maxBytes) {
        if (init.onTooLarge === "error") finish(() => reject(tooLarge(url, init.maxBytes)));
        else {
          chunks.push(chunk.subarray(0, init.maxBytes - size));
          finish(() => resolve({ data: Buffer.concat(chunks), truncated: true }));
        }
        response.destroy();
        if (stream !== response) stream.destroy();
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    });
    stream.on("end", () => finish(() => resolve({ data: Buffer.concat(chunks), truncated: false })));
    stream.on("error", (error: NodeJS.ErrnoException) => {
      finish(() =>
        reject(
          signal.aborted
            ? failure()
            : new WebFetchError("network", `Reading ${url} failed: ${describeNetworkError(error)}.`),
        ),
      );
    });
    response.on("close", () => {
      if (!response.complete) {
        finish(() =>
          reject(new WebFetchError("network", `${url} closed the connection before the body ended.`)),
        );
      }
    });
  });
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  // Bodiless answers may still name an encoding; decoding nothing would fail as a truncated stream.
  const empty =
    response.statusCode === 204 || response.statusCode === 304 || response.headers["content-length"] === "0";
  if (empty) return response;
  let decoder: Transform;
  if (encoding === "gzip" || encoding === "x-gzip") decoder = zlibModule().createGunzip();
  else if (encoding === "deflate") decoder = zlibModule().createInflate();
  else if (encoding === "br") decoder = zlibModule().createBrotliDecompress();
  else return response;
  response.on("error", (error) => decoder.destroy(error));
  return response.pipe(decoder);
}

function toHeaders(response: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, v);
      } catch {
        // A header value Headers refuses (invalid characters) is dropped, not fatal.
      }
    }
  }
  return headers;
}

function tooLarge(url: string, maxBytes: number): WebFetchError {
  return new WebFetchError("too_large", `${url} is larger than ${formatBytes(maxBytes)}; refused.`);
}

function describeNetworkError(error: NodeJS.ErrnoException): string {
  const code = error.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset by the server";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `host not found (${code})`;
  if (code === "ETIMEDOUT") return "connection timed out";
  if (code === "Z_DATA_ERROR" || code === "ERR_BROTLI_DECOMPRESSION_FAILED")
    return "the compressed body is corrupt";
  if (code?.startsWith("ERR_TLS") || code?.includes("CERT")) return `TLS error (${code}: ${error.message})`;
  return code ? `${error.message} (${code})` : error.message;
}

/** `12.3 KB`, `4.0 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
