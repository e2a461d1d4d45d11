/**
 * `hermes auth add|list|remove|reset|status|logout`: the credential pools in auth.json from the
 * command line, and OAuth logins (`add <provider> --type oauth`, `logout`; see auth-oauth.ts). Keys are never printed, only masked (`sk-or-…a1b2`), in text and in `--json`. Results go
 * to stdout; prompts, notes and warnings to stderr. Exit codes: 0 success, 1 the task failed
 * (unknown credential, duplicate key, auth.json locked), 2 usage or configuration error (unknown
 * provider, corrupt auth.json, a removal without `-y` when nobody can be asked).
 */
import { createInterface } from "node:readline/promises";
import { InvalidArgumentError, Option } from "commander";
import pc from "picocolors";
import {
  type CredentialPool,
  maskKey,
  openCredentialPool,
  type PoolEntry,
  poolKey,
} from "../../ai/credential-pool.js";
import { findProvider, PROVIDERS } from "../../ai/providers.js";
import {
  AUTH_TYPE_API_KEY,
  AuthStoreError,
  addPoolRecord,
  borrowedRecord,
  CLEARED_STATUS,
  isBorrowedSource,
  newEntryId,
  poolProviders,
  readAuthStore,
  removePoolRecord,
  resetPoolStatuses,
  SOURCE_MANUAL,
  STATUS_DEAD,
  STATUS_EXHAUSTED,
} from "../../config/auth-store.js";
import { loadEnvFile } from "../../config/env-file.js";
import { ConfigError } from "../../config/errors.js";
import { loadConfig } from "../../config/load.js";
import { CliFailure, defineCommand, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";
import { type LoginStatus, loginStatuses, oauthLogin, oauthLogout, oauthProvider } from "./auth-oauth.js";

export type AuthCommandOptions = RunOptions;

type Io = CliIo;

/** What every subcommand works on: the home, its environment (with `.env`) and config. */
interface Ctx {
  home: string;
  env: Record<string, string | undefined>;
  config: Readonly<Record<string, unknown>> | undefined;
  io: Io;
}

/** Runs `hermes auth <argv…>` and returns the exit code. Never throws for expected failures. */
export function runAuthCommand(argv: readonly string[], options: AuthCommandOptions = {}): Promise<number> {
  return authCommand.run(argv, options);
}

function whole(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError(`${what} expects a whole number of at least 0, got "${value}".`);
  }
  return n;
}

