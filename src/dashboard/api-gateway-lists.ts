/**
 * `/api/allowlists` and `/api/webhooks`: who may talk to the gateway without pairing, and the
 * webhook subscriptions, both editable. Allowlists are `<PLATFORM>_ALLOWED_USERS` in `<home>/.env`,
 * written through `hermes config set`'s writer (`setConfigValue`); a running gateway applies them
 * from its next message (it re-reads `.env` when the file changes). Subscriptions go through `WebhookSubscriptionStore` as `hermes webhook subscribe` and
 * `remove` do, and a running gateway picks them up without a restart. No answer carries a secret.
 */
import type { HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { envFileProblemAt } from "../config/env-file-check.js";
import { ConfigError } from "../config/errors.js";
import { redactSecrets } from "../config/secrets.js";
import { setConfigValue } from "../config/write.js";
import { envFlag, parseAllowlist, platformEnvPrefix } from "../state/gateway/allowlist.js";
import type { PairingRecords } from "../state/gateway/pairing.js";
import {
  INSECURE_NO_AUTH,
  isValidRouteName,
  normalizeRouteName,
  routePath,
  WebhookConfigError,
  type WebhookRoute,
  type WebhookSettings,
  WebhookSubscriptionStore,
  type WebhookSubscriptions,
  WebhookSubscriptionsError,
  webhookBaseUrl,
  webhookSettings,
  webhookSubscriptions,
} from "../state/gateway/webhook-subscriptions.js";
import { cronPromptRefusal } from "../tools/cronjob.js";
import { ApiError, field, optionalField, type Route } from "./http.js";

export interface GatewayListDeps {
  home: string;
  /** The environment the gateway sees (`.env` under the real one). */
  env: () => Record<string, string | undefined>;
  /** The real environment alone (a name set there beats `.env`, so the API cannot change it). */
  baseEnv: Record<string, string | undefined>;
  config: () => HermesConfig;
  /** Called after `.env` changed so `env()` answers the new values. */
  onChange: () => void;
  /** Pairing codes and approvals (the state backend's); default the home's pairing/ files. */
  pairing?: PairingRecords;
  /** Webhook subscriptions (the state backend's); default webhook_subscriptions.json. */
  subscriptions?: WebhookSubscriptions;
}

/** The subscriptions the routes edit. */
function subscriptionsOf(deps: GatewayListDeps): WebhookSubscriptions {
  return deps.subscriptions ?? webhookSubscriptions(new WebhookSubscriptionStore({ home: deps.home }));
}

/** The chat platforms this gateway has adapters for; `gateway` is GATEWAY_ALLOWED_USERS (any platform). */
export const ALLOWLIST_PLATFORMS: readonly string[] = [
  "gateway",
  "telegram",
  "discord",
  "slack",
  "mattermost",
  "matrix",
  "whatsapp",
  "whatsapp_cloud",
  "signal",
  "email",
  "sms",
  "homeassistant",
];

/** An allowlist entry: an id, `@handle`, email address or phone number; `*` admits everyone. */
const ENTRY = /^(\*|@?[A-Za-z0-9+][A-Za-z0-9._+:@-]{0,127})$/;

const allowlistName = (platform: string): string =>
  platform === "gateway" ? "GATEWAY_ALLOWED_USERS" : `${platformEnvPrefix(platform)}_ALLOWED_USERS`;

function checkedPlatform(raw: string, env: Record<string, string | undefined>): string {
  const platform = raw.trim().toLowerCase();
  const present = platform !== "" && /^[a-z][a-z0-9_]*$/.test(platform) && allowlistName(platform) in env;
  if (!ALLOWLIST_PLATFORMS.includes(platform) && !present) {
    throw new ApiError(
      404,
      `"${raw}" is not a platform with an allowlist; use one of ${ALLOWLIST_PLATFORMS.join(", ")}`,
    );
  }
  return platform;
}

function checkedEntry(raw: string): string {
  const entry = raw.trim();
  if (!ENTRY.test(entry)) {
    throw new ApiError(
      400,
      "a user is one id, @handle, email address or phone number (letters, digits, . _ + : @ -), or * for everyone",
    );
  }
  return entry;
}

/** Allowlists per platform as the gateway reads them, with where each comes from. */
function allowlists(deps: GatewayListDeps) {
  const env = deps.env();
  const platforms: Record<
    string,
    { allowed_users: string[]; allow_all: boolean; env_name: string; editable: boolean }
  > = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^([A-Z][A-Z0-9_]*)_(ALLOWED_USERS|ALLOW_ALL_USERS)$/.exec(name);
    if (!m || value === undefined) continue;
    const key = (m[1] ?? "").toLowerCase();
    const envName = `${m[1]}_ALLOWED_USERS`;
    const entry = platforms[key] ?? {
      allowed_users: [],
      allow_all: false,
      env_name: envName,
      editable: deps.baseEnv[envName] === undefined,
    };
    if (m[2] === "ALLOWED_USERS") entry.allowed_users = parseAllowlist(value);
    else entry.allow_all = envFlag(value);
    platforms[key] = entry;
  }
  return platforms;
}

