/**
 * Microsoft Entra ID tokens for Azure AI Foundry (`model.auth_mode: entra_id`), from the sources
 * Azure's DefaultAzureCredential tries, in its order:
 *
 * 1. environment client secret: AZURE_TENANT_ID + AZURE_CLIENT_ID + AZURE_CLIENT_SECRET, sent to
 *    `<AZURE_AUTHORITY_HOST>/<tenant>/oauth2/v2.0/token` (client-credentials grant);
 * 2. workload identity: AZURE_TENANT_ID + AZURE_CLIENT_ID + AZURE_FEDERATED_TOKEN_FILE, the file's
 *    token sent as a client assertion to the same endpoint (read again for every request: the
 *    platform rotates it);
 * 3. managed identity: IDENTITY_ENDPOINT + IDENTITY_HEADER (App Service, Functions, Container
 *    Apps), else the instance metadata service at 169.254.169.254 (a VM, AKS), asked with a short
 *    timeout so a machine outside Azure moves on quickly;
 * 4. the Azure CLI: `az account get-access-token --resource <resource> -o json`.
 *
 * A source that is not set up is "unavailable" and the next one is tried; a source that is set up
 * but fails (a refused secret, an unreachable authority) ends the chain with its reason, as
 * DefaultAzureCredential does, so a misconfiguration is not hidden behind a later source. No token
 * and no secret is written anywhere; messages never carry either.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { scrubEnv } from "../../util/env-scrub.js";
import { httpFetch } from "../../util/http-fetch.js";
import { type Env, isRecord, positive, text } from "./types.js";

export const DEFAULT_AUTHORITY_HOST = "https://login.microsoftonline.com";
/** The instance metadata service's token address (AZURE_POD_IDENTITY_AUTHORITY_HOST replaces the host). */
export const IMDS_HOST = "http://169.254.169.254";

/** A bearer for `scope` and when it stops working. */
export interface AzureToken {
  token: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** Which source gave it, for doctor and status lines ("environment client secret", …). */
  source: string;
}

/** The result of running `az`: its exit code (null when it did not start or was killed) and output. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started (ENOENT: not installed) or was stopped (timeout). */
  error?: "not_found" | "timeout" | undefined;
}

/** The world the sources talk to; tests inject each part. */
export interface AzureIdentityDeps {
  env: Env;
  fetch: typeof fetch;
  /** Epoch milliseconds. */
  now: () => number;
  /** Runs a program (the Azure CLI) with arguments, bounded by `timeoutMs`. */
  run: (program: string, args: readonly string[], timeoutMs: number) => Promise<CommandResult>;
  readFile: (path: string) => Promise<string>;
  /** Per token request to an authority or identity endpoint (default 15 s). */
  timeoutMs?: number | undefined;
  /** The metadata service's answer time before it counts as absent (default 2 s). */
  imdsTimeoutMs?: number | undefined;
  /** The `az` call's limit (default 15 s). */
  cliTimeoutMs?: number | undefined;
}

/**
 * A source could not give a token. `unavailable`: it is not set up here (the chain goes on);
 * `failed`: it is set up and refused or broke (the chain stops). `transient`: trying again later
 * may work (a timeout, a connection failure, a 5xx).
 */
export class EntraError extends Error {
  readonly kind: "unavailable" | "failed";
  readonly transient: boolean;
  /** What the user can do about it (set on the chain's own errors). */
  readonly hint: string | undefined;
  constructor(message: string, kind: "unavailable" | "failed", transient = false, hint?: string) {
    super(message);
    this.name = "EntraError";
    this.kind = kind;
    this.transient = transient;
    this.hint = hint;
  }
}

/** One credential source: its label and how it gets a token for a scope. */
export interface AzureSource {
  readonly label: string;
  getToken(scope: string, deps: AzureIdentityDeps): Promise<AzureToken>;
}

