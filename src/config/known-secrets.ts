/**
 * Which values this process must never let out, and the switch that turns redaction off.
 *
 * Every surface (the CLI's one-shot and REPL, the gateway, cron, the API server, `mcp serve`,
 * `sessions export`) calls {@link registerKnownSecrets} once at start with its home, environment
 * (`.env` merged under the real one) and config; the values land in the process-wide redactor
 * (util/redact.ts) that every output path uses. Keys resolved later (a credential-pool rotation, a
 * fallback provider) are added where the transport is built (ai/resolve.ts).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { MIN_SECRET_LENGTH, processRedactor, type Redactor } from "../util/redact.js";
import { isPlainObject } from "./coerce.js";
import { authPath } from "./home.js";
import { isSecretKey } from "./secrets.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface KnownSecret {
  value: string;
  /** Where it came from, shown in the marker: an env name (`GITHUB_TOKEN`) or a config key. */
  label: string;
}

// Name segments that mark a secret. `TOKENS` (max_tokens) is deliberately absent.
const SECRET_SEGMENT =
  /^(?:[A-Z0-9]*(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|APIKEY|ACCESSKEY|SECRETKEY|PRIVATEKEY)|KEYS?|AUTH|OAUTH|PASS|PWD)$/;
// Secret-looking names whose values are paths, sockets or URLs, not secrets. (Google's key file
// path is shown in Vertex's errors; the key inside is registered when the file is read.)
const NOT_SECRET_NAME = new Set([
  "SSH_AUTH_SOCK",
  "PWD",
  "OLDPWD",
  "GPG_AGENT_INFO",
  "XAUTHORITY",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "HERMES_GOOGLE_TOKEN_URL",
]);
const PATH_SUFFIX = /_(?:FILE|PATH|DIR|SOCK|SOCKET)$/;

/**
 * True when an environment variable's name says it holds a secret: a `_`-separated segment is KEY,
 * TOKEN, SECRET, PASSWORD, PASSWD, PASS, PWD, CREDENTIAL(S), AUTH (or ends in TOKEN, SECRET, ...,
 * APIKEY). Segments, not substrings, so `GIT_AUTHOR_NAME`, `KEYBOARD` and `MAX_TOKENS` are not.
 * Names of paths (`*_FILE`, `*_PATH`, `SSH_AUTH_SOCK`) are not.
 */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRET_NAME.has(upper) || PATH_SUFFIX.test(upper)) return false;
  return upper.split(/_+/).some((segment) => SECRET_SEGMENT.test(segment));
}

// Values that secret-looking names hold without being secret.
const NOT_SECRET_VALUE = new Set(["INSECURE_NO_AUTH"]);

function add(out: KnownSecret[], value: unknown, label: string): void {
  if (typeof value !== "string" && typeof value !== "number") return;
  const text = String(value).trim();
  if (text.length < MIN_SECRET_LENGTH || NOT_SECRET_VALUE.has(text)) return;
  out.push({ value: text, label });
  // `Authorization: Bearer <token>` in config headers: the token alone is the secret too.
  const scheme = /^(?:Bearer|Basic|Token|Bot)\s+(\S+)$/i.exec(text);
  if (scheme?.[1] && scheme[1].length >= MIN_SECRET_LENGTH) out.push({ value: scheme[1], label });
}

/** Pure: the values of secret-looking keys anywhere in a JSON-like value (config.yaml, auth.json). */
export function secretsInObject(value: unknown, path = ""): KnownSecret[] {
  const out: KnownSecret[] = [];
  const visit = (node: unknown, where: string, secret: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, where, secret);
      return;
    }
    if (isPlainObject(node)) {
      for (const [key, child] of Object.entries(node)) {
        // Entries of an env map (`mcp_servers.x.env`) are judged by their variable names too.
        const envName = key === key.toUpperCase() && isSecretEnvName(key);
        visit(child, where ? `${where}.${key}` : key, secret || isSecretKey(key) || envName);
      }
      return;
    }
    if (secret) add(out, node, where);
  };
  visit(value, path, false);
  return out;
}

/**
 * Pure: every secret the inputs hold: environment entries whose names look secret (values of at
 * least 8 characters), secret-looking values in config.yaml (`model.api_key`, `mcp_servers.*.env`
 * and `headers`, `auxiliary.*.api_key`, platform tokens), and auth.json's tokens and pool keys.
 */
export function collectKnownSecrets(input: {
  env?: Env | undefined;
  config?: unknown;
  auth?: unknown;
  webhooks?: unknown;
  /** Honcho's settings files (`honcho.json`: `apiKey`, OAuth tokens), as read. */
  honcho?: readonly unknown[];
}): KnownSecret[] {
  const out: KnownSecret[] = [];
  for (const [name, value] of Object.entries(input.env ?? {})) {
    if (value !== undefined && isSecretEnvName(name)) add(out, value, name);
  }
  out.push(...secretsInObject(input.config));
  out.push(...secretsInObject(input.auth, "auth"));
  out.push(...secretsInObject(input.webhooks, "webhook"));
  for (const file of input.honcho ?? []) out.push(...secretsInObject(file, "honcho"));
  return out;
}

const OFF = /^(?:0|false|no|off)$/i;

/**
 * Whether secrets are redacted: `security.redact_secrets` (default true), overridden by
 * `HERMES_REDACT_SECRETS=0|false|no|off` (or `1|true` to force it on).
 */
export function redactionEnabled(config: unknown, env: Env): boolean {
  const override = env["HERMES_REDACT_SECRETS"]?.trim();
  if (override) return !OFF.test(override);
  const security = isPlainObject(config) ? config["security"] : undefined;
  const value = isPlainObject(security) ? security["redact_secrets"] : undefined;
  return !(value === false || (typeof value === "string" && OFF.test(value)));
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    // Missing or unreadable: nothing to register from it (its owner reports the problem).
    return undefined;
  }
}

/**
 * Where the Honcho memory provider reads its settings (knowledge/memory/providers/honcho/config.ts
 * has the precedence): every one that exists may hold a key, so all are registered.
 */
function honchoFiles(home: string, env: Env): string[] {
  const user = env["HOME"]?.trim() || homedir();
  return [
    join(home, "honcho.json"),
    join(user, ".hermes", "honcho.json"),
    join(user, ".honcho", "config.json"),
  ];
}

/**
 * Registers the home's secrets with `redactor` (default: the process-wide one) and switches it on
 * or off per {@link redactionEnabled}. Reads auth.json and webhook_subscriptions.json; never
 * throws for a missing or broken file. Also reads Honcho's settings files (`honcho.json`). Returns how many values were registered.
 */
export function registerKnownSecrets(options: {
  home: string;
  env: Env;
  config: unknown;
  redactor?: Redactor;
}): number {
  const redactor = options.redactor ?? processRedactor();
  redactor.enabled = redactionEnabled(options.config, options.env);
  const secrets = collectKnownSecrets({
    env: options.env,
    config: options.config,
    auth: readJson(authPath(options.home)),
    webhooks: readJson(join(options.home, "webhook_subscriptions.json")),
    honcho: honchoFiles(options.home, options.env).map(readJson),
  });
  let added = 0;
  for (const { value, label } of secrets) if (redactor.addSecret(value, label)) added++;
  return added;
}
