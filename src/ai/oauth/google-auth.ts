/**
 * Google credentials for Vertex AI without Google's SDK: a service-account JSON key (an RS256 JWT
 * signed with node:crypto, exchanged at the key's `token_uri`) or gcloud's Application Default
 * Credentials (an `authorized_user` refresh token). Where the file is found follows Google's
 * libraries: `VERTEX_CREDENTIALS_PATH` (upstream Hermes's own name), `GOOGLE_APPLICATION_CREDENTIALS`,
 * then gcloud's `application_default_credentials.json` (under `CLOUDSDK_CONFIG`, else
 * `~/.config/gcloud`), then, on Google Cloud, the metadata server's token for the attached service
 * account (google-metadata below: no file, no secret on disk).
 *
 * The token endpoint is the file's `token_uri` (service accounts always name one; an
 * `authorized_user` file may, as Google's libraries accept), else `HERMES_GOOGLE_TOKEN_URL`, else
 * Google's. It must be https, or http on a loopback address (a local fake or proxy): a signed
 * assertion or a refresh token never crosses the network in clear text.
 *
 * Every failure is a `GoogleAuthError` whose message is one line: what is wrong, with the path or
 * URL, then the fix.
 */
import { createPrivateKey, type KeyObject, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redactor } from "../../util/redact.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** Google's token endpoint, when the credential file names none. */
export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
/** The scope Vertex AI takes. */
export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** A token is renewed this long before it expires (as upstream Hermes does). */
export const GOOGLE_REFRESH_SKEW_S = 300;
/** How long the token endpoint may take to answer. */
export const GOOGLE_TOKEN_TIMEOUT_MS = 15_000;

/** Where the credential file was found. */
export type CredentialOrigin =
  | "VERTEX_CREDENTIALS_PATH"
  | "GOOGLE_APPLICATION_CREDENTIALS"
  | "gcloud ADC"
  | "metadata server";

export interface ServiceAccountKey {
  type: "service_account";
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | undefined;
  projectId: string | undefined;
  tokenUrl: string;
}

export interface AuthorizedUserKey {
  type: "authorized_user";
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** gcloud's `quota_project_id`: the project billed, used when nothing else names one. */
  projectId: string | undefined;
  tokenUrl: string;
}

/** The metadata server of a Google Cloud VM, Cloud Run service or GKE pod: it hands out tokens itself. */
export interface MetadataServer {
  type: "metadata";
  /** `http://HOST/computeMetadata/v1`. */
  root: string;
  projectId: undefined;
}

export type GoogleCredential = ServiceAccountKey | AuthorizedUserKey | MetadataServer;

export interface CredentialLocation {
  path: string;
  origin: CredentialOrigin;
}

