/**
 * Webhook routes and settings. Routes come from two places, as in Python Hermes:
 *
 * - `~/.hermes/webhook_subscriptions.json`, written by `hermes webhook subscribe`: one JSON object
 *   keyed by route name, `{"<name>": {"description", "events", "secret", "prompt", "skills",
 *   "deliver", "deliver_extra": {"chat_id"}, "deliver_only", "profile", "created_at"}}`, two-space
 *   indented, mode 600 (it holds HMAC secrets).
 * - `platforms.webhook.extra.routes` in config.yaml (also accepted directly under
 *   `platforms.webhook.routes`; `extra` wins). A static route beats a subscription of the same name.
 *
 * Writes hold a lock (`webhook_subscriptions.json.lock`), re-read the file under it, keep records
 * and keys this code does not know, and replace the file atomically. A file that does not parse is
 * never overwritten: every call fails with an error naming it until a person fixes or moves it.
 */
import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { HermesConfig } from "../../config/defaults.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { type Asynchronous, asyncView } from "../async-view.js";

export const SUBSCRIPTIONS_FILE = "webhook_subscriptions.json";
/** Python Hermes's webhook port. */
export const DEFAULT_WEBHOOK_PORT = 8644;
/** Largest request body by default (Python's `max_body_bytes`, 1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** Requests per route per minute by default (Python's `rate_limit`). */
export const DEFAULT_RATE_LIMIT = 30;
/** The secret value that turns signature checks off; accepted on loopback hosts only. */
export const INSECURE_NO_AUTH = "INSECURE_NO_AUTH";

/** One route as stored. Keys this code does not know (`filters`, `script`, ...) are kept on write. */
export interface WebhookRoute {
  description?: string;
  /** Event types accepted; empty or absent accepts every event. */
  events?: string[];
  /** HMAC secret or plain token; falls back to the global secret. */
  secret?: string;
  /** Prompt template with `{dot.path}` placeholders; empty dumps the payload. */
  prompt?: string;
  skills?: string[];
  /** `log` (default), a platform (`telegram`, `telegram:<chat>[:<thread>]`) or `github_comment`. */
  deliver?: string;
  /** Delivery details (`chat_id`, `message_thread_id`, `repo`, `pr_number`), templated like `prompt`. */
  deliver_extra?: Record<string, unknown>;
  /** Send the rendered prompt to `deliver` as the message, without running the agent. */
  deliver_only?: boolean;
  /** Toolsets for this route's runs (config or a hand edit only; `subscribe` never sets it). */
  toolsets?: string[];
  /** Profile the route is bound to; absent means `default`. */
  profile?: string;
  /** `false` keeps the route on file but rejects its events. */
  enabled?: boolean;
  created_at?: string;
  [key: string]: unknown;
}

/** A route together with its name and where it was defined. */
export interface NamedRoute {
  name: string;
  source: "config" | "subscription";
  route: WebhookRoute;
}

/** webhook_subscriptions.json exists but cannot be used; nothing was written. */
export class WebhookSubscriptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookSubscriptionsError";
  }
}

/** A webhook setting that keeps the server from starting; the message says what to change. */
export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookConfigError";
  }
}

export const subscriptionsPath = (home: string): string => join(home, SUBSCRIPTIONS_FILE);

/** Route names as the CLI stores them: lower case, spaces become dashes. */
export function normalizeRouteName(raw: string): string {
  return raw.trim().toLowerCase().replace(/ /g, "-");
}

/** Whether a (normalised) name may be used for a subscription. */
export function isValidRouteName(name: string): boolean {
  return /^[a-z0-9][a-z0-9_-]*$/.test(name);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the file holds: every top-level entry (kept on write) and the signature of the version read. */
interface FileContents {
  raw: Record<string, unknown>;
  /** Changes whenever the file is replaced or edited (inode, size, mtime); "" when there is none. */
  signature: string;
}

/**
 * Cheap identity of the file's current version, for reload checks; "" when it does not exist.
 * An atomic replace always changes the inode, so two writes within one mtime tick still differ.
 */
export function subscriptionsSignature(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return "";
  }
}

function readContents(path: string): FileContents {
  const signature = subscriptionsSignature(path);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { raw: {}, signature: "" };
    throw new WebhookSubscriptionsError(`Could not read ${path}: ${(error as Error).message}`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === "") return { raw: {}, signature };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new WebhookSubscriptionsError(
      `${path} is not valid JSON (${(error as Error).message}). It was left untouched: fix it by hand, ` +
        "or move it aside to start with no subscriptions.",
    );
  }
  if (!isRecord(data)) {
    throw new WebhookSubscriptionsError(
      `${path} must hold a JSON object keyed by route name, like {"github-issues": {...}}. ` +
        "It was left untouched: fix it by hand, or move it aside.",
    );
  }
  return { raw: data, signature };
}

