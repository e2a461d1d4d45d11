/**
 * Google credentials without Google's SDK: the service account's RS256 assertion (verified with
 * the public key, as Google verifies it), where Application Default Credentials are looked for,
 * the token exchange against a loopback token endpoint, and the token's caching and renewal.
 * Broken inputs (not JSON, a private key that is not a key, a token endpoint that hangs or
 * refuses) each give one line naming the fix.
 */
import { generateKeyPairSync, verify } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkSecureUrl,
  exchangeToken,
  findCredentialFile,
  GOOGLE_TOKEN_URL,
  GoogleAuthError,
  GoogleTokenSource,
  parseCredential,
  type ServiceAccountKey,
  signServiceAccountJwt,
} from "../../../../src/ai/oauth/google-auth.js";
import { Redactor } from "../../../../src/util/redact.js";
import {
  type FakeGoogleToken,
  GCLOUD_USER,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../../../support/fake-google-token.js";
import { freePort } from "../../../support/free-port.js";

const sa = serviceAccountFixture();
let google: FakeGoogleToken;

beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa, user: GCLOUD_USER });
});
afterAll(async () => {
  await google.close();
});

function saKey(tokenUri = google.url): ServiceAccountKey {
  const parsed = parseCredential(serviceAccountJson(sa, tokenUri), "key.json", {});
  if (parsed.type !== "service_account") throw new Error("expected a service account");
  return parsed;
}

function userJson(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: "authorized_user",
    client_id: GCLOUD_USER.clientId,
    client_secret: GCLOUD_USER.clientSecret,
    refresh_token: GCLOUD_USER.refreshToken,
    quota_project_id: "quota-project-1",
    ...extra,
  });
}

const deps = (now = () => Date.now(), timeoutMs?: number) => ({
  fetch: globalThis.fetch,
  now,
  ...(timeoutMs ? { timeoutMs } : {}),
});