/** The resource a v1 endpoint (managed identity, az `--resource`) takes for a `/.default` scope. */
export function scopeToResource(scope: string): string {
  return scope.replace(/\/\.default$/, "");
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;
/** What a bearer may hold to go into a header as it is: visible ASCII, no spaces. */
const BEARER = /^[\x21-\x7e]+$/;

function env(deps: AzureIdentityDeps, name: string): string | undefined {
  return text(deps.env[name]);
}

/** `<authority>/<tenant>/oauth2/v2.0/token`, refusing a tenant that is not one and plain http off loopback. */
export function tokenEndpoint(deps: AzureIdentityDeps, tenant: string, label: string): string {
  if (!TENANT.test(tenant)) {
    throw new EntraError(
      `${label}: AZURE_TENANT_ID "${tenant.slice(0, 60)}" is not a tenant id or domain`,
      "failed",
    );
  }
  const authority = (env(deps, "AZURE_AUTHORITY_HOST") ?? DEFAULT_AUTHORITY_HOST).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(
      `${/^[a-z]+:\/\//i.test(authority) ? authority : `https://${authority}`}/${tenant}/oauth2/v2.0/token`,
    );
  } catch {
    throw new EntraError(`${label}: AZURE_AUTHORITY_HOST "${authority.slice(0, 80)}" is not a URL`, "failed");
  }
  if (url.protocol !== "https:" && !isLoopback(url.hostname)) {
    throw new EntraError(
      `${label}: AZURE_AUTHORITY_HOST must be https (got ${url.origin}); a client credential is never sent in clear text`,
      "failed",
    );
  }
  return url.toString();
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request with a deadline; no answer in time or no connection is a transient failure. */
async function request(
  label: string,
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  deps: AzureIdentityDeps,
  timeoutMs: number,
  absentWhenSilent = false,
): Promise<Answer> {
  const where = new URL(url).origin;
  let response: Response;
  try {
    response = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const timedOut = error instanceof Error && /abort|timeout/i.test(`${error.name} ${error.message}`);
    const why = timedOut ? `no answer within ${Math.round(timeoutMs / 100) / 10} s` : connectionWords(error);
    throw new EntraError(`${label}: ${where} ${why}`, absentWhenSilent ? "unavailable" : "failed", true);
  }
  let raw = "";
  try {
    raw = await response.text();
  } catch (error) {
    throw new EntraError(`${label}: ${where} ${connectionWords(error)}`, "failed", true);
  }
  let parsed: unknown;
  try {
    parsed = raw ? JSON.parse(raw) : {};
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed)) {
    // A probed address (IMDS) that answers in text is another cloud's metadata service or
    // something else altogether, not Azure's: that source is not here, and the chain goes on.
    const absent = absentWhenSilent && response.status < 500;
    throw new EntraError(
      `${label}: ${where} answered HTTP ${response.status} with something that is not a JSON object${absent ? " (not Azure's metadata service)" : ""}`,
      absent ? "unavailable" : "failed",
      response.status >= 500,
    );
  }
  return { status: response.status, body: parsed };
}

function connectionWords(error: unknown): string {
  const cause = error instanceof Error && isRecord(error.cause) ? text(error.cause["code"]) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return `could not be reached (${cause ?? message})`;
}

/** `error: error_description` of an OAuth error answer, first line only. */
function oauthReason(answer: Answer): string {
  const code = text(answer.body["error"]);
  const detail = text(answer.body["error_description"])?.split(/\r?\n/)[0];
  return [code, detail].filter(Boolean).join(": ") || `HTTP ${answer.status}`;
}

/** The token in an answer, with its expiry (expires_on epoch s, else now + expires_in). */
function tokenOf(label: string, answer: Answer, deps: AzureIdentityDeps): AzureToken {
  const token = text(answer.body["access_token"]);
  const nowS = Math.floor(deps.now() / 1000);
  const expiresOn = positive(answer.body["expires_on"]);
  const expiresIn = positive(answer.body["expires_in"]);
  const expiresAt = expiresOn ?? (expiresIn !== undefined ? nowS + expiresIn : undefined);
  if (!token || !BEARER.test(token) || expiresAt === undefined) {
    throw new EntraError(
      `${label}: the answer has no usable access_token and expiry (fields: ${Object.keys(answer.body).slice(0, 8).join(", ") || "none"})`,
      "failed",
    );
  }
  return { token, expiresAt: Math.floor(expiresAt), source: label };
}

/** Client-credentials grant at the tenant's token endpoint (a secret or a client assertion). */
async function clientCredentials(
  label: string,
  scope: string,
  deps: AzureIdentityDeps,
  credential: Record<string, string>,
): Promise<AzureToken> {
  const tenant = env(deps, "AZURE_TENANT_ID") ?? "";
  const url = tokenEndpoint(deps, tenant, label);
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: env(deps, "AZURE_CLIENT_ID") ?? "",
    scope,
    ...credential,
  });
  const answer = await request(
    label,
    url,
    {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
    },
    deps,
    deps.timeoutMs ?? 15_000,
  );
  if (answer.status !== 200) {
    // An endpoint (or a proxy in front of it) that echoes the form must not put the credential in a message.
    let reason = oauthReason(answer);
    for (const value of Object.values(credential)) {
      if (value.length >= 4) reason = reason.split(value).join("[redacted]");
    }
    throw new EntraError(
      `${label}: ${new URL(url).origin} refused the request (${reason})`,
      "failed",
      answer.status >= 500 || answer.status === 429,
    );
  }
  return tokenOf(label, answer, deps);
}