export const authCommand = defineCommand({
  name: "auth",
  description: "Manage credential pools (several API keys per provider, in auth.json) and OAuth logins",
  needs: "home",
  defaultSubcommand: "list",
  open: ({ home, io }) => authContext(io, home),
  // A corrupt auth.json is a configuration error; a lock held too long is a failed task (1).
  expected: (error) => (error instanceof AuthStoreError ? 2 : undefined),
  parse: (root, run) => {
    root
      .command("add")
      .description(
        "add an API key to a provider's pool (from --key, a hidden prompt, or stdin), or log in with --type oauth",
      )
      .argument("<provider>", "provider id (openrouter, anthropic, …) or custom:<name>")
      .option("--key <key>", "the API key (prefer the prompt or stdin: a flag lands in shell history)")
      .addOption(new Option("--api-key <key>", "same as --key").hideHelp())
      .option("--label <label>", "a name to tell keys apart (default api-key-N)")
      .option("--priority <n>", "0-based position in fill_first order (default: last)", (v) =>
        whole(v, "--priority"),
      )
      .option(
        "--type <type>",
        "api-key, or oauth to log in (nous, openai-codex, anthropic, copilot, xai-oauth, qwen-oauth, minimax-oauth; a second login of a provider joins its pool); default: api-key, oauth where there is no key",
      )
      .option("--timeout <seconds>", "oauth: give up waiting for the browser approval after this long", (v) =>
        whole(v, "--timeout"),
      )
      .option("--region <region>", "minimax-oauth: global (minimax.io, default) or cn (minimaxi.com)")
      .addHelpText(
        "after",
        "\nExamples:\n" +
          "  hermes auth add openrouter                 paste a key at the hidden prompt\n" +
          "  hermes auth add nous --type oauth          log in to Nous Portal (device code)\n" +
          "  hermes auth add openai-codex --type oauth  log in with a ChatGPT account\n" +
          "  hermes auth add anthropic --type oauth     log in with Claude Pro/Max\n" +
          "A provider's first OAuth login is its main login; each further one joins its pool.",
      )
      .action(
        run(
          (
            ctx,
            provider: string,
            flags: {
              key?: string;
              apiKey?: string;
              label?: string;
              priority?: number;
              type?: string;
              timeout?: number;
              region?: string;
            },
          ) => add(ctx, provider, flags),
        ),
      );

    root
      .command("logout")
      .description("forget the OAuth login of a provider (its stored tokens)")
      .argument(
        "<provider>",
        "nous, openai-codex, anthropic, copilot, xai-oauth, qwen-oauth or minimax-oauth",
      )
      .action(run((ctx, provider: string) => oauthLogout(ctx, oauthProvider(provider))));

    root
      .command("list")
      .description("list pooled credentials: masked key, source, status and cooldown")
      .argument("[provider]", "only this provider")
      .option("--json", "print JSON")
      .action(
        run((ctx, provider: string | undefined, flags: { json?: boolean }) => list(ctx, provider, flags)),
      );

    root
      .command("remove")
      .description("remove a credential from a provider's pool")
      .argument("<provider>", "provider id")
      .argument("<target>", "the credential: its # in `hermes auth list`, its id, or its label")
      .option("-y, --yes", "do not ask for confirmation")
      .action(
        run((ctx, provider: string, target: string, flags: { yes?: boolean }) =>
          remove(ctx, provider, target, flags),
        ),
      );

    root
      .command("reset")
      .description("clear the status and cooldown of every credential of a provider")
      .argument("<provider>", "provider id")
      .action(run((ctx, provider: string) => reset(ctx, provider)));

    root
      .command("status")
      .description("per provider: how many keys, how many usable now, the strategy")
      .argument("[provider]", "only this provider")
      .option("--json", "print JSON")
      .action(
        run((ctx, provider: string | undefined, flags: { json?: boolean }) => status(ctx, provider, flags)),
      );
  },
});

/** The home, its environment with `.env`, and config.yaml (a broken one only warns: keys stay manageable). */
export function authContext(io: Io, home: string): Ctx {
  const { env } = loadEnvFile(home, io.env);
  let config: Readonly<Record<string, unknown>> | undefined;
  try {
    config = loadConfig({ home, env }).config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`hermes auth: warning: ${error.message} (using fill_first for every pool)`);
  }
  // A corrupt auth.json is a configuration error for every subcommand, before anything is shown.
  readAuthStore(home);
  return { home, env, config, io };
}

function openPool(ctx: Ctx, provider: string): CredentialPool {
  return openCredentialPool({
    home: ctx.home,
    provider,
    env: ctx.env,
    config: ctx.config,
    now: ctx.io.now,
    onWarning: (message) => ctx.io.err(`hermes auth: warning: ${message}`),
  });
}

/** The canonical pool key for a provider the user typed; exit 2 for one nobody knows. */
function knownProvider(ctx: Ctx, raw: string): string {
  const key = poolKey(raw);
  if (key.startsWith("custom:") && key.length > "custom:".length) return key;
  if (findProvider(raw)) return key;
  if (poolProviders(readAuthStore(ctx.home).data).includes(key)) return key;
  throw new CliFailure(
    `unknown provider "${raw}". Use one of: ${PROVIDERS.map((p) => p.id).join(", ")}, or custom:<name>.`,
    2,
  );
}

/** Every provider with at least one entry, stored or from the environment, in a stable order. */
function providersWithEntries(ctx: Ctx): CredentialPool[] {
  const names = new Set<string>([
    ...PROVIDERS.map((p) => p.id),
    ...poolProviders(readAuthStore(ctx.home).data),
  ]);
  return [...names]
    .sort()
    .map((name) => openPool(ctx, name))
    .filter((pool) => pool.entries().length > 0);
}