/** A credential problem, in one line that names the fix. `transient` ones may pass on a retry. */
export class GoogleAuthError extends Error {
  readonly transient: boolean;
  constructor(message: string, options: { transient?: boolean } = {}) {
    super(message);
    this.name = "GoogleAuthError";
    this.transient = options.transient ?? false;
  }
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** gcloud's ADC file: `$CLOUDSDK_CONFIG/application_default_credentials.json`, else under `~/.config/gcloud`. */
export function gcloudAdcPath(env: Env, homedir: string | undefined): string | undefined {
  const configDir = text(env["CLOUDSDK_CONFIG"]);
  if (configDir) return join(configDir, "application_default_credentials.json");
  const home = text(env["HOME"]) ?? homedir;
  return home ? join(home, ".config", "gcloud", "application_default_credentials.json") : undefined;
}

/**
 * The credential file to use, in Google's order, or undefined when there is none. A variable that
 * names a file that does not exist is an error (the user meant it), never skipped for the next.
 */
export function findCredentialFile(
  env: Env,
  options: {
    homedir?: string | undefined;
    exists: (path: string) => boolean;
    /** Reads a small system file (the BIOS vendor); tests give their own. Default: node:fs. */
    readSystemFile?: ((path: string) => string | undefined) | undefined;
  },
): CredentialLocation | undefined {
  for (const origin of ["VERTEX_CREDENTIALS_PATH", "GOOGLE_APPLICATION_CREDENTIALS"] as const) {
    const path = text(env[origin]);
    if (!path) continue;
    if (!options.exists(path)) {
      throw new GoogleAuthError(
        `${origin} names ${path}, which does not exist: point it at your service-account key file ` +
          "(hermes setup model asks for it), or remove it to use gcloud's login",
      );
    }
    return { path, origin };
  }
  const adc = gcloudAdcPath(env, options.homedir);
  if (adc && options.exists(adc)) return { path: adc, origin: "gcloud ADC" };
  return onGoogleCloud(env, options.readSystemFile ?? readSystemFile)
    ? { path: metadataRoot(env), origin: "metadata server" }
    : undefined;
}

/** The metadata server's host as Google's libraries read it: `GCE_METADATA_HOST`, `GCE_METADATA_IP`, else Google's name. */
export function metadataHost(env: Env): string {
  return text(env["GCE_METADATA_HOST"]) ?? text(env["GCE_METADATA_IP"]) ?? "metadata.google.internal";
}

/** `http://HOST/computeMetadata/v1` (the metadata server speaks plain http on the VM's link-local network). */
export function metadataRoot(env: Env): string {
  return `http://${metadataHost(env)}/computeMetadata/v1`;
}

function readSystemFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Whether to ask the metadata server, decided without the network so a machine off Google Cloud
 * never waits: `METADATA_SERVER_DETECTION` (none, assume-present, bios-only, ping-only) as Google's
 * libraries read it; a `GCE_METADATA_HOST`/`GCE_METADATA_IP` someone set; Cloud Run and Cloud
 * Functions' variables; or a BIOS that says Google (Compute Engine and GKE nodes, on Linux).
 */
export function onGoogleCloud(env: Env, read: (path: string) => string | undefined): boolean {
  const detection = text(env["METADATA_SERVER_DETECTION"])?.toLowerCase();
  if (detection === "none") return false;
  if (detection === "assume-present" || detection === "ping-only") return true;
  if (detection !== "bios-only") {
    if (text(env["GCE_METADATA_HOST"]) || text(env["GCE_METADATA_IP"])) return true;
    if (text(env["K_SERVICE"]) || text(env["CLOUD_RUN_JOB"]) || text(env["FUNCTION_NAME"])) return true;
  }
  return /google/i.test(read("/sys/class/dmi/id/bios_vendor") ?? "");
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/**
 * `url` when it may carry a credential: https, or http to a loopback address. Throws naming `what`
 * (where the URL came from) otherwise.
 */
export function checkSecureUrl(url: string, what: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GoogleAuthError(`${what} is not a URL (${JSON.stringify(url)}): fix or remove it`);
  }
  const ok = parsed.protocol === "https:" || (parsed.protocol === "http:" && isLoopback(parsed.hostname));
  if (!ok) {
    throw new GoogleAuthError(
      `${what} is ${url}: credentials go only over https (or http to this machine); fix or remove it`,
    );
  }
  return url;
}

/**
 * Parses a credential file's text. `where` names it in messages. Registers the secrets it holds
 * (private key, refresh token, client secret) with `redactor` before anything else can print them.
 */
export function parseCredential(raw: string, where: string, env: Env, redactor?: Redactor): GoogleCredential {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (error) {
    throw new GoogleAuthError(
      `${where} is not JSON (${(error as Error).message.split("\n")[0]}): download the key again ` +
        "(IAM → Service accounts → Keys → Add key → JSON) or run gcloud auth application-default login",
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new GoogleAuthError(`${where} is not a JSON object: it is not a Google credential file`);
  }
  const d = data as Record<string, unknown>;
  for (const field of ["private_key", "refresh_token", "client_secret"]) {
    const value = text(d[field]);
    if (value && redactor) redactor.addSecret(value, `GOOGLE_${field.toUpperCase()}`);
  }
  const type = text(d["type"]);
  if (type === "service_account") return serviceAccount(d, where);
  if (type === "authorized_user") return authorizedUser(d, where, env);
  throw new GoogleAuthError(
    `${where} has type ${JSON.stringify(type ?? null)}; Hermes reads "service_account" keys and ` +
      `gcloud's "authorized_user" login: use a service-account JSON key or run gcloud auth application-default login`,
  );
}

function serviceAccount(d: Record<string, unknown>, where: string): ServiceAccountKey {
  const clientEmail = text(d["client_email"]);
  const pem = text(d["private_key"]);
  const missing = [!clientEmail && "client_email", !pem && "private_key"].filter(Boolean);
  if (missing.length > 0 || !clientEmail || !pem) {
    throw new GoogleAuthError(
      `${where} has no ${missing.join(" or ")}: download a new JSON key for the service account`,
    );
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new GoogleAuthError(
      `the private_key in ${where} is not a PEM private key: download a new JSON key for ${clientEmail}`,
    );
  }
  if (privateKey.asymmetricKeyType !== "rsa") {
    throw new GoogleAuthError(
      `the private_key in ${where} is ${privateKey.asymmetricKeyType ?? "not an RSA"} key, Google signs with RSA: ` +
        `download a new JSON key for ${clientEmail}`,
    );
  }
  const tokenUrl = checkSecureUrl(text(d["token_uri"]) ?? GOOGLE_TOKEN_URL, `token_uri in ${where}`);
  return {
    type: "service_account",
    clientEmail,
    privateKey,
    privateKeyId: text(d["private_key_id"]),
    projectId: text(d["project_id"]),
    tokenUrl,
  };
}

function authorizedUser(d: Record<string, unknown>, where: string, env: Env): AuthorizedUserKey {
  const clientId = text(d["client_id"]);
  const clientSecret = text(d["client_secret"]);
  const refreshToken = text(d["refresh_token"]);
  if (!clientId || !clientSecret || !refreshToken) {
    const missing = [
      !clientId && "client_id",
      !clientSecret && "client_secret",
      !refreshToken && "refresh_token",
    ];
    throw new GoogleAuthError(
      `${where} has no ${missing.filter(Boolean).join(", ")}: run gcloud auth application-default login again`,
    );
  }
  const fromFile = text(d["token_uri"]);
  const fromEnv = text(env["HERMES_GOOGLE_TOKEN_URL"]);
  const tokenUrl = fromFile
    ? checkSecureUrl(fromFile, `token_uri in ${where}`)
    : fromEnv
      ? checkSecureUrl(fromEnv, "HERMES_GOOGLE_TOKEN_URL")
      : GOOGLE_TOKEN_URL;
  return {
    type: "authorized_user",
    clientId,
    clientSecret,
    refreshToken,
    projectId: text(d["quota_project_id"]),
    tokenUrl,
  };
}

/** Reads and parses a credential file (synchronously: runtime resolution is synchronous). */
export function readCredentialFileSync(
  location: CredentialLocation,
  env: Env,
  redactor?: Redactor,
): GoogleCredential {
  if (location.origin === "metadata server")
    return { type: "metadata", root: location.path, projectId: undefined };
  let raw: string;
  try {
    raw = readFileSync(location.path, "utf8");
  } catch (error) {
    throw unreadable(location, error);
  }
  return parseCredential(raw, where(location), env, redactor);
}

/** Reads and parses a credential file. */
export async function readCredentialFile(
  location: CredentialLocation,
  env: Env,
  redactor?: Redactor,
): Promise<GoogleCredential> {
  if (location.origin === "metadata server")
    return { type: "metadata", root: location.path, projectId: undefined };
  let raw: string;
  try {
    raw = await readFile(location.path, "utf8");
  } catch (error) {
    throw unreadable(location, error);
  }
  return parseCredential(raw, where(location), env, redactor);
}

function where(location: CredentialLocation): string {
  if (location.origin === "metadata server") return `the metadata server (${location.path})`;
  return location.origin === "gcloud ADC"
    ? `gcloud's credentials (${location.path})`
    : `the key file ${location.path} (${location.origin})`;
}

function unreadable(location: CredentialLocation, error: unknown): GoogleAuthError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new GoogleAuthError(
    `cannot read ${where(location)} (${code}): check the path and that this user may read it`,
  );
}

/** A compact JWS segment. */
function segment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/**
 * The signed assertion a service account trades for an access token (RFC 7523): RS256 over
 * `header.claims`, issued now and valid for an hour, for `scope`, addressed to the token endpoint.
 */
export function signServiceAccountJwt(
  key: Pick<ServiceAccountKey, "clientEmail" | "privateKey" | "privateKeyId" | "tokenUrl">,
  options: { nowMs: number; scope?: string },
): string {
  const iat = Math.floor(options.nowMs / 1000);
  const header = { alg: "RS256", typ: "JWT", ...(key.privateKeyId ? { kid: key.privateKeyId } : {}) };
  const claims = {
    iss: key.clientEmail,
    scope: options.scope ?? CLOUD_PLATFORM_SCOPE,
    aud: key.tokenUrl,
    iat,
    exp: iat + 3600,
  };
  const signingInput = `${segment(header)}.${segment(claims)}`;
  const signature = sign("sha256", Buffer.from(signingInput), key.privateKey).toString("base64url");
  return `${signingInput}.${signature}`;
}

/** An access token and when it stops working (epoch seconds). */
export interface GoogleToken {
  accessToken: string;
  expiresAt: number;
}

export interface TokenDeps {
  fetch: typeof fetch;
  /** Epoch milliseconds. */
  now: () => number;
  /** Bound on one token request (default GOOGLE_TOKEN_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
}

/** Trades the credential for an access token at its token endpoint. Throws `GoogleAuthError`. */
export async function exchangeToken(credential: GoogleCredential, deps: TokenDeps): Promise<GoogleToken> {
  if (credential.type === "metadata") return metadataToken(credential, deps);
  const form: Record<string, string> =
    credential.type === "service_account"
      ? {
          grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
          assertion: signServiceAccountJwt(credential, { nowMs: deps.now() }),
        }
      : {
          grant_type: "refresh_token",
          refresh_token: credential.refreshToken,
          client_id: credential.clientId,
          client_secret: credential.clientSecret,
        };
  const timeoutMs = deps.timeoutMs ?? GOOGLE_TOKEN_TIMEOUT_MS;
  let status: number;
  let raw: string;
  try {
    const response = await deps.fetch(credential.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    raw = await response.text();
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError" || (error as Error).name === "AbortError";
    const bound = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
    const why = timedOut ? `no answer within ${bound}` : causeText(error);
    throw new GoogleAuthError(
      `could not reach the Google token endpoint ${credential.tokenUrl} (${why}): check the network or proxy and try again`,
      { transient: true },
    );
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: reported below with the status.
  }
  const accessToken = text(body["access_token"]);
  if (status >= 200 && status < 300 && accessToken) {
    const expiresIn = Number(body["expires_in"]);
    const lifetime = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600;
    return { accessToken, expiresAt: Math.floor(deps.now() / 1000) + lifetime };
  }
  const reason = [text(body["error"]), text(body["error_description"])].filter(Boolean).join(": ");
  const said =
    reason || (status >= 200 && status < 300 ? "no access_token in the answer" : raw.slice(0, 120));
  const fix =
    credential.type === "service_account"
      ? `the key of ${credential.clientEmail} may be deleted or disabled: create a new JSON key and point VERTEX_CREDENTIALS_PATH at it`
      : "the gcloud login may be revoked or expired: run gcloud auth application-default login";
  throw new GoogleAuthError(
    `the Google token endpoint ${credential.tokenUrl} refused the credentials (HTTP ${status}${said ? `: ${said}` : ""}); ${fix}`,
    { transient: status >= 500 || status === 429 },
  );
}

/** How long the metadata server may take to answer: on Google Cloud it answers in milliseconds. */
export const METADATA_TIMEOUT_MS = 3000;

/** One GET on the metadata server; throws `GoogleAuthError` when it cannot be asked or is not Google's. */
async function metadataGet(
  server: MetadataServer,
  path: string,
  deps: TokenDeps,
): Promise<{ status: number; body: string }> {
  const url = `${server.root}/${path}`;
  const timeoutMs = deps.timeoutMs ?? METADATA_TIMEOUT_MS;
  let response: Response;
  let body: string;
  try {
    response = await deps.fetch(url, {
      headers: { "metadata-flavor": "Google", accept: "application/json, text/plain" },
      signal: AbortSignal.timeout(timeoutMs),
    });
    body = await response.text();
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError" || (error as Error).name === "AbortError";
    const why = timedOut
      ? `no answer within ${timeoutMs >= 1000 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}`
      : causeText(error);
    throw new GoogleAuthError(
      `could not reach the Google Cloud metadata server at ${server.root} (${why}): off Google Cloud, give a ` +
        "service-account key file (hermes setup model) or run gcloud auth application-default login",
      { transient: true },
    );
  }
  // Google's server marks every answer; anything else (a proxy, a captive portal) is not asked again.
  if (response.ok && response.headers.get("metadata-flavor") !== "Google") {
    throw new GoogleAuthError(
      `${server.root} answered without Metadata-Flavor: Google, so it is not Google's metadata server: ` +
        "check GCE_METADATA_HOST, or give a service-account key file (hermes setup model)",
    );
  }
  return { status: response.status, body };
}

/** The attached service account's access token, from the metadata server. */
async function metadataToken(server: MetadataServer, deps: TokenDeps): Promise<GoogleToken> {
  const path = `instance/service-accounts/default/token?scopes=${encodeURIComponent(CLOUD_PLATFORM_SCOPE)}`;
  const { status, body } = await metadataGet(server, path, deps);
  let data: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      data = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: reported below with the status.
  }
  const accessToken = text(data["access_token"]);
  if (status === 200 && accessToken) {
    const expiresIn = Number(data["expires_in"]);
    const lifetime = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600;
    return { accessToken, expiresAt: Math.floor(deps.now() / 1000) + lifetime };
  }
  const fix =
    status === 404
      ? "no service account is attached to this machine: attach one with roles/aiplatform.user, or give a key file (hermes setup model)"
      : "check the service account attached to this machine and its access scopes (cloud-platform)";
  throw new GoogleAuthError(
    `the metadata server at ${server.root} gave no token (HTTP ${status}${status === 200 ? ": no access_token in the answer" : `: ${body.slice(0, 120).trim()}`}); ${fix}`,
    { transient: status >= 500 || status === 429 },
  );
}

/** The project this machine runs in, as its metadata server says. Throws `GoogleAuthError`. */
export async function metadataProject(server: MetadataServer, deps: TokenDeps): Promise<string> {
  const { status, body } = await metadataGet(server, "project/project-id", deps);
  const id = body.trim();
  if (status === 200 && id) return id;
  throw new GoogleAuthError(
    `the metadata server at ${server.root} did not say which project this is (HTTP ${status}): ` +
      "run hermes config set vertex.project_id <project>",
    { transient: status >= 500 },
  );
}

function causeText(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

/**
 * A credential's live access token: fetched once, kept until `GOOGLE_REFRESH_SKEW_S` before it
 * expires, renewed at once when `force` says the last one was refused. Concurrent callers share
 * one request.
 */
export class GoogleTokenSource {
  private token: GoogleToken | undefined;
  private pending: Promise<GoogleToken> | undefined;

  constructor(
    private readonly credential: () => Promise<GoogleCredential>,
    private readonly deps: TokenDeps,
  ) {}

  async current(options: { force?: boolean; stale?: string } = {}): Promise<GoogleToken> {
    const held = this.token;
    const renewedSince =
      options.stale !== undefined && held !== undefined && held.accessToken !== options.stale;
    const fresh = held !== undefined && held.expiresAt - GOOGLE_REFRESH_SKEW_S > this.deps.now() / 1000;
    if (held && fresh && (!options.force || renewedSince)) return held;
    if (!this.pending) {
      this.pending = (async () => {
        try {
          const token = await exchangeToken(await this.credential(), this.deps);
          this.token = token;
          return token;
        } finally {
          this.pending = undefined;
        }
      })();
    }
    return this.pending;
  }
}