/** Adds or removes one entry in `.env` through the `hermes config set` writer; answers the new list. */
function editAllowlist(deps: GatewayListDeps, rawPlatform: string, rawEntry: string, add: boolean) {
  const platform = checkedPlatform(rawPlatform, deps.env());
  const entry = checkedEntry(rawEntry);
  const name = allowlistName(platform);
  if (deps.baseEnv[name] !== undefined) {
    throw new ApiError(
      409,
      `${name} is set in the environment the dashboard was started with, which .env does not override; change it there`,
    );
  }
  // A running gateway does not apply a garbled .env (it keeps its last good lists): say so now.
  const problem = envFileProblemAt(deps.home);
  if (problem)
    throw new ApiError(409, `.env cannot be used: ${problem}. Fix the file first; it was not changed.`);
  // Read the file itself (not the cached view) and write in the same synchronous step.
  const current = parseAllowlist(loadEnvFile(deps.home, {}).env[name]);
  const has = current.includes(entry);
  if (!add && !has) throw new ApiError(404, `${entry} is not on the ${platform} allowlist`);
  if (add && has) return { platform, env_name: name, allowed_users: current, changed: false };
  const next = add ? [...current, entry] : current.filter((e) => e !== entry);
  try {
    setConfigValue(deps.home, name, next.join(","));
  } catch (error) {
    if (error instanceof ConfigError) throw new ApiError(422, `${error.message}. .env was not changed.`);
    throw error;
  }
  deps.onChange();
  return { platform, env_name: name, allowed_users: next, changed: true };
}

function settingsOf(deps: GatewayListDeps): WebhookSettings {
  try {
    return webhookSettings(deps.config(), deps.env());
  } catch (error) {
    if (error instanceof WebhookConfigError) throw new ApiError(409, error.message);
    throw error;
  }
}

async function storeCall<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof WebhookSubscriptionsError) throw new ApiError(409, error.message);
    throw error;
  }
}

function stringList(body: Record<string, unknown>, name: string): string[] {
  const value = body[name];
  if (value === undefined || value === null) return [];
  const items = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(items) || !items.every((s) => typeof s === "string")) {
    throw new ApiError(400, `"${name}" must be a list of strings (or one comma-separated string)`);
  }
  return items.map((s) => s.trim()).filter(Boolean);
}

function webhookView(settings: WebhookSettings, name: string, source: string, route: WebhookRoute) {
  const shown = redactSecrets({ ...route }) as Record<string, unknown>;
  const hasOwn = typeof route.secret === "string" && route.secret !== "";
  if (hasOwn) shown["secret"] = "********";
  return {
    name,
    source,
    url: `${webhookBaseUrl(settings)}${routePath(name)}`,
    ...shown,
    secret_set: hasOwn ? "route" : settings.secret ? "global" : "none",
  };
}