async function add(
  ctx: Ctx,
  rawProvider: string,
  flags: {
    key?: string;
    apiKey?: string;
    label?: string;
    priority?: number;
    type?: string;
    timeout?: number;
    region?: string;
  },
): Promise<number> {
  const { io } = ctx;
  // A provider with no key variable (openai-codex) has only its login.
  const keyless = findProvider(rawProvider)?.apiKeyEnv.length === 0 && findProvider(rawProvider)?.login;
  const type = (flags.type ?? (keyless ? "oauth" : "api-key")).trim().toLowerCase().replace("_", "-");
  if (type === "oauth") {
    const provider = oauthProvider(rawProvider);
    if (flags.key ?? flags.apiKey) {
      throw new CliFailure(
        keyless
          ? `${provider} takes no API key; log in with: hermes auth add ${provider} --type oauth`
          : "--type oauth logs in through the browser; drop --key (or use --type api-key).",
        2,
      );
    }
    return oauthLogin(ctx, provider, {
      timeout: flags.timeout,
      region: flags.region,
      label: flags.label,
      addToPool: true,
    });
  }
  if (type !== "api-key") {
    throw new CliFailure(`--type ${flags.type}: expected api-key or oauth.`, 2);
  }
  if (keyless) {
    throw new CliFailure(
      `${rawProvider} takes no API key; log in with: hermes auth add ${rawProvider} --type oauth`,
      2,
    );
  }
  const provider = knownProvider(ctx, rawProvider);
  if (findProvider(provider)?.id === "vertex") {
    throw new CliFailure(
      "vertex signs in with Google credentials (a service-account key file or gcloud's login); there is no API key to pool: run hermes setup model.",
      2,
    );
  }
  if (findProvider(provider)?.id === "bedrock") {
    throw new CliFailure(
      "bedrock signs requests with the AWS credential chain; there is no API key to pool.",
      2,
    );
  }
  const key = (flags.key ?? flags.apiKey ?? (await readKey(io))).trim();
  if (key === "")
    throw new CliFailure("no API key given: pass --key, type it at the prompt, or pipe it on stdin.", 2);
  if (/\s/.test(key)) throw new CliFailure("the key contains whitespace; paste exactly one key.", 2);
  if (provider === "openrouter" && !key.startsWith("sk-or-")) {
    io.err('hermes auth: warning: OpenRouter keys start with "sk-or-"; check that this is the right key.');
  }

  const pool = openPool(ctx, provider);
  const entries = pool.entries();
  const same = entries.find((e) => e.apiKey === key);
  if (same) {
    throw new CliFailure(
      `this key is already in the ${provider} pool as #${entries.indexOf(same) + 1} "${same.label}".`,
    );
  }
  const labels = new Set(entries.map((e) => e.label));
  let label = flags.label?.trim() ?? "";
  for (let n = entries.length + 1; label === ""; n++) if (!labels.has(`api-key-${n}`)) label = `api-key-${n}`;
  const id = newEntryId();
  const baseUrl = findProvider(provider)?.baseUrl;
  // Keys the pool already draws from the environment are stored first, so they keep their place.
  const first = entries
    .filter((e) => !e.persisted && e.apiKey !== "" && isBorrowedSource(e.source))
    .map((e) => borrowedRecord({ ...e, key: e.apiKey, requestCount: 0 }));
  const result = await addPoolRecord(
    ctx.home,
    provider,
    {
      id,
      label,
      auth_type: AUTH_TYPE_API_KEY,
      priority: 0,
      source: SOURCE_MANUAL,
      access_token: key,
      ...CLEARED_STATUS,
      ...(baseUrl ? { base_url: baseUrl } : {}),
      request_count: 0,
    },
    { first, position: flags.priority, now: io.now },
  );
  if (result.duplicate) {
    throw new CliFailure(`this key is already in the ${provider} pool as "${result.duplicate.label}".`);
  }
  const after = openPool(ctx, provider).entries();
  const index = after.findIndex((e) => e.id === id) + 1;
  io.out(`Added ${provider} credential #${index} "${label}" (${maskKey(key)}).`);
  const back = result.unsuppressed.filter((source) => after.some((e) => e.source === source));
  if (back.length > 0) {
    io.err(`note: ${back.join(", ")} is in the pool again (adding a credential re-enables removed sources).`);
  }
  return 0;
}

