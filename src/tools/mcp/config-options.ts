/**
 * The optional parts of an `mcp_servers.<name>` entry, in upstream's key names:
 *
 *   auth: oauth                    # OAuth 2.1 (HTTP servers): hermes mcp login NAME
 *   oauth: {client_id, client_secret, scope, redirect_port, client_name, timeout}
 *   ssl_verify: true | false | /path/ca.pem
 *   client_cert: /path/combined.pem | [cert, key] | [cert, key, passphrase]
 *   client_key: /path/key.pem
 *   sampling: {enabled, model, max_tokens_cap, timeout, max_rpm, allowed_models}
 *
 * Pure: paths are expanded (`~`) but not read; a missing file is reported at connect time.
 */
import { join } from "node:path";
import { substituteEnv } from "../../config/env-subst.js";

type Fail = (key: string | undefined, detail: string) => never;
type Env = Readonly<Record<string, string | undefined>>;

/** `auth: oauth` and the `oauth:` mapping. */
export interface McpOAuthConfig {
  /** A client registered in advance (`oauth.client_id`); absent: dynamic client registration. */
  clientId?: string;
  clientSecret?: string;
  /** Space-separated scopes to ask for; absent: what the server advertises. */
  scope?: string;
  /** Fixed port of the loopback redirect listener (`oauth.redirect_port`); absent: a free one. */
  redirectPort?: number;
  /** The name shown on the consent page (`oauth.client_name`). */
  clientName: string;
  /** How long `hermes mcp login` waits for the browser (`oauth.timeout`, default 300 s). */
  timeoutMs: number;
}

/** `ssl_verify`, `client_cert` and `client_key`: TLS for an https server. */
export interface McpTlsConfig {
  /** `ssl_verify: false` turns off server certificate checks (insecure). */
  verify: boolean;
  /** `ssl_verify: /path/ca.pem`: trust this CA bundle (in place of the system's). */
  caFile?: string;
  /** The client certificate (PEM), possibly with its key in the same file. */
  certFile?: string;
  /** The client key (PEM), when apart from the certificate. */
  keyFile?: string;
  /** Passphrase of an encrypted key (third element of `client_cert`). */
  passphrase?: string;
}

/** `sampling:`: whether and how the server may ask the agent's model for completions. */
export interface McpSamplingConfig {
  /** Default true, as upstream: a server may ask; `enabled: false` refuses every request. */
  enabled: boolean;
  /** A model to answer with instead of the session's (`sampling.model`). */
  model?: string;
  /** The most tokens one answer may have, whatever the server asks for (default 4096). */
  maxTokensCap: number;
  /** Per request, in ms (`sampling.timeout`, default 30 s). */
  timeoutMs: number;
  /** Requests per rolling minute (`sampling.max_rpm`, default 10). */
  maxRpm: number;
  /** Model names a server's hints may pick (`sampling.allowed_models`; empty: hints ignored). */
  allowedModels: string[];
}

export const DEFAULT_SAMPLING: McpSamplingConfig = {
  enabled: true,
  maxTokensCap: 4096,
  timeoutMs: 30_000,
  maxRpm: 10,
  allowedModels: [],
};

export const DEFAULT_OAUTH_TIMEOUT_S = 300;

/** `auth` and `oauth`; undefined when the server does not use OAuth. */
export function parseOAuth(
  entry: Record<string, unknown>,
  isHttp: boolean,
  fail: Fail,
  warnings: string[],
  name: string,
  env: Env,
): McpOAuthConfig | undefined {
  const auth = entry["auth"];
  if (auth === undefined || auth === null) {
    if (entry["oauth"] !== undefined && entry["oauth"] !== null) {
      warnings.push(`mcp_servers.${name}.oauth is set but auth is not "oauth"; it is ignored`);
    }
    return undefined;
  }
  if (typeof auth !== "string") return fail("auth", `expected "oauth" or "header", got ${describe(auth)}`);
  const kind = auth.trim().toLowerCase();
  if (kind === "header" || kind === "none" || kind === "") return undefined;
  if (kind !== "oauth") return fail("auth", `expected "oauth" or "header", got ${JSON.stringify(auth)}`);
  if (!isHttp) {
    warnings.push(`mcp_servers.${name}.auth: oauth applies to url servers only; ignored for a command`);
    return undefined;
  }
  const raw = entry["oauth"];
  if (raw !== undefined && raw !== null && !isRecord(raw)) {
    return fail("oauth", `expected a mapping (client_id, scope, ...), got ${describe(raw)}`);
  }
  const section = (raw ?? {}) as Record<string, unknown>;
  const sub: Fail = (key, detail) => fail(`oauth.${key ?? ""}`, detail);
  const port = optionalNumber(section, "redirect_port", sub);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    sub("redirect_port", `expected a port number (1-65535), got ${port}`);
  }
  const timeout = optionalNumber(section, "timeout", sub);
  if (timeout !== undefined && timeout <= 0) sub("timeout", `expected a positive number of seconds`);
  const clientId = optionalText(section, "client_id", sub);
  const secret = optionalText(section, "client_secret", sub);
  const clientSecret = secret ? substituteEnv(secret, env).value : undefined;
  const scope = optionalText(section, "scope", sub);
  const clientName = optionalText(section, "client_name", sub);
  return {
    ...(clientId ? { clientId } : {}),
    ...(clientSecret ? { clientSecret } : {}),
    ...(scope ? { scope } : {}),
    ...(port !== undefined ? { redirectPort: port } : {}),
    clientName: clientName || "Hermes Agent",
    timeoutMs: Math.round((timeout ?? DEFAULT_OAUTH_TIMEOUT_S) * 1000),
  };
}

