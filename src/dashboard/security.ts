/**
 * Who may use the dashboard's API and how a request proves it.
 *
 * - Loopback binds without `dashboard.auth` get a random token per start, carried in the URL the
 *   dashboard prints and opens (`?token=`) or as `Authorization: Bearer <token>`.
 * - Any other bind requires `dashboard.auth` in config.yaml: `{ token: "<at least 16 chars>" }` or
 *   `{ username: "...", password_hash: "scrypt$<N>$<salt hex>$<hash hex>" }` (HTTP basic auth;
 *   `hermes dashboard --hash-password` prints such a hash). Without one the dashboard refuses to
 *   start.
 * - With basic auth, a credential that passed is remembered (scrypt runs once per credential, not
 *   per request), and an address with 10 failed sign-ins in a minute gets 429 until it is over.
 * - Every state-changing request carries `X-CSRF-Token` (from `GET /api/csrf`) and, when the client
 *   sends an `Origin`, one of the dashboard's own origins.
 * - The `Host` header must name the dashboard itself (a DNS-rebinding page sends its own name).
 */
import { createHash, createHmac, randomBytes, scryptSync, timingSafeEqual } from "node:crypto";
import { networkInterfaces } from "node:os";

export type DashboardAuth =
  | { kind: "token"; token: string; source: "per-start" | "config" }
  | { kind: "basic"; username: string; passwordHash: string };

export class DashboardAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DashboardAuthError";
  }
}

const MIN_TOKEN_LENGTH = 16;
const SCRYPT_N = 16384;

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** A fresh random token (URL-safe). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** `scrypt$N$salt$hash` for `password`, the form `dashboard.auth.password_hash` takes. */
export function hashPassword(password: string, salt: Buffer = randomBytes(16)): string {
  const hash = scryptSync(password, salt, 32, { N: SCRYPT_N });
  return `scrypt$${SCRYPT_N}$${salt.toString("hex")}$${hash.toString("hex")}`;
}

/** Whether `password` matches a `scrypt$N$salt$hash` string; false for any malformed hash. */
export function verifyPassword(password: string, stored: string): boolean {
  const parts = stored.split("$");
  if (parts.length !== 4 || parts[0] !== "scrypt") return false;
  const n = Number(parts[1]);
  if (!Number.isInteger(n) || n < 1024 || n > 1 << 20 || (n & (n - 1)) !== 0) return false;
  if (!/^[0-9a-f]+$/i.test(parts[2] ?? "") || !/^[0-9a-f]{64}$/i.test(parts[3] ?? "")) return false;
  const expected = Buffer.from(parts[3] ?? "", "hex");
  const actual = scryptSync(password, Buffer.from(parts[2] ?? "", "hex"), expected.length, {
    N: n,
    maxmem: 256 * n * 8 + 1024 * 1024,
  });
  return timingSafeEqual(actual, expected);
}

/**
 * The auth a start uses: `dashboard.auth` from config when set (checked), else a per-start token
 * on a loopback bind; a non-loopback bind without auth throws {@link DashboardAuthError}.
 */
export function resolveAuth(raw: unknown, host: string): DashboardAuth {
  if (raw !== undefined && raw !== null && raw !== "") {
    if (typeof raw === "string") return configToken(raw);
    if (typeof raw !== "object" || Array.isArray(raw)) {
      throw new DashboardAuthError(
        "dashboard.auth must be a mapping: {token: ...} or {username, password_hash}",
      );
    }
    const auth = raw as Record<string, unknown>;
    if (auth["token"] !== undefined) return configToken(auth["token"]);
    const username = auth["username"];
    const passwordHash = auth["password_hash"];
    if (typeof username !== "string" || username === "" || typeof passwordHash !== "string") {
      throw new DashboardAuthError(
        "dashboard.auth needs either token, or username and password_hash (hermes dashboard --hash-password)",
      );
    }
    if (!/^scrypt\$\d+\$[0-9a-f]+\$[0-9a-f]{64}$/i.test(passwordHash)) {
      throw new DashboardAuthError(
        "dashboard.auth.password_hash is not a scrypt hash; make one with `hermes dashboard --hash-password`",
      );
    }
    return { kind: "basic", username, passwordHash };
  }
  if (!isLoopbackHost(host)) {
    throw new DashboardAuthError(
      `refusing to listen on ${host} without dashboard.auth: set dashboard.auth.token, or username and password_hash, in config.yaml (or bind 127.0.0.1)`,
    );
  }
  return { kind: "token", token: newToken(), source: "per-start" };
}