async function list(ctx: Ctx, rawProvider: string | undefined, flags: { json?: boolean }): Promise<number> {
  const { io } = ctx;
  const pools = rawProvider ? [openPool(ctx, knownProvider(ctx, rawProvider))] : providersWithEntries(ctx);
  const now = io.now();
  const shown = pools.filter((pool) => pool.entries().length > 0);
  if (flags.json) {
    const providers = shown.map((pool) => {
      const next = pool.peek();
      return {
        provider: pool.provider,
        strategy: pool.strategy,
        next: next?.id ?? null,
        entries: pool.entries().map((e, i) => entryJson(e, i + 1, now)),
      };
    });
    io.out(JSON.stringify({ providers }, null, 2));
    return 0;
  }
  if (shown.length === 0) {
    const name = rawProvider ? poolKey(rawProvider) : "<provider>";
    io.out(`No ${rawProvider ? `${name} ` : ""}credentials. Add one with: hermes auth add ${name}`);
    return 0;
  }
  for (const [n, pool] of shown.entries()) {
    const entries = pool.entries();
    const next = pool.peek();
    if (n > 0) io.out("");
    io.out(`${pool.provider} (${plural(entries.length, "credential")}, ${pool.strategy}):`);
    const rows = entries.map((e, i) => [
      String(i + 1),
      e.label,
      e.apiKey ? maskKey(e.apiKey) : "-",
      e.source,
      String(e.requestCount),
      statusText(e, now),
      e.id === next?.id ? "← next" : "",
    ]);
    const table = renderTable(
      [
        { header: "#", align: "right" },
        { header: "label", max: 28 },
        { header: "key" },
        { header: "source", max: 32 },
        { header: "requests", align: "right" },
        { header: "status" },
        { header: "" },
      ],
      rows,
      io.color ? { paintHeader: pc.bold } : {},
    );
    for (const line of table) io.out(`  ${line}`);
  }
  return 0;
}

async function remove(
  ctx: Ctx,
  rawProvider: string,
  target: string,
  flags: { yes?: boolean },
): Promise<number> {
  const { io } = ctx;
  const provider = knownProvider(ctx, rawProvider);
  const entries = openPool(ctx, provider).entries();
  const { entry, index } = resolveTarget(provider, entries, target);
  const shown = `#${index} "${entry.label}"${entry.apiKey ? ` (${maskKey(entry.apiKey)})` : ""}`;
  if (!(await confirm(`Remove ${provider} credential ${shown}?`, flags.yes, io))) {
    io.err("Cancelled; nothing removed.");
    return 0;
  }
  const borrowed = isBorrowedSource(entry.source);
  await removePoolRecord(ctx.home, provider, { ...entry, borrowed }, { suppress: borrowed, now: io.now });
  io.out(`Removed ${provider} credential ${shown}.`);
  if (entry.source.startsWith("env:")) {
    const name = entry.source.slice("env:".length);
    io.err(
      `note: ${name} is still set (environment or .env); the pool now ignores it. ` +
        `Delete it there too if the key is retired; \`hermes auth add ${provider}\` re-enables it.`,
    );
  } else if (borrowed) {
    io.err(`note: the key still lives in config.yaml (${entry.source}); the pool now ignores it.`);
  }
  return 0;
}

async function reset(ctx: Ctx, rawProvider: string): Promise<number> {
  const provider = knownProvider(ctx, rawProvider);
  const count = await resetPoolStatuses(ctx.home, provider, ctx.io.now);
  ctx.io.out(`Reset status on ${plural(count, `${provider} credential`)}.`);
  return 0;
}