/** `ssl_verify`, `client_cert`, `client_key`; undefined when none is set. */
export function parseTls(
  entry: Record<string, unknown>,
  isHttp: boolean,
  fail: Fail,
  warnings: string[],
  name: string,
  env: Env,
): McpTlsConfig | undefined {
  const verifyRaw = entry["ssl_verify"];
  const certRaw = entry["client_cert"];
  const keyRaw = entry["client_key"];
  if (isAbsent(verifyRaw) && isAbsent(certRaw) && isAbsent(keyRaw)) return undefined;
  if (!isHttp) {
    warnings.push(`mcp_servers.${name}: ssl_verify, client_cert and client_key apply to url servers only`);
    return undefined;
  }
  const tls: McpTlsConfig = { verify: true };
  if (!isAbsent(verifyRaw)) {
    const flag = parseBool(verifyRaw);
    if (flag !== undefined) tls.verify = flag;
    else if (typeof verifyRaw === "string" && verifyRaw.trim())
      tls.caFile = expandPath(verifyRaw.trim(), env);
    else
      return fail(
        "ssl_verify",
        `expected true, false or the path of a CA bundle, got ${describe(verifyRaw)}`,
      );
  }
  if (!isAbsent(certRaw)) {
    if (typeof certRaw === "string" && certRaw.trim()) tls.certFile = expandPath(certRaw.trim(), env);
    else if (Array.isArray(certRaw) && certRaw.length >= 1 && certRaw.length <= 3) {
      const [cert, key, passphrase] = certRaw.map((item, i) => {
        if (typeof item !== "string" || !item.trim()) {
          return fail(`client_cert.${i}`, `expected text, got ${describe(item)}`);
        }
        return item;
      });
      if (cert) tls.certFile = expandPath(cert.trim(), env);
      if (key) tls.keyFile = expandPath(key.trim(), env);
      if (passphrase) tls.passphrase = substituteEnv(passphrase, env).value;
    } else {
      return fail(
        "client_cert",
        `expected a PEM path, [cert, key] or [cert, key, passphrase], got ${describe(certRaw)}`,
      );
    }
  }
  if (!isAbsent(keyRaw)) {
    if (typeof keyRaw !== "string" || !keyRaw.trim())
      return fail("client_key", `expected a path, got ${describe(keyRaw)}`);
    if (tls.keyFile)
      return fail("client_key", "the key is already the second element of client_cert; set one");
    tls.keyFile = expandPath(keyRaw.trim(), env);
  }
  if (tls.keyFile && !tls.certFile) return fail("client_key", "needs client_cert (the certificate) as well");
  return tls;
}

/** `sampling:`; the defaults when absent. */
export function parseSampling(entry: Record<string, unknown>, fail: Fail): McpSamplingConfig {
  const raw = entry["sampling"];
  if (isAbsent(raw)) return { ...DEFAULT_SAMPLING, allowedModels: [] };
  if (typeof raw === "boolean") return { ...DEFAULT_SAMPLING, allowedModels: [], enabled: raw };
  if (!isRecord(raw))
    return fail("sampling", `expected a mapping (enabled, model, ...), got ${describe(raw)}`);
  const sub: Fail = (key, detail) => fail(`sampling.${key ?? ""}`, detail);
  const enabledRaw = raw["enabled"];
  let enabled = DEFAULT_SAMPLING.enabled;
  if (!isAbsent(enabledRaw)) {
    const parsed = parseBool(enabledRaw);
    if (parsed === undefined) sub("enabled", `expected true or false, got ${describe(enabledRaw)}`);
    enabled = parsed as boolean;
  }
  const positive = (key: string, fallback: number): number => {
    const n = optionalNumber(raw, key, sub);
    if (n === undefined) return fallback;
    if (n <= 0) return sub(key, `expected a positive number, got ${n}`);
    return n;
  };
  const allowed = raw["allowed_models"];
  if (!isAbsent(allowed) && !Array.isArray(allowed)) {
    sub("allowed_models", `expected a list of model names, got ${describe(allowed)}`);
  }
  const model = optionalText(raw, "model", sub);
  return {
    enabled,
    ...(model ? { model } : {}),
    maxTokensCap: Math.floor(positive("max_tokens_cap", DEFAULT_SAMPLING.maxTokensCap)),
    timeoutMs: Math.round(positive("timeout", DEFAULT_SAMPLING.timeoutMs / 1000) * 1000),
    maxRpm: Math.floor(positive("max_rpm", DEFAULT_SAMPLING.maxRpm)),
    allowedModels: Array.isArray(allowed) ? allowed.map(String).filter((s) => s.trim()) : [],
  };
}

/** `~` and `~/…` become the user's home (from `env.HOME`); relative paths stay as written. */
export function expandPath(path: string, env: Env): string {
  const home = env["HOME"] ?? env["USERPROFILE"];
  if (home && (path === "~" || path.startsWith("~/"))) return join(home, path.slice(1));
  return path;
}

function optionalText(section: Record<string, unknown>, key: string, fail: Fail): string | undefined {
  const value = section[key];
  if (isAbsent(value)) return undefined;
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") return fail(key, `expected text, got ${describe(value)}`);
  return value.trim() || undefined;
}

function optionalNumber(section: Record<string, unknown>, key: string, fail: Fail): number | undefined {
  const value = section[key];
  if (isAbsent(value)) return undefined;
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(n) || (typeof value === "string" && !value.trim())) {
    return fail(key, `expected a number, got ${describe(value)}`);
  }
  return n;
}

function parseBool(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const word = value.trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(word)) return true;
  if (["false", "no", "off", "0"].includes(word)) return false;
  return undefined;
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return JSON.stringify(value);
}