function configToken(value: unknown): DashboardAuth {
  if (typeof value !== "string" || value.trim().length < MIN_TOKEN_LENGTH) {
    throw new DashboardAuthError(
      `dashboard.auth.token must be a string of at least ${MIN_TOKEN_LENGTH} characters`,
    );
  }
  return { kind: "token", token: value.trim(), source: "config" };
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the request's credentials pass: bearer/`?token=` for a token, basic auth for a password. */
export function authenticate(
  auth: DashboardAuth,
  headers: { authorization?: string | undefined },
  queryToken: string | null,
): boolean {
  const header = headers.authorization ?? "";
  if (auth.kind === "token") {
    const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const given = bearer ?? queryToken;
    return given !== undefined && given !== null && sameSecret(given, auth.token);
  }
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header)?.[1];
  if (!basic) return false;
  const decoded = Buffer.from(basic, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return false;
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  // Always run the hash, so a wrong user name takes as long as a wrong password.
  const ok = verifyPassword(password, auth.passwordHash);
  return ok && sameSecret(user, auth.username);
}

/** Verified basic credentials kept at most (a browser sends one; a few scripts may add more). */
const VERIFIED_LIMIT = 16;
/** Failed basic sign-ins from one address allowed within {@link FAILURE_WINDOW_MS}. */
const FAILURE_LIMIT = 10;
const FAILURE_WINDOW_MS = 60_000;

export type BasicGate = "ok" | "refused" | "throttled";

/**
 * Basic auth for the server, so scrypt (tens of milliseconds with the event loop blocked) runs once
 * per credential rather than once per request: an `Authorization` header that passed is
 * remembered by its SHA-256, and an address with {@link FAILURE_LIMIT} failures in a minute is
 * refused without hashing until the minute is over (a guesser cannot keep the CPU busy).
 */
export class BasicAuthGate {
  private readonly verified = new Map<string, true>();
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    auth: Extract<DashboardAuth, { kind: "basic" }>,
    private readonly now: () => number = Date.now,
    /** The scrypt check (tests count its calls). */
    private readonly verify: (authorization: string) => boolean = (header) =>
      authenticate(auth, { authorization: header }, null),
  ) {}

  check(authorization: string | undefined, address: string): BasicGate {
    const header = authorization ?? "";
    const digest = createHash("sha256").update(header).digest("base64");
    if (header !== "" && this.verified.has(digest)) return "ok";
    const at = this.now();
    const failed = this.failures.get(address);
    if (failed && at - failed.since >= FAILURE_WINDOW_MS) this.failures.delete(address);
    if ((this.failures.get(address)?.count ?? 0) >= FAILURE_LIMIT) return "throttled";
    // No header at all is the browser's first request before it asks for the password: no strike.
    if (header === "") return "refused";
    if (this.verify(header)) {
      if (this.verified.size >= VERIFIED_LIMIT) this.verified.delete(this.verified.keys().next().value ?? "");
      this.verified.set(digest, true);
      return "ok";
    }
    const entry = this.failures.get(address) ?? { count: 0, since: at };
    entry.count += 1;
    this.failures.set(address, entry);
    if (this.failures.size > 1024) this.failures.delete(this.failures.keys().next().value ?? "");
    return "refused";
  }
}

/** The CSRF token of a start: an HMAC of a per-start secret, the same for every client of it. */
export function csrfToken(secret: Buffer): string {
  return createHmac("sha256", secret).update("hermes-dashboard-csrf").digest("base64url");
}

export function csrfMatches(given: string | undefined, expected: string): boolean {
  return typeof given === "string" && sameSecret(given, expected);
}

/**
 * The `Host` values the dashboard answers to: its bind address, on loopback the loopback names,
 * on a wildcard bind (`0.0.0.0`, `::`) the machine's own addresses, and `extra`. IP literals are
 * safe to accept (DNS rebinding needs a name the attacker controls); other names only when listed.
 */
export function allowedHosts(host: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>([host.toLowerCase(), ...extra.map((e) => e.toLowerCase())]);
  if (isLoopbackHost(host)) for (const n of ["127.0.0.1", "localhost", "[::1]"]) names.add(n);
  if (host === "0.0.0.0" || host === "::") {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(a.family === "IPv6" ? `[${a.address.toLowerCase()}]` : a.address);
    }
  }
  if (host.includes(":") && !host.startsWith("[")) names.add(`[${host.toLowerCase()}]`);
  const out = new Set<string>();
  for (const n of names) out.add(`${n}:${port}`);
  return out;
}

/** The origins a state-changing request may come from: `http://<allowed host>`. */
export function allowedOrigins(hosts: ReadonlySet<string>): Set<string> {
  return new Set([...hosts].map((h) => `http://${h}`));
}
