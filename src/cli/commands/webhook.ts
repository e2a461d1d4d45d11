/**
 * `hermes webhook subscribe|add NAME | list|ls | remove|rm NAME | test NAME`: the dynamic webhook
 * routes in `webhook_subscriptions.json`, which a running gateway picks up without a restart.
 * Results go to stdout, notes to stderr. Exit codes: 0 success, 1 the task failed (no such
 * subscription, no server answering, a test the server rejected), 2 usage or configuration error
 * (a bad name or flag, a broken subscriptions file or config.yaml).
 *
 * A secret is shown once, when `subscribe` generates it; a secret the user typed is never echoed.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { HermesConfig } from "../../config/defaults.js";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { openedOnUse } from "../../state/async-view.js";
import { stateBackendChoice } from "../../state/backend-config.js";
import {
  effectiveSecret,
  INSECURE_NO_AUTH,
  isValidRouteName,
  type NamedRoute,
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
} from "../../state/gateway/webhook-subscriptions.js";
import { type CliCommand, CliFailure, defineCommand, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";

export type WebhookCommandOptions = RunOptions & {
  /** How long `test` waits for the server's answer (default 10 s). */
  testTimeoutMs?: number;
};

interface Ctx {
  home: string;
  io: CliIo;
  config: HermesConfig;
  settings: WebhookSettings;
  store: WebhookSubscriptions;
  testTimeoutMs: number;
}

/** The payload `test` sends when none is given (Python Hermes's). */
const DEFAULT_TEST_PAYLOAD =
  '{"test": true, "event_type": "test", "message": "Hello from hermes webhook test"}';

/** Runs `hermes webhook <argv…>` and returns the exit code. Never throws for expected failures. */
export function runWebhookCommand(
  argv: readonly string[],
  options: WebhookCommandOptions = {},
): Promise<number> {
  return webhookCommand(options.testTimeoutMs).run(argv, options);
}

interface SubscribeFlags {
  prompt?: string;
  events?: string;
  description?: string;
  skills?: string;
  deliver?: string;
  deliverChatId?: string;
  secret?: string;
  deliverOnly?: boolean;
}

/**
 * The home's subscriptions: webhook_subscriptions.json for a SQLite home, the PostgreSQL backend's
 * for a postgres one (opened on first use; the process ends after the command).
 */
function subscriptionsOf(
  home: string,
  config: ReturnType<typeof loadConfig>["config"],
  env: Record<string, string | undefined>,
): WebhookSubscriptions {
  if (stateBackendChoice(config.state, env).kind === "sqlite") {
    return webhookSubscriptions(new WebhookSubscriptionStore({ home }));
  }
  return openedOnUse(async () => {
    const { openStateBackend } = await import("../../knowledge/state-backend.js");
    return (await openStateBackend(home, config, { env })).webhookSubscriptions;
  }, ["list", "get", "save", "remove"]);
}

