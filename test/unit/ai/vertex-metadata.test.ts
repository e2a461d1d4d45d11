/**
 * Google credentials from the Compute Engine metadata server, after the credential files as
 * Google's libraries order them. Whether to ask is decided without the network (so a machine off
 * Google Cloud never waits); the server is a loopback fake reached through GCE_METADATA_HOST. Its
 * token is the bearer Vertex gets, its project the one in the URL when nothing else names one.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  exchangeToken,
  findCredentialFile,
  GoogleAuthError,
  onGoogleCloud,
} from "../../../src/ai/oauth/google-auth.js";
import { createTransport, NoProviderError, resolveRuntime } from "../../../src/ai/resolve.js";
import { ProviderError } from "../../../src/ai/types.js";
import { METADATA_PROJECT, vertexFacts } from "../../../src/ai/vertex.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { type FakeGceMetadata, startFakeGceMetadata } from "../../support/fake-gce-metadata.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";
import { collect, failure, textOf } from "../../support/stream-helpers.js";

const PROJECT = "gce-project-9";
const dir = mkdtempSync(join(tmpdir(), "hermes-vertex-gce-"));
let metadata: FakeGceMetadata;
let llm: FakeLlm;

beforeAll(async () => {
  metadata = await startFakeGceMetadata({ projectId: PROJECT });
  llm = await startFakeLlm({ basePath: `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi` });
});
afterAll(async () => {
  await metadata.close();
  await llm.close();
});
beforeEach(() => {
  metadata.mode = "ok";
  metadata.requests.length = 0;
  llm.chatRequests.length = 0;
});

const noFile = () => false;
const bios = (vendor: string | undefined) => (path: string) =>
  path === "/sys/class/dmi/id/bios_vendor" ? vendor : undefined;

function resolveOnGce(env: Record<string, string> = {}, vertex: Record<string, string> = {}) {
  const base = defaultConfig();
  return resolveRuntime({
    flags: {},
    config: { ...base, model: { ...base.model, provider: "vertex" }, vertex } as typeof base,
    env: {
      HOME: join(dir, "empty-home"),
      GCE_METADATA_HOST: metadata.host,
      HERMES_VERTEX_BASE_URL: new URL(llm.url).origin,
      ...env,
    },
    home: undefined,
  });
}

const ask = { model: "google/gemini-2.5-flash", messages: [{ role: "user" as const, content: "hi" }] };

describe("whether to ask the metadata server", () => {
  it("only on Google Cloud, decided without the network", () => {
    expect(onGoogleCloud({}, bios(undefined))).toBe(false);
    expect(onGoogleCloud({}, bios("SeaBIOS"))).toBe(false);
    expect(onGoogleCloud({}, bios("Google\n"))).toBe(true);
    expect(onGoogleCloud({ GCE_METADATA_HOST: "127.0.0.1:9" }, bios(undefined))).toBe(true);
    expect(onGoogleCloud({ K_SERVICE: "my-run-service" }, bios(undefined))).toBe(true);
    // Google's switch: none wins over everything, assume-present over the BIOS.
    expect(onGoogleCloud({ METADATA_SERVER_DETECTION: "none", GCE_METADATA_HOST: "x" }, bios("Google"))).toBe(
      false,
    );
    expect(onGoogleCloud({ METADATA_SERVER_DETECTION: "assume-present" }, bios(undefined))).toBe(true);
    expect(onGoogleCloud({ METADATA_SERVER_DETECTION: "bios-only", K_SERVICE: "s" }, bios(undefined))).toBe(
      false,
    );
  });

  it("after the credential files, in Google's order", () => {
    const adcHome = join(dir, "adc-home");
    mkdirSync(join(adcHome, ".config", "gcloud"), { recursive: true });
    const adc = join(adcHome, ".config", "gcloud", "application_default_credentials.json");
    writeFileSync(adc, "{}");
    const key = join(dir, "key.json");
    writeFileSync(key, "{}");
    const exists = (p: string) => p === adc || p === key;
    const onGce = { GCE_METADATA_HOST: metadata.host };
    expect(
      findCredentialFile(
        { ...onGce, GOOGLE_APPLICATION_CREDENTIALS: key },
        { exists, readSystemFile: bios("Google") },
      ),
    ).toEqual({ path: key, origin: "GOOGLE_APPLICATION_CREDENTIALS" });
    expect(
      findCredentialFile({ ...onGce, HOME: adcHome }, { exists, readSystemFile: bios("Google") }),
    ).toEqual({
      path: adc,
      origin: "gcloud ADC",
    });
    expect(findCredentialFile({ ...onGce, HOME: dir }, { exists: noFile })).toEqual({
      path: `http://${metadata.host}/computeMetadata/v1`,
      origin: "metadata server",
    });
    expect(findCredentialFile({ HOME: dir }, { exists: noFile, readSystemFile: bios("Google") })).toEqual({
      path: "http://metadata.google.internal/computeMetadata/v1",
      origin: "metadata server",
    });
    expect(
      findCredentialFile({ HOME: dir }, { exists: noFile, readSystemFile: bios(undefined) }),
    ).toBeUndefined();
  });

  it("off Google Cloud (detection none), the missing-credentials error stands and nothing is asked", () => {
    expect(() => resolveOnGce({ METADATA_SERVER_DETECTION: "none" })).toThrow(NoProviderError);
    expect(() => resolveOnGce({ METADATA_SERVER_DETECTION: "none" })).toThrow(/no Google credentials found/);
    expect(metadata.requests).toHaveLength(0);
  });
});

describe("the metadata server's token and project", () => {
  it("resolving asks nothing; the project comes from the server at the first call", async () => {
    const runtime = resolveOnGce();
    expect(metadata.requests).toHaveLength(0);
    expect(runtime.vertex).toMatchObject({ kind: "metadata", projectId: undefined });
    expect(runtime.baseUrl).toContain(`/projects/${METADATA_PROJECT}/`);
    expect(Object.fromEntries(vertexFacts(runtime.vertex ?? ({} as never)))).toMatchObject({
      "Google auth": `this machine's service account (metadata server http://${metadata.host}/computeMetadata/v1)`,
      Project: "asked of the metadata server at the first call",
    });

    const transport = await createTransport(runtime);
    llm.enqueue(reply().text("hello from the VM"), reply().text("second"));
    const events = await collect(transport.stream(ask));
    expect(textOf(events, "text_delta").join("")).toBe("hello from the VM");
    const sent = llm.chatRequests[0];
    expect(sent?.path).toBe(
      `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi/chat/completions`,
    );
    expect(sent?.headers.authorization).toBe(`Bearer ${metadata.issued.at(-1)}`);
    const paths = metadata.requests.map((r) => r.path);
    expect(paths).toContain(
      "/computeMetadata/v1/instance/service-accounts/default/token?scopes=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcloud-platform",
    );
    expect(paths).toContain("/computeMetadata/v1/project/project-id");
    expect(metadata.requests.every((r) => r.flavor === "Google")).toBe(true);
    // The token and the project are kept: a second call asks the server nothing.
    const asked = metadata.requests.length;
    await collect(transport.stream(ask));
    expect(metadata.requests).toHaveLength(asked);
  });

  it("a project named in config wins: the server is not asked for one", async () => {
    const runtime = resolveOnGce({}, { project_id: PROJECT });
    expect(runtime.vertex).toMatchObject({ projectId: PROJECT, projectFrom: "vertex.project_id" });
    const transport = await createTransport(runtime);
    llm.enqueue(reply().text("ok"));
    await collect(transport.stream(ask));
    // The token from the earlier test is still fresh (one token per metadata server and process).
    expect(metadata.requests.map((r) => r.path)).not.toContain("/computeMetadata/v1/project/project-id");
    expect(llm.chatRequests[0]?.headers.authorization).toBe(`Bearer ${metadata.issued.at(-1)}`);
  });

  it("a 401 from Vertex renews the token from the server once", async () => {
    const transport = await createTransport(resolveOnGce({}, { project_id: PROJECT }));
    llm.enqueue(httpError(401), reply().text("renewed"));
    const events = await collect(transport.stream(ask));
    expect(textOf(events, "text_delta").join("")).toBe("renewed");
    const [first, second] = llm.chatRequests.map((r) => r.headers.authorization);
    expect(second).toBe(`Bearer ${metadata.issued.at(-1)}`);
    expect(second).not.toBe(first);
  });

  it("a machine with no service account: one line saying to attach one, nothing sent to Vertex", async () => {
    // A machine of its own (a token source is kept per metadata server).
    const bare = await startFakeGceMetadata({ projectId: PROJECT });
    bare.mode = "no_account";
    const transport = await createTransport(
      resolveOnGce({ GCE_METADATA_HOST: bare.host }, { project_id: PROJECT }),
    );
    const { error } = await failure(transport.stream(ask)).finally(() => bare.close());
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toMatch(
      /^vertex: the metadata server at http:\/\/127\.0\.0\.1:\d+\/computeMetadata\/v1 gave no token \(HTTP 404: Not Found\); no service account is attached to this machine/,
    );
    expect((error as ProviderError).status).toBe(401);
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("a project id that could bend the URL is refused before anything reaches Vertex", async () => {
    const odd = await startFakeGceMetadata({ projectId: "../../other/x" });
    const transport = await createTransport(resolveOnGce({ GCE_METADATA_HOST: odd.host }));
    const { error } = await failure(transport.stream(ask)).finally(() => odd.close());
    expect((error as Error).message).toMatch(
      /^vertex: the metadata server at .* named "\.\.\/\.\.\/other\/x" is not a Google Cloud project id .*: run hermes config set vertex\.project_id/,
    );
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("an answer without Metadata-Flavor: Google is not trusted", async () => {
    metadata.mode = "impostor";
    const server = {
      type: "metadata" as const,
      root: `http://${metadata.host}/computeMetadata/v1`,
      projectId: undefined,
    };
    const attempt = exchangeToken(server, { fetch, now: Date.now });
    await expect(attempt).rejects.toThrow(GoogleAuthError);
    await expect(exchangeToken(server, { fetch, now: Date.now })).rejects.toThrow(
      /answered without Metadata-Flavor: Google, so it is not Google's metadata server/,
    );
  });

  it("an interrupt while the metadata server hangs ends the call at once, with nothing sent", async () => {
    const stuck = await startFakeGceMetadata({ projectId: PROJECT });
    stuck.mode = "hang";
    const transport = await createTransport(
      resolveOnGce({ GCE_METADATA_HOST: stuck.host }, { project_id: PROJECT }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("interrupted by the user")), 100);
    const started = Date.now();
    const { error } = await failure(transport.stream(ask, controller.signal)).finally(() => stuck.close());
    expect(Date.now() - started).toBeLessThan(1500);
    expect((error as Error).message).toBe("interrupted by the user");
    expect(stuck.requests).toHaveLength(1);
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("a server that never answers ends within the short bound, saying what to do off Google Cloud", async () => {
    metadata.mode = "hang";
    const server = {
      type: "metadata" as const,
      root: `http://${metadata.host}/computeMetadata/v1`,
      projectId: undefined,
    };
    const started = Date.now();
    const error = await exchangeToken(server, { fetch, now: Date.now, timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(GoogleAuthError);
    expect((error as GoogleAuthError).transient).toBe(true);
    expect((error as Error).message).toMatch(
      /could not reach the Google Cloud metadata server at .* \(no answer within 300 ms\): off Google Cloud, give a service-account key file/,
    );
  });
});