function status(ctx: Ctx, rawProvider: string | undefined, flags: { json?: boolean }): number {
  const { io } = ctx;
  const pools = rawProvider ? [openPool(ctx, knownProvider(ctx, rawProvider))] : providersWithEntries(ctx);
  const now = io.now();
  const rows = pools.map((pool) => {
    const entries = pool.entries();
    const available = entries.filter((e) => availableNow(e, now));
    const next = pool.peek();
    return {
      provider: pool.provider,
      strategy: pool.strategy,
      keys: entries.length,
      usable: entries.filter((e) => e.usable).length,
      available: available.length,
      next: next ? { id: next.id, label: next.label } : null,
      next_available_at: available.length === 0 ? (pool.nextAvailableAt() ?? null) : null,
    };
  });
  const wanted = rawProvider ? (findProvider(rawProvider)?.id ?? rawProvider) : undefined;
  const logins = loginStatuses(ctx).filter((l) => wanted === undefined || l.provider === wanted);
  if (flags.json) {
    io.out(JSON.stringify({ providers: rows, logins }, null, 2));
    return 0;
  }
  if (rows.length === 0 && logins.length === 0) {
    io.out("No credentials. Add one with: hermes auth add <provider> (or log in: --type oauth)");
    return 0;
  }
  if (logins.length > 0) printLogins(io, logins, now);
  if (rows.length === 0) return 0;
  if (logins.length > 0) io.out("");
  const table = renderTable(
    [
      { header: "provider" },
      { header: "keys", align: "right" },
      { header: "available", align: "right" },
      { header: "strategy" },
      { header: "next" },
    ],
    rows.map((r) => [
      r.provider,
      String(r.keys),
      String(r.available),
      r.strategy,
      r.available > 0
        ? (r.next?.label ?? "")
        : r.next_available_at !== null
          ? `none now; first back in ${formatWait(r.next_available_at - now)}`
          : r.next
            ? `${r.next.label} (only key, cooling down)`
            : "none usable",
    ]),
  );
  for (const line of table) io.out(line);
  return 0;
}

function printLogins(io: Io, logins: readonly LoginStatus[], now: number): void {
  io.out("OAuth logins:");
  for (const login of logins) {
    const expiry =
      login.expires_at === null
        ? ""
        : login.expires_at > now
          ? `, token valid ${formatWait(login.expires_at - now)} more`
          : ", token expired";
    const renews = login.refreshable ? " (renews itself)" : "";
    io.out(
      `  ${login.provider}: logged in (${login.where}${expiry})${login.expires_at === null ? "" : renews}`,
    );
  }
}

function availableNow(entry: PoolEntry, now: number): boolean {
  return entry.usable && (entry.cooldownUntil === undefined || now >= entry.cooldownUntil);
}

/** The entry `target` names: its id, its label (case-insensitive, unique), or its 1-based #. */
function resolveTarget(
  provider: string,
  entries: readonly PoolEntry[],
  target: string,
): { entry: PoolEntry; index: number } {
  const raw = target.trim();
  let at = entries.findIndex((e) => e.id === raw);
  if (at < 0) {
    const byLabel = entries.flatMap((e, i) => (e.label.toLowerCase() === raw.toLowerCase() ? [i] : []));
    if (byLabel.length > 1) {
      throw new CliFailure(
        `${byLabel.length} ${provider} credentials are labelled "${raw}"; use the # or the id.`,
      );
    }
    at = byLabel[0] ?? (/^\d+$/.test(raw) ? Number(raw) - 1 : -1);
  }
  const entry = entries[at];
  if (!entry) {
    const hint =
      entries.length > 0
        ? ` (#1-#${entries.length}, an id, or a label; see hermes auth list ${provider})`
        : "";
    throw new CliFailure(`no ${provider} credential matching "${raw}"${hint}.`);
  }
  return { entry, index: at + 1 };
}

/** One line for the status column: ok, the cooldown and its reason, or why the entry is unusable. */
export function statusText(entry: PoolEntry, now: number): string {
  if (!entry.apiKey) {
    if (entry.source.startsWith("env:")) return `unavailable: ${entry.source.slice(4)} is not set here`;
    return entry.authType === AUTH_TYPE_API_KEY
      ? "unavailable: no key stored"
      : `unavailable: no ${entry.authType} token stored`;
  }
  if (!entry.usable) return `${entry.authType} (not used here)`;
  const code = entry.errorCode !== undefined ? ` (${entry.errorCode})` : "";
  if (entry.status === STATUS_DEAD) return `dead${code}: re-add the key`;
  if (entry.status !== STATUS_EXHAUSTED) return "ok";
  const until = entry.cooldownUntil;
  if (until === undefined || now >= until) return `ok (cooldown over${code ? ` after${code}` : ""})`;
  return `${failureKind(entry.errorCode)}${code}, ${formatWait(until - now)} left`;
}