/** `hermes webhook …`; `testTimeoutMs` bounds `webhook test` (tests shorten it). */
export function webhookCommand(testTimeoutMs = 10_000): CliCommand {
  return defineCommand({
    name: "webhook",
    description:
      "webhook subscriptions (webhook_subscriptions.json): events from GitHub, GitLab, ... that start agent runs",
    needs: "home",
    defaultSubcommand: "list",
    open: ({ home, io }): Ctx => {
      const env = loadEnvFile(home, io.env).env;
      const { config } = loadConfig({ home, env });
      const settings = webhookSettings(config, env);
      return { home, io, config, settings, store: subscriptionsOf(home, config, env), testTimeoutMs };
    },
    expected: (error) =>
      error instanceof WebhookConfigError || error instanceof WebhookSubscriptionsError ? 2 : undefined,
    parse: (root, run) => {
      root
        .command("subscribe")
        .alias("add")
        .description("create or update a subscription; prints its URL (and its secret when one is generated)")
        .argument("<name>", "route name: lower-case letters, digits, - and _")
        .option(
          "--prompt <template>",
          "prompt template; {dot.path} fills in payload fields, {__raw__} the whole payload",
        )
        .option("--events <list>", "comma-separated event types to accept (default: all)")
        .option("--description <text>", "what the subscription is for")
        .option("--skills <list>", "comma-separated skills to load for each run")
        .option(
          "--deliver <target>",
          "log (default), telegram, telegram:CHAT, discord, slack, github_comment, ...",
        )
        .option("--deliver-chat-id <id>", "chat to deliver to (default: the platform's home channel)")
        .option("--secret <secret>", "HMAC secret shared with the sender (default: a random one)")
        .option("--deliver-only", "send the rendered prompt as the message, without running the agent")
        .action(run((ctx, name: string, flags: SubscribeFlags) => subscribe(ctx, name, flags)));

      root
        .command("list")
        .alias("ls")
        .description("list subscriptions and config.yaml routes (secrets are not shown)")
        .option("--json", "print JSON")
        .action(run((ctx, flags: { json?: boolean }) => list(ctx, flags)));

      root
        .command("remove")
        .alias("rm")
        .description("delete a subscription")
        .argument("<name>", "route name")
        .action(run((ctx, name: string) => remove(ctx, name)));

      root
        .command("test")
        .description("send a signed sample event to the running webhook server and show its answer")
        .argument("<name>", "route name")
        .option("--payload <json>", "JSON body to send (default: a small test object)")
        .option("--event <type>", "event type to send as X-GitHub-Event", "test")
        .action(
          run((ctx, name: string, flags: { payload?: string; event: string }) => test(ctx, name, flags)),
        );
    },
  });
}

const splitList = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const isoSeconds = (epochS: number): string => `${new Date(epochS * 1000).toISOString().slice(0, 19)}Z`;

function checkedName(raw: string): string {
  const name = normalizeRouteName(raw);
  if (!isValidRouteName(name)) {
    throw new CliFailure(
      `"${raw}" is not a valid route name: use lower-case letters, digits, - and _, starting with a letter or digit.`,
      2,
    );
  }
  return name;
}

function describeDeliver(route: WebhookRoute): string {
  const deliver = route.deliver || "log";
  const extra = route.deliver_extra;
  const chat =
    extra && typeof extra === "object" && extra["chat_id"] !== undefined
      ? ` (chat ${String(extra["chat_id"])})`
      : "";
  return `${deliver}${chat}${route.deliver_only ? ", direct (no agent)" : ""}`;
}

function notEnabledNote(ctx: Ctx): void {
  if (ctx.settings.enabled) {
    ctx.io.err("The gateway must be running to receive events (hermes gateway run).");
    return;
  }
  ctx.io.err(
    "note: the webhook platform is not enabled. Set WEBHOOK_ENABLED=true (and WEBHOOK_PORT, default 8644) " +
      `in ${ctx.home}/.env, or platforms.webhook.enabled: true in config.yaml, then run \`hermes gateway run\`.`,
  );
}

