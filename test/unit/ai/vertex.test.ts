/**
 * The `vertex` provider from configuration to the wire: settings and base URL as upstream Hermes
 * reads them, and the transport against two loopback fakes (Google's token endpoint, named in the
 * key file's `token_uri`, and the fake LLM serving Vertex's OpenAI-compatible path through
 * HERMES_VERTEX_BASE_URL). The bearer each request carries is the token the fake issued; a 401
 * renews it once; a second 401, a 403 and a refused key file end in one line naming the fix.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTransport, NoProviderError, resolveRuntime } from "../../../src/ai/resolve.js";
import { ProviderError } from "../../../src/ai/types.js";
import { projectIdProblem, regionProblem, vertexBaseUrl, vertexModelId } from "../../../src/ai/vertex.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { isSecretEnvName } from "../../../src/config/known-secrets.js";
import { checkKey } from "../../../src/config/validate.js";
import { scrubEnv } from "../../../src/util/env-scrub.js";
import {
  type FakeGoogleToken,
  GCLOUD_USER,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../../support/fake-google-token.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";
import { collect, failure, textOf } from "../../support/stream-helpers.js";

const PROJECT = "my-project-42";
const BASE_PATH = `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi`;
const sa = serviceAccountFixture("vertex-unit");
let google: FakeGoogleToken;
let llm: FakeLlm;
const dir = mkdtempSync(join(tmpdir(), "hermes-vertex-"));
let files = 0;

beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa, user: GCLOUD_USER });
  llm = await startFakeLlm({ basePath: BASE_PATH });
});
afterAll(async () => {
  await google.close();
  await llm.close();
});
beforeEach(() => {
  google.mode = "ok";
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

/** A new key file (a new path, so no token is shared with another test). */
function keyFile(text = serviceAccountJson(sa, google.url)): string {
  const path = join(dir, `key-${++files}.json`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

function config(extra: Record<string, unknown> = {}, model: Record<string, string> = {}): HermesConfig {
  const base = defaultConfig();
  return { ...base, model: { ...base.model, provider: "vertex", ...model }, ...extra };
}

const origin = () => new URL(llm.url).origin;

function resolveVertex(env: Record<string, string>, extra: Record<string, unknown> = {}, model = {}) {
  return resolveRuntime({
    flags: {},
    config: config(extra, model),
    env: { HOME: dir, ...env },
    home: undefined,
  });
}

describe("vertex settings", () => {
  it("project and region as upstream reads them; the base URL names both", () => {
    const key = keyFile();
    const fromFile = resolveVertex({ VERTEX_CREDENTIALS_PATH: key });
    expect(fromFile).toMatchObject({
      provider: "vertex",
      model: "google/gemini-2.5-flash",
      apiMode: "chat_completions",
      apiKey: undefined,
      baseUrl:
        "https://aiplatform.googleapis.com/v1beta1/projects/key-project/locations/global/endpoints/openapi",
    });
    expect(fromFile.vertex).toMatchObject({
      projectId: "key-project",
      projectFrom: "the key file",
      region: "global",
    });
    const fromConfig = resolveVertex(
      { VERTEX_CREDENTIALS_PATH: key },
      { vertex: { project_id: "cfg-project", region: "europe-west4" } },
    );
    expect(fromConfig.baseUrl).toBe(
      "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/cfg-project/locations/europe-west4/endpoints/openapi",
    );
    const fromEnv = resolveVertex(
      { VERTEX_CREDENTIALS_PATH: key, VERTEX_PROJECT_ID: "env-project", VERTEX_REGION: "us" },
      { vertex: { project_id: "cfg-project", region: "europe-west4" } },
    );
    expect(fromEnv.baseUrl).toBe(
      "https://aiplatform.us.rep.googleapis.com/v1beta1/projects/env-project/locations/us/endpoints/openapi",
    );
    // A secret-free runtime: nothing in it may carry the key.
    expect(JSON.stringify(fromEnv)).not.toContain("PRIVATE KEY");
  });

  it("model.base_url set for vertex is used as written (a proxy), only over https or to this machine", () => {
    const key = keyFile();
    const proxied = resolveVertex(
      { VERTEX_CREDENTIALS_PATH: key },
      {},
      { base_url: "https://gw.example/vertex/" },
    );
    expect(proxied.baseUrl).toBe("https://gw.example/vertex");
    expect(proxied.vertex?.projectId).toBe("key-project");
    expect(() =>
      resolveVertex({ VERTEX_CREDENTIALS_PATH: key }, {}, { base_url: "http://gw.example/vertex" }),
    ).toThrow(
      "vertex: model.base_url for vertex is http://gw.example/vertex: credentials go only over https (or http to this machine); fix or remove it",
    );
  });

  it("a bare Gemini id gets its publisher; other ids stay as written", () => {
    expect(vertexModelId("gemini-2.5-pro")).toBe("google/gemini-2.5-pro");
    expect(vertexModelId("google/gemini-2.5-pro")).toBe("google/gemini-2.5-pro");
    expect(vertexModelId("meta/llama-4-maverick-17b-128e-instruct-maas")).toBe(
      "meta/llama-4-maverick-17b-128e-instruct-maas",
    );
    const runtime = resolveVertex(
      { VERTEX_CREDENTIALS_PATH: keyFile() },
      {},
      { default: "gemini-2.0-flash-001" },
    );
    expect(runtime.model).toBe("google/gemini-2.0-flash-001");
  });

  it("project ids and locations that could bend the URL are refused", () => {
    expect(projectIdProblem("my-project-42")).toBeUndefined();
    expect(projectIdProblem("example.com:my-project")).toBeUndefined();
    expect(projectIdProblem("123456789012")).toBeUndefined();
    for (const bad of ["a/../../x", "My-Project", "p?x=1", "ab", "proj#frag"])
      expect(projectIdProblem(bad)).toBeDefined();
    for (const good of ["global", "us", "eu", "us-central1", "europe-west4", "asia-northeast1"])
      expect(regionProblem(good)).toBeUndefined();
    for (const bad of ["us-central1/../x", "evil.example", "", "US CENTRAL"])
      expect(regionProblem(bad)).toBeDefined();
    expect(vertexBaseUrl("p-123456", "us-east5")).toBe(
      "https://us-east5-aiplatform.googleapis.com/v1beta1/projects/p-123456/locations/us-east5/endpoints/openapi",
    );
  });

  const problems: Array<[string, () => unknown, RegExp]> = [
    [
      "no credentials anywhere",
      () => resolveVertex({ HOME: join(dir, "nobody") }, { vertex: { project_id: PROJECT } }),
      /^vertex: no Google credentials found .*: run hermes setup model and give your service-account key file, or run gcloud auth application-default login$/,
    ],
    [
      "a key file that is not JSON",
      () => resolveVertex({ VERTEX_CREDENTIALS_PATH: keyFile("not json at all") }),
      /^vertex: the key file .* \(VERTEX_CREDENTIALS_PATH\) is not JSON \(.*\): download the key again/,
    ],
    [
      "a private key that is not a key",
      () => {
        const json = JSON.parse(serviceAccountJson(sa, google.url));
        json.private_key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
        return resolveVertex({ VERTEX_CREDENTIALS_PATH: keyFile(JSON.stringify(json)) });
      },
      /^vertex: the private_key in the key file .* is not a PEM private key: download a new JSON key for vertex-unit@/,
    ],
    [
      "a key path that cannot be read (a directory)",
      () => resolveVertex({ VERTEX_CREDENTIALS_PATH: dir }),
      /^vertex: cannot read the key file .* \(VERTEX_CREDENTIALS_PATH\) \(EISDIR\): check the path and that this user may read it$/,
    ],
    [
      "GOOGLE_APPLICATION_CREDENTIALS naming a missing file",
      () => resolveVertex({ GOOGLE_APPLICATION_CREDENTIALS: join(dir, "missing.json") }),
      /^vertex: GOOGLE_APPLICATION_CREDENTIALS names .*missing\.json, which does not exist/,
    ],
    [
      "no project id at all (a gcloud login without a quota project)",
      () => {
        const adc = keyFile(
          JSON.stringify({
            type: "authorized_user",
            client_id: GCLOUD_USER.clientId,
            client_secret: GCLOUD_USER.clientSecret,
            refresh_token: GCLOUD_USER.refreshToken,
          }),
        );
        return resolveVertex({ GOOGLE_APPLICATION_CREDENTIALS: adc });
      },
      /^vertex: no Google Cloud project id: run hermes config set vertex\.project_id <project> \(or set VERTEX_PROJECT_ID in \.env\)$/,
    ],
    [
      "a malformed project id",
      () => resolveVertex({ VERTEX_CREDENTIALS_PATH: keyFile(), VERTEX_PROJECT_ID: "../../evil" }),
      /^vertex: VERTEX_PROJECT_ID "\.\.\/\.\.\/evil" is not a Google Cloud project id .*: run hermes config set vertex\.project_id <project>$/,
    ],
    [
      "a bad region",
      () => resolveVertex({ VERTEX_CREDENTIALS_PATH: keyFile() }, { vertex: { region: "moon-base" } }),
      /^vertex: vertex\.region "moon-base" is not a Vertex AI location/,
    ],
    [
      "a base URL over plain http to another host (the bearer is a Google Cloud token)",
      () =>
        resolveVertex({ VERTEX_CREDENTIALS_PATH: keyFile(), HERMES_VERTEX_BASE_URL: "http://proxy.example" }),
      /^vertex: HERMES_VERTEX_BASE_URL is http:\/\/proxy\.example: credentials go only over https/,
    ],
  ];
  it.each(problems)("%s: a configuration error in one line naming the fix", (_name, run, message) => {
    let error: unknown;
    try {
      run();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoProviderError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("\n");
    expect((error as Error).message).not.toContain("BEGIN PRIVATE KEY");
  });
});

describe("the vertex transport", () => {
  const request = { model: "google/gemini-2.5-flash", messages: [{ role: "user" as const, content: "hi" }] };

  async function transportFor(env: Record<string, string> = {}) {
    const runtime = resolveVertex(
      { VERTEX_CREDENTIALS_PATH: keyFile(), HERMES_VERTEX_BASE_URL: origin(), ...env },
      { vertex: { project_id: PROJECT } },
    );
    return { runtime, transport: await createTransport(runtime) };
  }

  it("sends the token Google issued as the bearer, to the project's OpenAI-compatible path", async () => {
    const { runtime, transport } = await transportFor();
    expect(runtime.baseUrl).toBe(`${origin()}${BASE_PATH}`);
    llm.enqueue(reply().text("hello from vertex"));
    const events = await collect(transport.stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("hello from vertex");
    const sent = llm.chatRequests[0];
    expect(sent?.path).toBe(`${BASE_PATH}/chat/completions`);
    expect(sent?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    expect(sent?.body).toMatchObject({ model: "google/gemini-2.5-flash" });
    // The next call reuses the token: one exchange for two calls.
    const exchanges = google.requests.length;
    llm.enqueue(reply().text("again"));
    await collect(transport.stream(request));
    expect(google.requests.length).toBe(exchanges);
    expect(llm.chatRequests[1]?.headers.authorization).toBe(sent?.headers.authorization);
  });

  it("a 401 mid-session renews the token once and repeats the call with the new one", async () => {
    const { transport } = await transportFor();
    llm.enqueue(reply().text("first"));
    await collect(transport.stream(request));
    const before = llm.chatRequests[0]?.headers.authorization;
    llm.enqueue(
      httpError(401, {
        error: {
          code: 401,
          message: "Request had invalid authentication credentials.",
          status: "UNAUTHENTICATED",
        },
      }),
    );
    llm.enqueue(reply().text("after renewal"));
    const events = await collect(transport.stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("after renewal");
    expect(llm.chatRequests).toHaveLength(3);
    expect(llm.chatRequests[1]?.headers.authorization).toBe(before);
    expect(llm.chatRequests[2]?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    expect(llm.chatRequests[2]?.headers.authorization).not.toBe(before);
  });

  it("a second 401 after renewal ends the call with one line naming the project and the role to check", async () => {
    const { transport } = await transportFor();
    llm.enqueue(httpError(401), httpError(401));
    const { error } = await failure(transport.stream(request));
    expect(llm.chatRequests).toHaveLength(2);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(401);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Vertex AI refused a freshly issued token for project ${PROJECT} \\(location global\\): give vertex-unit@.* the role roles/aiplatform\\.user there \\(HTTP 401: `,
      ),
    );
    expect(llm.pending).toBe(0);
  });

  it("a wrong project (403) names vertex.project_id and how to set it", async () => {
    const { transport } = await transportFor();
    llm.enqueue(
      httpError(403, {
        error: {
          code: 403,
          message: "Permission denied on resource project nope.",
          status: "PERMISSION_DENIED",
        },
      }),
    );
    const { error } = await failure(transport.stream(request));
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Vertex AI denied access to project ${PROJECT} \\(location global\\): check vertex\\.project_id, that the Vertex AI API is enabled there`,
      ),
    );
    expect((error as Error).message).toContain("Permission denied on resource project nope.");
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("a model Vertex does not serve (404) names the model, project and location", async () => {
    const { transport } = await transportFor();
    llm.enqueue(
      httpError(404, {
        error: { code: 404, message: "Publisher Model was not found.", status: "NOT_FOUND" },
      }),
    );
    const { error } = await failure(transport.stream({ ...request, model: "google/gemini-9-ultra" }));
    expect((error as ProviderError).status).toBe(404);
    expect((error as Error).message).toBe(
      `Vertex AI found no google/gemini-9-ultra in project ${PROJECT} (location global): check the model id (e.g. google/gemini-2.5-flash) and vertex.region (HTTP 404: Publisher Model was not found.)`,
    );
  });

  it("a key Google refuses never reaches Vertex: a 401 saying which key and what to do", async () => {
    const { transport } = await transportFor();
    google.mode = "refuse";
    const { error } = await failure(transport.stream(request));
    expect(llm.chatRequests).toHaveLength(0);
    expect((error as ProviderError).status).toBe(401);
    expect((error as Error).message).toMatch(
      /^vertex: the Google token endpoint .* refused the credentials \(HTTP 400: invalid_grant: Invalid JWT Signature\.\); the key of vertex-unit@.* may be deleted or disabled: create a new JSON key/,
    );
  });

  it("an interrupt while the token endpoint hangs ends the call at once, with nothing sent", async () => {
    const { transport } = await transportFor();
    google.mode = "hang";
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("interrupted by the user")), 100);
    const { error } = await failure(transport.stream(request, controller.signal));
    expect((error as Error).message).toBe("interrupted by the user");
    expect(Date.now() - started).toBeLessThan(3000);
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("a gcloud login (authorized_user) through the documented token URL override", async () => {
    const adc = keyFile(
      JSON.stringify({
        type: "authorized_user",
        client_id: GCLOUD_USER.clientId,
        client_secret: GCLOUD_USER.clientSecret,
        refresh_token: GCLOUD_USER.refreshToken,
        quota_project_id: PROJECT,
      }),
    );
    const runtime = resolveRuntime({
      flags: {},
      config: config(),
      env: {
        HOME: dir,
        GOOGLE_APPLICATION_CREDENTIALS: adc,
        HERMES_GOOGLE_TOKEN_URL: google.url,
        HERMES_VERTEX_BASE_URL: origin(),
      },
      home: undefined,
    });
    expect(runtime.vertex).toMatchObject({
      kind: "authorized_user",
      projectId: PROJECT,
      projectFrom: "gcloud's quota project",
    });
    llm.enqueue(reply().text("user ok"));
    const transport = await createTransport(runtime);
    await collect(transport.stream(request));
    expect(google.requests.at(-1)?.grant).toBe("refresh_token");
    expect(llm.chatRequests[0]?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
  });
});

describe("around the provider", () => {
  it("config checks know vertex.project_id and vertex.region, and catch a misspelling", () => {
    expect(checkKey("vertex.project_id")).toBeUndefined();
    expect(checkKey("vertex.region")).toBeUndefined();
    expect(checkKey("vertex.projectid")?.message).toBe(
      'unknown key "vertex.projectid" (did you mean "vertex.project_id"?)',
    );
  });

  it("the key file's path and the token URL are not secrets to redact (errors name them); the key inside is", () => {
    expect(isSecretEnvName("GOOGLE_APPLICATION_CREDENTIALS")).toBe(false);
    expect(isSecretEnvName("VERTEX_CREDENTIALS_PATH")).toBe(false);
    expect(isSecretEnvName("HERMES_GOOGLE_TOKEN_URL")).toBe(false);
    expect(isSecretEnvName("GOOGLE_API_KEY")).toBe(true);
  });

  it("helper processes do not inherit the key file's location", () => {
    const env = scrubEnv({
      GOOGLE_APPLICATION_CREDENTIALS: "/keys/sa.json",
      VERTEX_CREDENTIALS_PATH: "/keys/sa.json",
      VERTEX_REGION: "global",
      PATH: "/usr/bin",
    });
    expect(env).toEqual({ VERTEX_REGION: "global", PATH: "/usr/bin" });
  });
});