function failureKind(code: number | undefined): string {
  if (code === 429) return "rate-limited";
  if (code === 401 || code === 403) return "auth failed";
  if (code === 402) return "out of credit";
  return "exhausted";
}

/** `41m 10s`, `2h 5m`, `3d 4h`: the two largest units, rounded up to the second. */
export function formatWait(seconds: number): string {
  let left = Math.max(0, Math.ceil(seconds));
  const parts: [number, string][] = [];
  for (const [size, unit] of [
    [86400, "d"],
    [3600, "h"],
    [60, "m"],
    [1, "s"],
  ] as const) {
    parts.push([Math.floor(left / size), unit]);
    left %= size;
  }
  const first = parts.findIndex(([value], i) => value > 0 || i === parts.length - 1);
  return parts
    .slice(first, first + 2)
    .filter(([value], i) => i === 0 || value > 0)
    .map(([value, unit]) => `${value}${unit}`)
    .join(" ");
}

function entryJson(e: PoolEntry, index: number, now: number): Record<string, unknown> {
  const cooling = e.cooldownUntil !== undefined && now < e.cooldownUntil;
  return {
    index,
    id: e.id,
    label: e.label,
    auth_type: e.authType,
    source: e.source,
    key: e.apiKey ? maskKey(e.apiKey) : null,
    priority: e.priority,
    status: e.status ?? null,
    last_error_code: e.errorCode ?? null,
    cooldown_until: cooling ? e.cooldownUntil : null,
    cooldown_remaining_s: cooling && e.cooldownUntil !== undefined ? Math.ceil(e.cooldownUntil - now) : null,
    usable: e.usable,
    available: availableNow(e, now),
    request_count: e.requestCount,
    stored: e.persisted,
  };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** Asks on the terminal; without one, refuses with exit 2 so a script never removes by accident. */
async function confirm(question: string, yes: boolean | undefined, io: Io): Promise<boolean> {
  if (yes) return true;
  if (io.stdin.isTTY !== true) {
    throw new CliFailure("remove needs confirmation and stdin is not a terminal; pass -y to confirm.", 2);
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** The key from a hidden prompt on a terminal, else the first non-empty line of stdin. */
async function readKey(io: Io): Promise<string> {
  if (io.stdin.isTTY === true) {
    const key = await readHidden(io, "Paste your API key (input hidden): ");
    if (key === null) throw new CliFailure("cancelled; nothing added.", 1);
    return key;
  }
  const chunks: string[] = [];
  for await (const chunk of io.stdin) chunks.push(String(chunk));
  const lines = chunks
    .join("")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length > 1) throw new CliFailure(`stdin holds ${lines.length} lines; pipe exactly one key.`, 2);
  return lines[0] ?? "";
}

/** Reads one line without echoing it. Resolves null on Ctrl-C. */
function readHidden(io: Io, prompt: string): Promise<string | null> {
  const { stdin } = io;
  io.stderr.write(prompt);
  const raw = typeof stdin.setRawMode === "function";
  if (raw) stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve) => {
    let value = "";
    const finish = (result: string | null) => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      if (raw) stdin.setRawMode(false);
      stdin.pause();
      io.stderr.write("\n");
      resolve(result);
    };
    const onData = (chunk: Buffer | string) => {
      // Bracketed-paste markers, if the terminal sends them.
      const text = String(chunk).replace(/\u001b\[20[01]~/g, "");
      for (const ch of text) {
        if (ch === "\r" || ch === "\n") return finish(value);
        if (ch === "\u0003") return finish(null);
        if (ch === "\u0004") return finish(value);
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    };
    const onEnd = () => finish(value);
    stdin.on("data", onData);
    stdin.once("end", onEnd);
  });
}