export const environmentSource: AzureSource = {
  label: "environment client secret",
  async getToken(scope, deps) {
    const missing = ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"].filter(
      (n) => !env(deps, n),
    );
    if (missing.length > 0) {
      const certificate = env(deps, "AZURE_CLIENT_CERTIFICATE_PATH")
        ? "; a client certificate is not supported, use a secret"
        : "";
      throw new EntraError(`${this.label}: ${missing.join(", ")} not set${certificate}`, "unavailable");
    }
    return clientCredentials(this.label, scope, deps, {
      client_secret: env(deps, "AZURE_CLIENT_SECRET") ?? "",
    });
  },
};

export const workloadIdentitySource: AzureSource = {
  label: "workload identity",
  async getToken(scope, deps) {
    const file = env(deps, "AZURE_FEDERATED_TOKEN_FILE");
    if (!file) throw new EntraError(`${this.label}: AZURE_FEDERATED_TOKEN_FILE not set`, "unavailable");
    const missing = ["AZURE_TENANT_ID", "AZURE_CLIENT_ID"].filter((n) => !env(deps, n));
    if (missing.length > 0)
      throw new EntraError(`${this.label}: ${missing.join(", ")} not set`, "unavailable");
    let assertion: string;
    try {
      assertion = (await deps.readFile(file)).trim();
    } catch (error) {
      const code = isRecord(error) ? text(error["code"]) : undefined;
      throw new EntraError(
        `${this.label}: cannot read AZURE_FEDERATED_TOKEN_FILE ${file} (${code ?? "error"})`,
        "failed",
      );
    }
    if (!assertion)
      throw new EntraError(`${this.label}: AZURE_FEDERATED_TOKEN_FILE ${file} is empty`, "failed");
    return clientCredentials(this.label, scope, deps, {
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: assertion,
    });
  },
};

export const managedIdentitySource: AzureSource = {
  label: "managed identity",
  async getToken(scope, deps) {
    const resource = scopeToResource(scope);
    // A user-assigned identity is named by AZURE_CLIENT_ID, as DefaultAzureCredential reads it.
    const clientId = env(deps, "AZURE_CLIENT_ID");
    const endpoint = env(deps, "IDENTITY_ENDPOINT");
    const header = env(deps, "IDENTITY_HEADER");
    if (endpoint && header) {
      const url = new URL(endpoint);
      url.searchParams.set("api-version", "2019-08-01");
      url.searchParams.set("resource", resource);
      if (clientId) url.searchParams.set("client_id", clientId);
      const label = `${this.label} (IDENTITY_ENDPOINT)`;
      const answer = await request(
        label,
        url.toString(),
        { method: "GET", headers: { "x-identity-header": header, accept: "application/json" } },
        deps,
        deps.timeoutMs ?? 15_000,
      );
      if (answer.status !== 200) {
        throw new EntraError(
          `${label}: ${url.origin} refused (${oauthReason(answer)})`,
          "failed",
          answer.status >= 500,
        );
      }
      return tokenOf(label, answer, deps);
    }
    const host = (env(deps, "AZURE_POD_IDENTITY_AUTHORITY_HOST") ?? IMDS_HOST).replace(/\/+$/, "");
    const url = new URL(`${host}/metadata/identity/oauth2/token`);
    url.searchParams.set("api-version", "2018-02-01");
    url.searchParams.set("resource", resource);
    if (clientId) url.searchParams.set("client_id", clientId);
    const label = `${this.label} (IMDS)`;
    const answer = await request(
      label,
      url.toString(),
      { method: "GET", headers: { metadata: "true", accept: "application/json" } },
      deps,
      deps.imdsTimeoutMs ?? 2_000,
      true,
    );
    // 400 "identity not found": a VM without a managed identity; 404/403: not the metadata service.
    if (answer.status === 400 || answer.status === 403 || answer.status === 404) {
      throw new EntraError(`${label}: none on this host (HTTP ${answer.status})`, "unavailable");
    }
    if (answer.status !== 200) {
      throw new EntraError(`${label}: refused (${oauthReason(answer)})`, "failed", answer.status >= 500);
    }
    return tokenOf(label, answer, deps);
  },
};