async function subscribe(deps: GatewayListDeps, body: Record<string, unknown>) {
  const raw = field(body, "name");
  const name = normalizeRouteName(raw);
  if (!isValidRouteName(name) || name.length > 64) {
    throw new ApiError(
      400,
      `"${raw}" is not a valid route name: lower-case letters, digits, - and _, starting with a letter or digit`,
    );
  }
  const settings = settingsOf(deps);
  if (settings.routes.has(name)) {
    throw new ApiError(
      409,
      `config.yaml defines a route "${name}" (it wins over a subscription); edit it there`,
    );
  }
  const prompt = optionalField(body, "prompt") ?? "";
  const refusal = prompt ? cronPromptRefusal(prompt) : undefined;
  if (refusal) throw new ApiError(422, refusal.replace("Scheduled prompts", "Webhook prompts"));
  const deliver = optionalField(body, "deliver")?.trim() || "log";
  const deliverOnly = body["deliver_only"] === true;
  if (deliverOnly && deliver === "log") {
    throw new ApiError(
      422,
      "deliver_only needs deliver to be a real target (telegram, discord, slack, github_comment, ...), not log",
    );
  }
  const secret = optionalField(body, "secret");
  if (secret !== undefined && secret.trim() === INSECURE_NO_AUTH) {
    throw new ApiError(
      422,
      `${INSECURE_NO_AUTH} turns signature checks off; set it with \`hermes webhook subscribe\` if you must`,
    );
  }
  if (secret !== undefined && secret.trim().length < 16) {
    throw new ApiError(422, "the secret must be at least 16 characters (the page can generate one)");
  }
  const store = subscriptionsOf(deps);
  const existing = await storeCall(() => store.get(name));
  const kept = typeof existing?.secret === "string" && existing.secret ? existing.secret : undefined;
  if (!secret && !kept && !settings.secret) {
    throw new ApiError(
      422,
      '"secret" is required: the sender signs each event with it (no WEBHOOK_SECRET is set)',
    );
  }
  const chat = optionalField(body, "deliver_chat_id")?.trim();
  const route: WebhookRoute = {
    description: optionalField(body, "description")?.trim() || `Dashboard subscription: ${name}`,
    events: stringList(body, "events"),
    ...(secret?.trim() || kept ? { secret: secret?.trim() || kept } : {}),
    prompt,
    skills: stringList(body, "skills"),
    deliver,
    profile: typeof existing?.profile === "string" ? existing.profile : "default",
    created_at:
      typeof existing?.created_at === "string"
        ? existing.created_at
        : `${new Date().toISOString().slice(0, 19)}Z`,
    deliver_only: deliverOnly ? true : undefined,
    deliver_extra: chat ? { chat_id: chat } : undefined,
  };
  const saved = await storeCall(() => store.save(name, route));
  return {
    created: saved.created,
    route: webhookView(settings, name, "subscription", saved.route),
    enabled: settings.enabled,
  };
}

export function gatewayListRoutes(deps: GatewayListDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/allowlists",
      summary:
        "who may talk to the gateway without pairing: <PLATFORM>_ALLOWED_USERS, *_ALLOW_ALL_USERS and GATEWAY_ALLOWED_USERS",
      handler: () => ({ json: { platforms: allowlists(deps), known_platforms: ALLOWLIST_PLATFORMS } }),
    },
    {
      method: "POST",
      path: "/api/allowlists/:platform",
      summary:
        'add a user to <PLATFORM>_ALLOWED_USERS in .env ({"user"}: an id, @handle, email or phone; `gateway` for GATEWAY_ALLOWED_USERS); a running gateway applies it from the next message',
      handler: ({ params, body }) => ({
        json: editAllowlist(deps, params["platform"] ?? "", field(body, "user"), true),
      }),
    },
    {
      method: "DELETE",
      path: "/api/allowlists/:platform/:user",
      summary:
        "remove a user from <PLATFORM>_ALLOWED_USERS in .env; a running gateway applies it from the next message",
      handler: ({ params }) => ({
        json: editAllowlist(deps, params["platform"] ?? "", params["user"] ?? "", false),
      }),
    },
    {
      method: "GET",
      path: "/api/webhooks",
      summary:
        "webhook routes (webhook_subscriptions.json and config.yaml) with their URL; secrets never shown (secret_set says where one is)",
      handler: async () => {
        const settings = settingsOf(deps);
        const subscriptions = await storeCall(() => subscriptionsOf(deps).list());
        const routes = [
          ...[...settings.routes].map(([name, route]) => webhookView(settings, name, "config", route)),
          ...[...subscriptions]
            .filter(([name]) => !settings.routes.has(name))
            .map(([name, route]) => webhookView(settings, name, "subscription", route)),
        ];
        return { json: { enabled: settings.enabled, base_url: webhookBaseUrl(settings), routes } };
      },
    },
    {
      method: "POST",
      path: "/api/webhooks",
      summary:
        'create or update a subscription as `hermes webhook subscribe`: {"name", "secret" (≥ 16 chars; kept when updating), "prompt"?, "events"?, "description"?, "skills"?, "deliver"?, "deliver_chat_id"?, "deliver_only"?}',
      handler: async ({ body }) => {
        const result = await subscribe(deps, body);
        return { json: result, status: result.created ? 201 : 200 };
      },
    },
    {
      method: "DELETE",
      path: "/api/webhooks/:name",
      summary: "delete a subscription (`hermes webhook remove`); config.yaml routes are edited there",
      handler: async ({ params }) => {
        const name = normalizeRouteName(params["name"] ?? "");
        if (!isValidRouteName(name)) throw new ApiError(400, "not a route name");
        const removed = await storeCall(() => subscriptionsOf(deps).remove(name));
        if (!removed) {
          const inConfig = settingsOf(deps).routes.has(name);
          throw new ApiError(
            inConfig ? 409 : 404,
            inConfig
              ? `"${name}" is defined in config.yaml; remove it there`
              : `no subscription named "${name}"`,
          );
        }
        return { json: { removed: name } };
      },
    },
  ];
}
