/**
 * Claude on Vertex AI: Anthropic's Messages wire sent to the project's publisher endpoint
 * (`…/publishers/anthropic/models/MODEL:streamRawPredict`, `:rawPredict` unstreamed) with
 * `anthropic_version: vertex-2023-10-16` in the body and no `model` field, signed with the Google
 * token the fake token endpoint issued. The fake LLM answers those paths with Anthropic's SSE
 * events (and refuses a body without Vertex's version, as Vertex does).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resolveModelSwitch } from "../../../src/agent/model-switch.js";
import { createTransport, resolveRuntime } from "../../../src/ai/resolve.js";
import { ProviderError } from "../../../src/ai/types.js";
import { isVertexClaude, vertexModelId } from "../../../src/ai/vertex.js";
import { VERTEX_ANTHROPIC_VERSION, vertexClaudeRequest } from "../../../src/ai/vertex-claude.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import {
  type FakeGoogleToken,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../../support/fake-google-token.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const PROJECT = "claude-project-7";
const PUBLISHER = `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic`;
const MODEL = "claude-sonnet-4-5@20250929";
const sa = serviceAccountFixture("vertex-claude");
const dir = mkdtempSync(join(tmpdir(), "hermes-vertex-claude-"));
let google: FakeGoogleToken;
let llm: FakeLlm;
let files = 0;

beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa });
  llm = await startFakeLlm();
});
afterAll(async () => {
  await google.close();
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

function setupFor(model: string) {
  const key = join(dir, `key-${++files}.json`);
  writeFileSync(key, serviceAccountJson(sa, google.url), { mode: 0o600 });
  const base = defaultConfig();
  const config = {
    ...base,
    model: { ...base.model, provider: "vertex", default: model },
    vertex: { project_id: PROJECT, region: "us-east5" },
  } as typeof base;
  const env = { HOME: dir, VERTEX_CREDENTIALS_PATH: key, HERMES_VERTEX_BASE_URL: new URL(llm.url).origin };
  return { config, env };
}

function runtimeFor(model: string) {
  return resolveRuntime({ flags: {}, ...setupFor(model), home: undefined });
}

const ask = (model = MODEL) => ({ model, messages: [{ role: "user" as const, content: "hi" }] });

describe("the Vertex request shape", () => {
  it("moves /v1/messages to the model's streamRawPredict, drops model, adds Vertex's version", () => {
    const moved = vertexClaudeRequest(
      `https://us-east5-aiplatform.googleapis.com${PUBLISHER}/v1/messages?beta=true`,
      JSON.stringify({ model: MODEL, max_tokens: 10, stream: true, messages: [] }),
    );
    expect(moved?.url).toBe(
      `https://us-east5-aiplatform.googleapis.com${PUBLISHER}/models/${MODEL}:streamRawPredict`,
    );
    const body = JSON.parse(moved?.body ?? "{}") as Record<string, unknown>;
    expect(body).toEqual({
      anthropic_version: VERTEX_ANTHROPIC_VERSION,
      max_tokens: 10,
      stream: true,
      messages: [],
    });
    expect(body).not.toHaveProperty("model");
  });

  it("a request that does not stream goes to :rawPredict", () => {
    const moved = vertexClaudeRequest(`https://h${PUBLISHER}/v1/messages`, JSON.stringify({ model: MODEL }));
    expect(moved?.url).toBe(`https://h${PUBLISHER}/models/${MODEL}:rawPredict`);
    expect(moved?.streaming).toBe(false);
  });

  it("a model id cannot bend the path: slashes and dots stay inside one segment", () => {
    const moved = vertexClaudeRequest(
      `https://h${PUBLISHER}/v1/messages`,
      JSON.stringify({ model: "claude-x/../../../other-project", stream: true }),
    );
    expect(moved?.url).toBe(
      `https://h${PUBLISHER}/models/claude-x%2F..%2F..%2F..%2Fother-project:streamRawPredict`,
    );
    expect(new URL(moved?.url ?? "").pathname.startsWith(PUBLISHER)).toBe(true);
  });

  it("other paths and bodies that are not a message request pass through", () => {
    expect(vertexClaudeRequest(`https://h${PUBLISHER}/v1/models`, "{}")).toBeUndefined();
    expect(vertexClaudeRequest(`https://h${PUBLISHER}/v1/messages`, "not json")).toBeUndefined();
    expect(
      vertexClaudeRequest(`https://h${PUBLISHER}/v1/messages`, JSON.stringify({ stream: true })),
    ).toBeUndefined();
  });

  it("Claude ids (with or without anthropic/) are Claude; Gemini and others are not", () => {
    expect(isVertexClaude("claude-sonnet-4-5@20250929")).toBe(true);
    expect(isVertexClaude("anthropic/claude-haiku-4-5@20251001")).toBe(true);
    expect(isVertexClaude("google/gemini-2.5-flash")).toBe(false);
    expect(isVertexClaude("meta/claude-lookalike")).toBe(false);
    expect(vertexModelId("anthropic/claude-haiku-4-5@20251001")).toBe("claude-haiku-4-5@20251001");
  });
});

describe("Claude on Vertex through the transport", () => {
  it("a Claude id resolves to the Messages wire at the publisher path; Gemini keeps chat completions", () => {
    const claude = runtimeFor(MODEL);
    expect(claude.apiMode).toBe("anthropic_messages");
    expect(claude.baseUrl).toBe(`${new URL(llm.url).origin}${PUBLISHER}`);
    const prefixed = runtimeFor(`anthropic/${MODEL}`);
    expect(prefixed).toMatchObject({ apiMode: "anthropic_messages", model: MODEL });
    const gemini = runtimeFor("gemini-2.5-flash");
    expect(gemini.apiMode).toBe("chat_completions");
    expect(gemini.baseUrl).toBe(
      `${new URL(llm.url).origin}/v1beta1/projects/${PROJECT}/locations/us-east5/endpoints/openapi`,
    );
  });

  it("/model between Gemini and Claude on Vertex resolves the runtime again (the wire changes)", () => {
    const { config, env } = setupFor("gemini-2.5-flash");
    const gemini = resolveRuntime({ flags: {}, config, env, home: undefined });
    const toClaude = resolveModelSwitch(MODEL, { config, env, resolved: gemini, home: dir });
    expect(toClaude.resolved).toMatchObject({
      provider: "vertex",
      model: MODEL,
      apiMode: "anthropic_messages",
    });
    expect(toClaude.resolved?.baseUrl).toContain("/publishers/anthropic");
    const back = resolveModelSwitch("gemini-2.5-pro", {
      config,
      env,
      resolved: toClaude.resolved,
      home: dir,
    });
    expect(back.resolved).toMatchObject({ model: "google/gemini-2.5-pro", apiMode: "chat_completions" });
    // Within one wire the model name alone changes, with Gemini's publisher as at start-up.
    expect(resolveModelSwitch("gemini-2.5-pro", { config, env, resolved: gemini, home: dir })).toEqual({
      model: "google/gemini-2.5-pro",
    });
  });

  it("streams a tool call from streamRawPredict with Google's token as the only credential", async () => {
    const runtime = runtimeFor(MODEL);
    const transport = await createTransport(runtime);
    llm.enqueue(reply().text("let me look").toolCall("terminal", { command: "ls" }));
    const events = await collect(transport.stream(ask()));
    expect(textOf(events, "text_delta").join("")).toBe("let me look");
    const finish = finishOf(events);
    expect(finish?.reason).toBe("tool_calls");
    expect(finish?.message.tool_calls?.[0]?.function).toEqual({
      name: "terminal",
      arguments: '{"command":"ls"}',
    });

    const sent = llm.chatRequests[0];
    expect(sent?.path).toBe(`${PUBLISHER}/models/${MODEL}:streamRawPredict`);
    expect(sent?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    expect(sent?.headers["x-api-key"]).toBeUndefined();
    const body = sent?.body as Record<string, unknown>;
    expect(body["anthropic_version"]).toBe(VERTEX_ANTHROPIC_VERSION);
    expect(body).not.toHaveProperty("model");
    expect(body["stream"]).toBe(true);
    expect(Array.isArray(body["messages"])).toBe(true);
  });

  it("an unstreamed call goes to rawPredict and reads the JSON message", async () => {
    const transport = await createTransport(runtimeFor(MODEL), { stream: false });
    llm.enqueue(reply().text("whole answer"));
    const events = await collect(transport.stream(ask()));
    expect(finishOf(events)?.message.content).toBe("whole answer");
    expect(llm.chatRequests[0]?.path).toBe(`${PUBLISHER}/models/${MODEL}:rawPredict`);
  });

  it("a 401 renews the Google token once and repeats the call with the new one", async () => {
    const transport = await createTransport(runtimeFor(MODEL));
    llm.enqueue(
      httpError(401, { error: { code: 401, message: "Request had invalid authentication credentials." } }),
      reply().text("after renewal"),
    );
    const events = await collect(transport.stream(ask()));
    expect(textOf(events, "text_delta").join("")).toBe("after renewal");
    expect(llm.chatRequests).toHaveLength(2);
    const [first, second] = llm.chatRequests;
    expect(second?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    expect(second?.headers.authorization).not.toBe(first?.headers.authorization);
  });

  it("a Claude model not enabled (404) names the model, Model Garden and the location", async () => {
    const transport = await createTransport(runtimeFor(MODEL));
    llm.enqueue(
      httpError(404, {
        error: { code: 404, message: `Publisher Model ${MODEL} was not found`, status: "NOT_FOUND" },
      }),
    );
    const { error } = await failure(transport.stream(ask()));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Vertex AI found no ${MODEL} in project ${PROJECT} \\(location us-east5\\): .*Model Garden`,
      ),
    );
  });
});