/** The usable routes of a parsed file: entries that are objects (others stay on disk untouched). */
function routesOf(raw: Record<string, unknown>): Map<string, WebhookRoute> {
  const routes = new Map<string, WebhookRoute>();
  for (const [name, value] of Object.entries(raw)) {
    if (isRecord(value)) routes.set(name, value as WebhookRoute);
  }
  return routes;
}

/**
 * Reads the subscriptions file once: the routes and the file's signature. A missing or empty file
 * gives no routes; a broken one throws {@link WebhookSubscriptionsError}.
 */
export function loadSubscriptions(home: string): { routes: Map<string, WebhookRoute>; signature: string } {
  const { raw, signature } = readContents(subscriptionsPath(home));
  return { routes: routesOf(raw), signature };
}

export interface SubscriptionStoreOptions {
  /** HERMES_HOME. */
  home: string;
  /** How long a write waits for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
}

/** Read and change `webhook_subscriptions.json`. */
export class WebhookSubscriptionStore {
  readonly path: string;
  private readonly home: string;
  private readonly lockTimeoutMs: number;

  constructor(options: SubscriptionStoreOptions) {
    this.home = options.home;
    this.path = subscriptionsPath(options.home);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /** The subscriptions in file order; empty when there is no file. Throws for a broken file. */
  list(): Map<string, WebhookRoute> {
    return routesOf(readContents(this.path).raw);
  }

  /** One subscription, or undefined. */
  get(name: string): WebhookRoute | undefined {
    return this.list().get(name);
  }

  /**
   * Runs `fn` on the file's entries read under the lock and writes back what it leaves (it may
   * mutate the object). When `fn` throws, or the file is broken, nothing is written.
   */
  async update<T>(fn: (entries: Record<string, unknown>) => T | Promise<T>): Promise<T> {
    mkdirSync(this.home, { recursive: true, mode: 0o700 });
    return withFileLock(
      this.path,
      async () => {
        const { raw } = readContents(this.path);
        const result = await fn(raw);
        await atomicWriteFile(this.path, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
        try {
          chmodSync(this.path, 0o600);
        } catch {
          // Best effort: the write itself succeeded.
        }
        return result;
      },
      { timeoutMs: this.lockTimeoutMs },
    );
  }

  /**
   * Stores `route` under `name`, replacing the fields it sets; keys of an existing record that
   * `route` does not mention (a hand-added `toolsets`, `filters`) are kept. Returns whether the
   * name was new and the record as written.
   */
  save(name: string, route: WebhookRoute): Promise<{ created: boolean; route: WebhookRoute }> {
    return this.update((entries) => {
      const existing = Object.hasOwn(entries, name) ? entries[name] : undefined;
      const merged: WebhookRoute = { ...(isRecord(existing) ? existing : {}), ...route };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      // Defined, not assigned: a name like `__proto__` is stored like any other.
      Object.defineProperty(entries, name, {
        value: merged,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return { created: existing === undefined, route: merged };
    });
  }

  /** Deletes a subscription; false when there was none of that name (nothing is written then). */
  async remove(name: string): Promise<boolean> {
    if (!this.list().has(name)) return false;
    return this.update((entries) => {
      if (!Object.hasOwn(entries, name)) return false;
      delete entries[name];
      return true;
    });
  }
}

/** The webhook platform's settings, from config.yaml and the environment. */
export interface WebhookSettings {
  /** `WEBHOOK_ENABLED` truthy, or `platforms.webhook.enabled`. */
  enabled: boolean;
  /** `platforms.webhook.extra.host`; undefined when unset (the server then binds 127.0.0.1). */
  host: string | undefined;
  /** `WEBHOOK_PORT`, else `extra.port`, else 8644. */
  port: number;
  /** Global secret: `WEBHOOK_SECRET`, else `extra.secret`; "" when neither is set. */
  secret: string;
  maxBodyBytes: number;
  /** Requests per route per minute. */
  rateLimit: number;
  /** Routes from config.yaml. */
  routes: Map<string, WebhookRoute>;
}

const truthy = (value: unknown): boolean =>
  value === true || (typeof value === "string" && /^(1|true|yes|on)$/i.test(value.trim()));

/** `platforms.webhook` with `extra` laid over the keys written directly under it. */
function webhookSection(config: HermesConfig): {
  section: Record<string, unknown>;
  merged: Record<string, unknown>;
} {
  const platforms = config["platforms"];
  const section = isRecord(platforms) && isRecord(platforms["webhook"]) ? platforms["webhook"] : {};
  const extra = isRecord(section["extra"]) ? section["extra"] : {};
  return { section, merged: { ...section, ...extra } };
}

function positiveInt(value: unknown, what: string, fallback: number): number {
  if (value === undefined || value === null || value === "") return fallback;
  const n = typeof value === "number" ? value : Number(String(value).trim());
  if (!Number.isInteger(n) || n < 0) {
    throw new WebhookConfigError(`${what}: expected a whole number, got ${JSON.stringify(value)}.`);
  }
  return n;
}

/** Whether the webhook platform is switched on (`WEBHOOK_ENABLED` or `platforms.webhook.enabled`). */
export function webhookEnabled(config: HermesConfig, env: Record<string, string | undefined>): boolean {
  return truthy(env["WEBHOOK_ENABLED"]) || truthy(webhookSection(config).section["enabled"]);
}

/**
 * Reads the webhook settings. Throws {@link WebhookConfigError} for a port or limit that is not a
 * whole number, naming the setting and the value.
 */
export function webhookSettings(
  config: HermesConfig,
  env: Record<string, string | undefined>,
): WebhookSettings {
  const { section, merged } = webhookSection(config);
  const extra = isRecord(section["extra"]) ? section["extra"] : {};
  const envPort = env["WEBHOOK_PORT"]?.trim();
  const port = envPort
    ? positiveInt(envPort, "WEBHOOK_PORT", DEFAULT_WEBHOOK_PORT)
    : positiveInt(merged["port"], "platforms.webhook.extra.port", DEFAULT_WEBHOOK_PORT);
  if (port > 65_535) throw new WebhookConfigError(`The webhook port must be 0-65535, got ${port}.`);
  const host =
    typeof merged["host"] === "string" && merged["host"].trim() ? merged["host"].trim() : undefined;
  const envSecret = env["WEBHOOK_SECRET"];
  const secret = envSecret ? envSecret : typeof merged["secret"] === "string" ? merged["secret"] : "";
  const routes = new Map<string, WebhookRoute>();
  for (const source of [section["routes"], extra["routes"]]) {
    if (!isRecord(source)) continue;
    for (const [name, route] of Object.entries(source)) {
      if (isRecord(route)) routes.set(name, route as WebhookRoute);
    }
  }
  return {
    enabled: webhookEnabled(config, env),
    host,
    port,
    secret,
    maxBodyBytes:
      positiveInt(
        merged["max_body_bytes"],
        "platforms.webhook.extra.max_body_bytes",
        DEFAULT_MAX_BODY_BYTES,
      ) || DEFAULT_MAX_BODY_BYTES,
    rateLimit:
      positiveInt(merged["rate_limit"], "platforms.webhook.extra.rate_limit", DEFAULT_RATE_LIMIT) ||
      DEFAULT_RATE_LIMIT,
    routes,
  };
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "ip6-localhost", "ip6-loopback"]);

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string | undefined): boolean {
  return (
    host !== undefined &&
    LOOPBACK_HOSTS.has(
      host
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, ""),
    )
  );
}

/** The base URL people configure senders with: `localhost` stands in for an unset or wildcard host. */
export function webhookBaseUrl(settings: Pick<WebhookSettings, "host" | "port">): string {
  const host = !settings.host || WILDCARD_HOSTS.has(settings.host) ? "localhost" : settings.host;
  const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${shown}:${settings.port}`;
}

/** A route's URL path (`/webhooks/<name>`). */
export const routePath = (name: string): string => `/webhooks/${encodeURIComponent(name)}`;

/** The secret that applies to a route: its own when set, else the global one ("" when none). */
export function effectiveSecret(route: WebhookRoute, globalSecret: string): string {
  return typeof route.secret === "string" && route.secret !== "" ? route.secret : globalSecret;
}

/**
 * Why a route cannot be served, or undefined when it can: no secret at all, `INSECURE_NO_AUTH` on
 * a host other people can reach, or `deliver_only` without a real target.
 */
export function routeProblem(
  route: WebhookRoute,
  globalSecret: string,
  host: string | undefined,
): string | undefined {
  const secret = effectiveSecret(route, globalSecret);
  if (!secret) {
    return `has no secret; set "secret" on the route or WEBHOOK_SECRET (or "${INSECURE_NO_AUTH}" for local tests)`;
  }
  if (secret === INSECURE_NO_AUTH && !isLoopbackHost(host ?? "127.0.0.1")) {
    return `uses ${INSECURE_NO_AUTH} but the server listens on ${host}, which other machines can reach`;
  }
  if (route.deliver_only === true && (!route.deliver || route.deliver === "log")) {
    return `sets deliver_only but deliver is "${route.deliver ?? "log"}"; direct delivery needs a real target (telegram, discord, github_comment, ...)`;
  }
  return undefined;
}

/**
 * Webhook subscriptions as a backend other than `webhook_subscriptions.json` provides them
 * (asynchronous, see async-view.ts); `webhookSubscriptions` puts the file store behind it.
 */
export type WebhookSubscriptions = Asynchronous<
  Pick<WebhookSubscriptionStore, "list" | "get" | "save" | "remove">
>;

export function webhookSubscriptions(store: WebhookSubscriptionStore): WebhookSubscriptions {
  return asyncView(store, ["list", "get", "save", "remove"]);
}