describe("the service account's signed assertion", () => {
  it("is an RS256 JWT that verifies with the service account's public key", () => {
    const jwt = signServiceAccountJwt(saKey(), { nowMs: 1_700_000_000_000 });
    const [header, claims, signature] = jwt.split(".");
    const ok = verify(
      "sha256",
      Buffer.from(`${header}.${claims}`),
      sa.publicKey,
      Buffer.from(signature ?? "", "base64url"),
    );
    expect(ok).toBe(true);
    expect(JSON.parse(Buffer.from(header ?? "", "base64url").toString())).toEqual({
      alg: "RS256",
      typ: "JWT",
      kid: sa.privateKeyId,
    });
    expect(JSON.parse(Buffer.from(claims ?? "", "base64url").toString())).toEqual({
      iss: sa.clientEmail,
      scope: "https://www.googleapis.com/auth/cloud-platform",
      aud: google.url,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  it("does not verify with another key: the signature is over the key actually held", () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;
    const [header, claims, signature] = signServiceAccountJwt(saKey(), { nowMs: Date.now() }).split(".");
    expect(
      verify("sha256", Buffer.from(`${header}.${claims}`), other, Buffer.from(signature ?? "", "base64url")),
    ).toBe(false);
  });
});

describe("reading a credential file", () => {
  it("a file that is not JSON: one line naming the file and how to get a good one", () => {
    const fail = () => parseCredential("-----BEGIN PRIVATE KEY-----\nabc", "the key file /k.json", {});
    expect(fail).toThrow(GoogleAuthError);
    expect(fail).toThrow(/^the key file \/k\.json is not JSON \(.*\): download the key again/);
    expect(() => fail()).not.toThrow(/\n/);
  });

  it("a private key that is not a key, and one that is not RSA, are refused before any request", () => {
    const garbage = JSON.parse(serviceAccountJson(sa, google.url));
    garbage.private_key = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n";
    expect(() => parseCredential(JSON.stringify(garbage), "k.json", {})).toThrow(
      `the private_key in k.json is not a PEM private key: download a new JSON key for ${sa.clientEmail}`,
    );
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    garbage.private_key = ec.export({ type: "pkcs8", format: "pem" }).toString();
    expect(() => parseCredential(JSON.stringify(garbage), "k.json", {})).toThrow(
      /is ec key, Google signs with RSA/,
    );
  });

  it("other credential types and missing fields are named, never guessed", () => {
    expect(() => parseCredential('{"type":"external_account"}', "f", {})).toThrow(
      /has type "external_account"; Hermes reads "service_account" keys/,
    );
    expect(() => parseCredential("[1,2]", "f", {})).toThrow("f is not a JSON object");
    expect(() => parseCredential('{"type":"service_account"}', "f", {})).toThrow(
      "f has no client_email or private_key",
    );
    expect(() => parseCredential('{"type":"authorized_user","client_id":"x"}', "f", {})).toThrow(
      "f has no client_secret, refresh_token: run gcloud auth application-default login again",
    );
  });

  it("registers the private key and the refresh token with the redactor as soon as it reads them", () => {
    const redactor = new Redactor();
    parseCredential(serviceAccountJson(sa, google.url), "k", {}, redactor);
    parseCredential(userJson(), "u", {}, redactor);
    const leak = `key ${sa.privateKeyPem} token ${GCLOUD_USER.refreshToken} secret ${GCLOUD_USER.clientSecret}`;
    const shown = redactor.redact(leak);
    expect(shown).not.toContain(GCLOUD_USER.refreshToken);
    expect(shown).not.toContain(GCLOUD_USER.clientSecret);
    expect(shown).not.toContain(sa.privateKeyPem.split("\n")[1]);
  });

  it("a token endpoint that is plain http to another host is refused (a signed assertion would travel in clear)", () => {
    expect(() => parseCredential(serviceAccountJson(sa, "http://evil.example/token"), "k", {})).toThrow(
      "token_uri in k is http://evil.example/token: credentials go only over https (or http to this machine); fix or remove it",
    );
    expect(checkSecureUrl("http://127.0.0.1:9/t", "x")).toBe("http://127.0.0.1:9/t");
    expect(checkSecureUrl("http://[::1]:9/t", "x")).toBe("http://[::1]:9/t");
    expect(() => checkSecureUrl("http://127.0.0.1.evil.example/t", "x")).toThrow(GoogleAuthError);
  });

  it("a gcloud login's token endpoint: the file's token_uri, else HERMES_GOOGLE_TOKEN_URL, else Google's", () => {
    const url = (json: string, env = {}) => {
      const c = parseCredential(json, "adc", env);
      return c.type === "metadata" ? c.root : c.tokenUrl;
    };
    expect(url(userJson())).toBe(GOOGLE_TOKEN_URL);
    expect(url(userJson(), { HERMES_GOOGLE_TOKEN_URL: google.url })).toBe(google.url);
    expect(
      url(userJson({ token_uri: "https://oauth2.example/token" }), { HERMES_GOOGLE_TOKEN_URL: google.url }),
    ).toBe("https://oauth2.example/token");
    expect(() => url(userJson(), { HERMES_GOOGLE_TOKEN_URL: "http://proxy.example/t" })).toThrow(
      /HERMES_GOOGLE_TOKEN_URL is http:\/\/proxy\.example\/t/,
    );
  });
});

describe("Application Default Credentials discovery", () => {
  const root = mkdtempSync(join(tmpdir(), "hermes-adc-"));
  const file = (name: string) => {
    const path = join(root, name);
    writeFileSync(path, "{}");
    return path;
  };
  const sdkDir = join(root, "sdk");
  mkdirSync(sdkDir);
  const homeAdc = join(root, "home", ".config", "gcloud");
  mkdirSync(homeAdc, { recursive: true });
  writeFileSync(join(homeAdc, "application_default_credentials.json"), "{}");
  writeFileSync(join(sdkDir, "application_default_credentials.json"), "{}");
  const exists = (p: string) => existsSync(p);

  it("VERTEX_CREDENTIALS_PATH, then GOOGLE_APPLICATION_CREDENTIALS, then CLOUDSDK_CONFIG, then ~/.config/gcloud", () => {
    const vertex = file("vertex.json");
    const google = file("gac.json");
    const home = join(root, "home");
    const find = (env: Record<string, string>) =>
      findCredentialFile(env, { homedir: "/nonexistent", exists });
    expect(
      find({ VERTEX_CREDENTIALS_PATH: vertex, GOOGLE_APPLICATION_CREDENTIALS: google, HOME: home }),
    ).toEqual({ path: vertex, origin: "VERTEX_CREDENTIALS_PATH" });
    expect(find({ GOOGLE_APPLICATION_CREDENTIALS: google, HOME: home })).toEqual({
      path: google,
      origin: "GOOGLE_APPLICATION_CREDENTIALS",
    });
    expect(find({ CLOUDSDK_CONFIG: sdkDir, HOME: home })).toEqual({
      path: join(sdkDir, "application_default_credentials.json"),
      origin: "gcloud ADC",
    });
    expect(find({ HOME: home })).toEqual({
      path: join(homeAdc, "application_default_credentials.json"),
      origin: "gcloud ADC",
    });
    expect(find({ HOME: join(root, "nobody") })).toBeUndefined();
  });

  it("a variable naming a missing file is an error, not a silent fall-through to another identity", () => {
    expect(() =>
      findCredentialFile(
        { GOOGLE_APPLICATION_CREDENTIALS: join(root, "gone.json"), HOME: join(root, "home") },
        { exists },
      ),
    ).toThrow(/^GOOGLE_APPLICATION_CREDENTIALS names .*gone\.json, which does not exist: point it at/);
  });
});

describe("the token exchange", () => {
  it("a service account's assertion is traded for a token that expires when Google says", async () => {
    google.mode = "ok";
    const token = await exchangeToken(
      saKey(),
      deps(() => 1_000_000),
    );
    expect(token.accessToken).toBe(google.issued.at(-1));
    expect(token.expiresAt).toBe(1000 + 3599);
    const last = google.requests.at(-1);
    expect(last?.grant).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    expect(last?.claims?.["iss"]).toBe(sa.clientEmail);
    expect(JSON.stringify(google.requests)).not.toContain(sa.privateKeyPem.split("\n")[1]);
  });

  it("a gcloud login's refresh token is traded at the overridden endpoint", async () => {
    google.mode = "ok";
    const user = parseCredential(userJson({ token_uri: google.url }), "adc", {});
    const token = await exchangeToken(user, deps());
    expect(token.accessToken).toBe(google.issued.at(-1));
    expect(google.requests.at(-1)?.form).toMatchObject({
      grant_type: "refresh_token",
      refresh_token: GCLOUD_USER.refreshToken,
      client_id: GCLOUD_USER.clientId,
    });
  });

  it("a refused key: one line with Google's reason and the fix, not retried as transient", async () => {
    google.mode = "refuse";
    const error = await exchangeToken(saKey(), deps()).catch((e: unknown) => e);
    google.mode = "ok";
    expect(error).toBeInstanceOf(GoogleAuthError);
    expect((error as GoogleAuthError).transient).toBe(false);
    expect((error as Error).message).toBe(
      `the Google token endpoint ${google.url} refused the credentials (HTTP 400: invalid_grant: Invalid JWT Signature.); ` +
        `the key of ${sa.clientEmail} may be deleted or disabled: create a new JSON key and point VERTEX_CREDENTIALS_PATH at it`,
    );
  });

  it("a token endpoint that hangs is given up on within the bound, as a transient failure", async () => {
    google.mode = "hang";
    const started = Date.now();
    const error = await exchangeToken(saKey(), deps(Date.now, 300)).catch((e: unknown) => e);
    google.mode = "ok";
    expect(Date.now() - started).toBeLessThan(5000);
    expect((error as GoogleAuthError).transient).toBe(true);
    expect((error as Error).message).toMatch(
      /could not reach the Google token endpoint .* \(no answer within 300 ms\)/,
    );
  });

  it("a token endpoint that is down (5xx) is transient; an unreachable one names the cause", async () => {
    google.mode = "server_error";
    const busy = await exchangeToken(saKey(), deps()).catch((e: unknown) => e);
    google.mode = "ok";
    expect((busy as GoogleAuthError).transient).toBe(true);
    const port = await freePort();
    const closed = await exchangeToken(saKey(`http://127.0.0.1:${port}/token`), deps()).catch(
      (e: unknown) => e,
    );
    expect((closed as Error).message).toContain(
      `could not reach the Google token endpoint http://127.0.0.1:${port}/token (ECONNREFUSED)`,
    );
  });
});

describe("the token source", () => {
  it("keeps a token until five minutes before it expires, then renews it", async () => {
    google.mode = "ok";
    let now = 2_000_000_000;
    const source = new GoogleTokenSource(
      async () => saKey(),
      deps(() => now),
    );
    const before = google.issued.length;
    const first = await source.current();
    now += 3000 * 1000; // 50 minutes: still more than 5 left
    expect((await source.current()).accessToken).toBe(first.accessToken);
    now += 5 * 60 * 1000; // 55 minutes: inside the 5-minute margin
    const second = await source.current();
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(google.issued.length - before).toBe(2);
  });

  it("forced after a 401 it renews once; a stale bearer already replaced is not renewed again", async () => {
    google.mode = "ok";
    const source = new GoogleTokenSource(async () => saKey(), deps());
    const first = await source.current();
    const renewed = await source.current({ force: true, stale: first.accessToken });
    expect(renewed.accessToken).not.toBe(first.accessToken);
    const again = await source.current({ force: true, stale: first.accessToken });
    expect(again.accessToken).toBe(renewed.accessToken);
  });

  it("concurrent callers share one request", async () => {
    google.mode = "ok";
    const source = new GoogleTokenSource(async () => saKey(), deps());
    const before = google.requests.length;
    const tokens = await Promise.all([source.current(), source.current(), source.current()]);
    expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
    expect(google.requests.length - before).toBe(1);
  });
});