async function subscribe(ctx: Ctx, rawName: string, flags: SubscribeFlags): Promise<number> {
  const name = checkedName(rawName);
  const deliver = flags.deliver?.trim() || "log";
  if (flags.deliverOnly && deliver === "log") {
    throw new CliFailure(
      "--deliver-only needs --deliver to be a real target (telegram, discord, slack, github_comment, ...), not log.",
      2,
    );
  }
  if (flags.secret !== undefined && flags.secret.trim() === "") {
    throw new CliFailure("--secret is empty; leave it out to have a random secret generated.", 2);
  }
  const existing = await ctx.store.get(name);
  const kept = typeof existing?.secret === "string" && existing.secret ? existing.secret : undefined;
  const generated = flags.secret || kept ? undefined : randomBytes(32).toString("base64url");
  const secret = flags.secret || kept || (generated as string);
  const events = splitList(flags.events);
  const route: WebhookRoute = {
    description: flags.description?.trim() || `Agent-created subscription: ${name}`,
    events,
    secret,
    prompt: flags.prompt ?? "",
    skills: splitList(flags.skills),
    deliver,
    profile: typeof existing?.profile === "string" ? existing.profile : "default",
    created_at: typeof existing?.created_at === "string" ? existing.created_at : isoSeconds(ctx.io.now()),
    // Undefined removes the key: a re-subscribe without these flags turns them off.
    deliver_only: flags.deliverOnly ? true : undefined,
    deliver_extra: flags.deliverChatId ? { chat_id: flags.deliverChatId } : undefined,
  };
  const saved = await ctx.store.save(name, route);
  const out = ctx.io.out;
  out(`${saved.created ? "Created" : "Updated"} webhook subscription ${name}`);
  out(`  URL:      ${webhookBaseUrl(ctx.settings)}${routePath(name)}`);
  out(
    `  Secret:   ${generated ? `${generated}  (generated; keep it, \`hermes webhook list\` does not show it)` : flags.secret ? "the one given with --secret" : "unchanged"}`,
  );
  out(`  Events:   ${events.join(", ") || "(all)"}`);
  out(`  Deliver:  ${describeDeliver(saved.route)}`);
  if (route.skills?.length) out(`  Skills:   ${route.skills.join(", ")}`);
  if (route.prompt) {
    const preview = route.prompt.length > 80 ? `${route.prompt.slice(0, 80)}…` : route.prompt;
    out(`  ${`${flags.deliverOnly ? "Message" : "Prompt"}:`.padEnd(10)}${preview.replace(/\n/g, " ")}`);
  }
  out("");
  out("Configure the sender to POST JSON to the URL, signed with the secret: HMAC-SHA256 of the body");
  out("as X-Hub-Signature-256: sha256=<hex> (GitHub), or the secret itself as X-Gitlab-Token (GitLab).");
  if (ctx.settings.routes.has(name)) {
    ctx.io.err(
      `warning: config.yaml also defines a route "${name}"; it takes precedence over this subscription.`,
    );
  }
  notEnabledNote(ctx);
  return 0;
}

/** Config routes first (they win on a name clash), then subscriptions not shadowed by one. */
async function allRoutes(ctx: Ctx): Promise<NamedRoute[]> {
  const routes: NamedRoute[] = [];
  for (const [name, route] of ctx.settings.routes) routes.push({ name, source: "config", route });
  for (const [name, route] of await ctx.store.list()) {
    if (!ctx.settings.routes.has(name)) routes.push({ name, source: "subscription", route });
  }
  return routes;
}

async function list(ctx: Ctx, flags: { json?: boolean }): Promise<number> {
  const routes = await allRoutes(ctx);
  const base = webhookBaseUrl(ctx.settings);
  if (flags.json) {
    const items = routes.map(({ name, source, route }) => ({
      name,
      source,
      url: `${base}${routePath(name)}`,
      description: route.description ?? "",
      events: Array.isArray(route.events) ? route.events : [],
      deliver: route.deliver || "log",
      deliver_only: route.deliver_only === true,
      deliver_extra: route.deliver_extra ?? {},
      skills: Array.isArray(route.skills) ? route.skills : [],
      prompt: route.prompt ?? "",
      created_at: route.created_at ?? null,
    }));
    ctx.io.out(JSON.stringify({ enabled: ctx.settings.enabled, routes: items }, null, 2));
    return 0;
  }
  if (routes.length === 0) {
    ctx.io.out('No webhook subscriptions. Create one with: hermes webhook subscribe <name> --prompt "..."');
    if (!ctx.settings.enabled) notEnabledNote(ctx);
    return 0;
  }
  ctx.io.out(`${routes.length} webhook route(s), each at ${base}/webhooks/<name>:`);
  const rows = routes.map(({ name, source, route }) => [
    name,
    (Array.isArray(route.events) ? route.events : []).join(", ") || "(all)",
    describeDeliver(route),
    source === "config" ? "config.yaml" : "subscription",
    route.enabled === false ? `[disabled] ${route.description ?? ""}` : (route.description ?? ""),
  ]);
  const table = renderTable(
    [
      { header: "Name" },
      { header: "Events", max: 40 },
      { header: "Deliver", max: 40 },
      { header: "Source" },
      { header: "Description", flex: true },
    ],
    rows,
    ctx.io.width !== undefined ? { width: ctx.io.width } : {},
  );
  for (const line of table) ctx.io.out(line);
  if (!ctx.settings.enabled) notEnabledNote(ctx);
  return 0;
}

async function remove(ctx: Ctx, rawName: string): Promise<number> {
  const name = normalizeRouteName(rawName);
  if (await ctx.store.remove(name)) {
    ctx.io.out(`Removed webhook subscription ${name}.`);
    return 0;
  }
  const hint = ctx.settings.routes.has(name)
    ? ` "${name}" is defined in config.yaml (platforms.webhook.extra.routes); remove it there.`
    : " Run `hermes webhook list` to see them.";
  throw new CliFailure(`No subscription named "${name}".${hint}`);
}

/** Where `test` sends: the configured host, or loopback when the server listens on every interface. */
function testUrl(settings: WebhookSettings, name: string): string {
  const host = settings.host;
  const target = !host || host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host;
  const shown = target.includes(":") && !target.startsWith("[") ? `[${target}]` : target;
  return `http://${shown}:${settings.port}${routePath(name)}`;
}

function explain(status: number, body: Record<string, unknown>, route: WebhookRoute, event: string): string {
  const state = typeof body["status"] === "string" ? body["status"] : "";
  if (status === 202)
    return `Accepted: the gateway runs the agent; its answer goes to ${route.deliver || "log"}.`;
  if (status === 200 && state === "delivered")
    return `Delivered to ${String(body["target"] ?? route.deliver)}.`;
  if (status === 200 && state === "ignored") {
    return `Ignored: the route accepts only ${(route.events ?? []).join(", ")}; this test sent "${event}" (use --event).`;
  }
  if (status === 200 && state === "duplicate") return "Skipped as a duplicate delivery.";
  if (status === 401) {
    return "Rejected: the signature did not match. Does the gateway use another home, profile or WEBHOOK_SECRET?";
  }
  if (status === 404)
    return "The server does not know this route: is the gateway running with this home and profile?";
  return `The server answered ${status}.`;
}

async function test(ctx: Ctx, rawName: string, flags: { payload?: string; event: string }): Promise<number> {
  const name = normalizeRouteName(rawName);
  const route = (await allRoutes(ctx)).find((r) => r.name === name)?.route;
  if (!route)
    throw new CliFailure(`No webhook route named "${name}". Run \`hermes webhook list\` to see them.`);
  const payload = flags.payload ?? DEFAULT_TEST_PAYLOAD;
  try {
    const parsed: unknown = JSON.parse(payload);
    if (parsed === null || typeof parsed !== "object") throw new Error("not an object");
  } catch {
    throw new CliFailure(`--payload must be a JSON object, got ${JSON.stringify(payload.slice(0, 80))}.`, 2);
  }
  const secret = effectiveSecret(route, ctx.settings.secret);
  if (!secret) {
    throw new CliFailure(
      `Route "${name}" has no secret (and WEBHOOK_SECRET is unset); the server would refuse it.`,
      2,
    );
  }
  const body = Buffer.from(payload, "utf8");
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-github-event": flags.event,
    "x-github-delivery": `hermes-test-${randomBytes(8).toString("hex")}`,
  };
  if (secret !== INSECURE_NO_AUTH) {
    headers["x-hub-signature-256"] = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  }
  const url = testUrl(ctx.settings, name);
  ctx.io.err(`Sending a test event to ${url}`);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(ctx.testTimeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    if ((error as Error).name === "TimeoutError") {
      throw new CliFailure(`No answer from ${url} within ${Math.round(ctx.testTimeoutMs / 1000)} s.`);
    }
    throw new CliFailure(
      `No webhook server is listening at ${url}${cause ? ` (${cause})` : ""}. Start the gateway with the webhook ` +
        "platform enabled (WEBHOOK_ENABLED=true, then `hermes gateway run`).",
    );
  }
  const text = await response.text();
  let parsedBody: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value))
      parsedBody = value as Record<string, unknown>;
  } catch {
    // Not JSON: shown as it is.
  }
  ctx.io.out(`Response ${response.status}: ${text.trim()}`);
  ctx.io.out(explain(response.status, parsedBody, route, flags.event));
  return response.status >= 200 && response.status < 300 ? 0 : 1;
}