export const azureCliSource: AzureSource = {
  label: "Azure CLI",
  async getToken(scope, deps) {
    const args = ["account", "get-access-token", "--output", "json", "--resource", scopeToResource(scope)];
    const result = await deps.run("az", args, deps.cliTimeoutMs ?? 15_000);
    if (result.error === "not_found")
      throw new EntraError(`${this.label}: az not found on PATH`, "unavailable");
    if (result.error === "timeout") {
      throw new EntraError(
        `${this.label}: az account get-access-token did not finish in time`,
        "failed",
        true,
      );
    }
    if (result.code !== 0) {
      const said = firstLine(result.stderr) || firstLine(result.stdout) || `exit code ${result.code}`;
      if (/az login|not logged in|no subscription/i.test(result.stderr)) {
        throw new EntraError(`${this.label}: not logged in (run az login): ${said}`, "unavailable");
      }
      throw new EntraError(`${this.label}: az account get-access-token failed: ${said}`, "failed");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(result.stdout);
    } catch {
      parsed = undefined;
    }
    const token = isRecord(parsed) ? text(parsed["accessToken"]) : undefined;
    const expiresAt = isRecord(parsed) ? cliExpiry(parsed) : undefined;
    if (!token || !BEARER.test(token) || expiresAt === undefined) {
      throw new EntraError(
        `${this.label}: az account get-access-token printed something that is not a token answer (${describeOutput(result.stdout)})`,
        "failed",
      );
    }
    return { token, expiresAt, source: this.label };
  },
};

/** `expires_on` (epoch s, newer CLIs), else `expiresOn` ("YYYY-MM-DD HH:MM:SS.ffffff", local time). */
function cliExpiry(answer: Record<string, unknown>): number | undefined {
  const epoch = positive(answer["expires_on"]);
  if (epoch !== undefined) return Math.floor(epoch);
  const local = text(answer["expiresOn"]);
  if (!local) return undefined;
  const ms = new Date(local.replace(" ", "T")).getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

function firstLine(output: string): string {
  return (output.split(/\r?\n/).find((line) => line.trim() !== "") ?? "").trim().slice(0, 200);
}

/** What garbage output looked like, without echoing it (it could hold anything). */
function describeOutput(stdout: string): string {
  const trimmed = stdout.trim();
  if (!trimmed) return "nothing";
  return `${trimmed.length} characters, not JSON with accessToken and an expiry`;
}

/** DefaultAzureCredential's order, as far as Hermes follows it. */
export const DEFAULT_CHAIN: readonly AzureSource[] = [
  environmentSource,
  workloadIdentitySource,
  managedIdentitySource,
  azureCliSource,
];

/** How to get a credential, when the chain found none. */
export const ENTRA_FIX =
  "run `az login`; or set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (e.g. in ~/.hermes/.env); " +
  "or run on an Azure host with a managed identity; or switch to an API key with `hermes setup model`";

/** What to do when a source that is set up failed. */
const FAILED_FIX =
  "fix the credential named above, or unset it so the next source is tried; `hermes doctor` checks the chain";

/**
 * The first token the chain gives for `scope`. Throws `EntraError`: the stopping source's failure
 * (`failed`), or, when every source was unavailable, one message listing what each said (`unavailable`).
 */
export async function chainToken(
  scope: string,
  deps: AzureIdentityDeps,
  chain: readonly AzureSource[] = DEFAULT_CHAIN,
): Promise<AzureToken> {
  const tried: string[] = [];
  for (const source of chain) {
    try {
      return await source.getToken(scope, deps);
    } catch (error) {
      if (!(error instanceof EntraError)) throw error;
      if (error.kind === "failed") {
        const hint = error.transient
          ? "check the network, then try again; `hermes doctor` checks the chain"
          : FAILED_FIX;
        throw new EntraError(`Entra ID: ${error.message}`, "failed", error.transient, hint);
      }
      tried.push(error.message);
    }
  }
  throw new EntraError(
    `Entra ID found no credential. Tried ${tried.join("; ")}.`,
    "unavailable",
    false,
    ENTRA_FIX,
  );
}

/** The real world: node:http fetch, the wall clock, `az` through execFile with secrets scrubbed. */
export function defaultAzureDeps(envIn: Env): AzureIdentityDeps {
  return {
    env: envIn,
    fetch: httpFetch as unknown as typeof fetch,
    now: Date.now,
    readFile: (path) => readFile(path, "utf8"),
    run: (program, args, timeoutMs) => runProgram(program, args, timeoutMs, envIn),
  };
}

/**
 * Runs `program` with the environment minus Hermes's secrets (the CLI needs none of them), in its
 * own process group so a timeout stops everything it started (`az` is a script that runs Python).
 */
function runProgram(
  program: string,
  args: readonly string[],
  timeoutMs: number,
  envIn: Env,
): Promise<CommandResult> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const limit = 1024 * 1024;
    const child = spawn(program, [...args], {
      env: scrubEnv(envIn) as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      windowsHide: true,
    });
    const stop = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      if (stdout.length < limit) stdout += chunk.toString("utf8");
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < limit) stderr += chunk.toString("utf8");
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        code: null,
        stdout: "",
        stderr: "",
        error: error.code === "ENOENT" ? "not_found" : undefined,
      });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) resolve({ code: null, stdout, stderr, error: "timeout" });
      else resolve({ code, stdout, stderr });
    });
  });
}
