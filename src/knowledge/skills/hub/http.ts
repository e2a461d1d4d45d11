/**
 * Bounded HTTP GET for the skills hub: http(s) only, redirects followed by hand (at most
 * {@link MAX_REDIRECTS}, each hop re-checked), a timeout per request, and a byte cap enforced while
 * the body streams so a huge or endless response never fills memory. A public URL that redirects to
 * a loopback or private address is refused (the classic way to turn a fetch against its user).
 *
 * Host names are resolved before they are contacted (every address, IPv4 and IPv6): a name with
 * any loopback, private, link-local, unique-local or IPv4-mapped private address is refused, and
 * the connection is pinned to the addresses just checked (the socket's `lookup` returns only
 * those), so a second resolution cannot swap in an internal address (DNS rebinding). Two
 * allowances, both explicit in {@link AddressGuard}: `trustedHosts` (the registry endpoints the
 * user configured with `HERMES_*_URL`, such as the loopback fakes the tests run) and
 * `typedLocally` (a URL typed at this machine's own terminal that names a private address
 * literally). Neither is ever set for an identifier from a chat or a URL from a registry's index.
 */
import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { isPrivateAddress } from "../../../util/ip-ranges.js";
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
  /** Which addresses may be contacted; default: no private address anywhere. */
  guard?: AddressGuard;
}

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a name to all its addresses (default: `dns.lookup(name, { all: true })`). */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface AddressGuard {
  /**
   * `host[:port]` of registry endpoints the user configured (`HERMES_*_URL`): requests there may
   * reach a private or loopback address. Every other host of a redirect chain is still checked.
   */
  trustedHosts?: readonly string[];
  /**
   * The first URL was typed by the user at this machine (the `hermes skills` CLI): when it names a
   * private or loopback address literally, the chain may stay on private addresses, as the user
   * asked. Never set for a chat's identifier or for a URL taken from a registry's index.
   */
  typedLocally?: boolean;
  /** Name resolution; tests inject one. */
  lookup?: LookupFn;
  /** Which resolved addresses are refused; default {@link isPrivateAddress}. */
  isBlockedAddress?: (address: string) => boolean;
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
  const guard = options.guard ?? {};
  const startedLocal = guard.typedLocally === true && isPrivateHost(current.hostname);
  const origin = current.host;
  let headers: Record<string, string> = {
    accept: "*/*",
    "user-agent": "hermes-skills-hub",
    ...options.headers,
  };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const pinned = startedLocal ? undefined : await vetHost(current, guard, options.fetch !== undefined);
    let response: Response;
    try {
      const init = { redirect: "manual" as const, signal: AbortSignal.timeout(timeoutMs), headers };
      // An injected transport (tests) is used as given; the real network connects only to `pinned`.
      response =
        pinned && !options.fetch ? await pinnedGet(current, init, pinned) : await doFetch(current, init);
    } catch (error) {
      throw new HubError(`could not fetch ${current.href}: ${describeFetchError(error, timeoutMs)}`);
    }
    if (REDIRECTS.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get("location");
      if (!location) throw new HubError(`${current.href} answered ${response.status} without a Location.`);
      const next = parseHttpUrl(new URL(location, current).href);
      if (next.host !== origin && options.sameHost) {
        throw new HubError(`${current.href} redirects to another host (${next.host}); refused.`);
      }
      if (!startedLocal && !isTrusted(next, guard) && isPrivateHost(next.hostname)) {
        throw new HubError(`${current.href} redirects to a private address (${next.host}); refused.`);
      }
      if (next.host !== origin) {
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

/**
 * Loopback, private, link-local, unique-local and unspecified addresses (and IPv6 forms embedding
 * them), by literal host, plus `localhost` names. No DNS lookup: {@link httpGet} resolves names.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "metadata.google.internal") return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}

function isTrusted(url: URL, guard: AddressGuard): boolean {
  const host = url.host.toLowerCase();
  return guard.trustedHosts?.some((h) => h.toLowerCase() === host) === true;
}

// Built-ins are required, never `import()`ed: the CLI bundle runs without a dynamic-import hook.
const builtin = createRequire(import.meta.url);

const defaultLookup: LookupFn = async (hostname) => {
  const dns = builtin("node:dns/promises") as typeof import("node:dns/promises");
  return dns.lookup(hostname, { all: true, verbatim: true });
};

/**
 * The addresses `url` may be contacted at, or undefined when the connection need not be pinned (a
 * trusted endpoint, or an injected test transport without an injected resolver). Throws a
 * {@link HubError} for a private address, written or resolved.
 */
async function vetHost(
  url: URL,
  guard: AddressGuard,
  injectedTransport: boolean,
): Promise<readonly ResolvedAddress[] | undefined> {
  if (isTrusted(url, guard)) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (isPrivateHost(host)) throw new HubError(`${url.href} is a private or loopback address; refused.`);
  const literal = isIP(host);
  if (literal) return [{ address: host, family: literal }];
  if (injectedTransport && !guard.lookup) return undefined;
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await (guard.lookup ?? defaultLookup)(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new HubError(`could not resolve ${host} (${code}).`);
  }
  if (addresses.length === 0) throw new HubError(`${host} has no addresses.`);
  const blocked = guard.isBlockedAddress ?? isPrivateAddress;
  const bad = addresses.find((a) => blocked(a.address));
  if (bad) throw new HubError(`${host} resolves to a private address (${bad.address}); refused.`);
  return addresses;
}

/** A socket `lookup` that answers only with the addresses already checked. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family ? addresses.filter((a) => a.family === family) : addresses;
    const first = usable[0];
    if (!first) {
      const error = Object.assign(new Error(`no IPv${family} address for ${hostname}`), {
        code: "ENOTFOUND",
      });
      callback(error, "", 0);
    } else if (options.all) {
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}

/** One GET over node:http(s) whose socket connects only to `addresses`, as a fetch Response. */
async function pinnedGet(
  url: URL,
  init: { signal: AbortSignal; headers: Record<string, string> },
  addresses: readonly ResolvedAddress[],
): Promise<Response> {
  const lib = (
    url.protocol === "https:" ? builtin("node:https") : builtin("node:http")
  ) as typeof import("node:http");
  return new Promise((resolve, reject) => {
    const request = lib.request(
      url,
      {
        method: "GET",
        headers: init.headers,
        agent: false,
        lookup: pinnedLookup(addresses),
        signal: init.signal,
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (Array.isArray(value)) for (const v of value) headers.append(name, v);
          else if (value !== undefined) headers.set(name, value);
        }
        const noBody = status === 204 || status === 304;
        if (noBody) res.resume();
        const body = noBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, headers }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}
