import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../../src/agent/chat-session.js";
import { ApiServerConfigError, startApiServer } from "../../../../src/gateway/api-server/index.js";
import { openSqliteStore, sessionStorePath } from "../../../../src/state/sqlite-store.js";
import { fakeLlmConfig, harnessPerTest, sentMessages } from "../../../support/api-server-harness.js";
import { disconnectMidStream, hang, reply, startFakeLlm } from "../../../support/fake-llm.js";

const harnesses = harnessPerTest();
const setup = harnesses.start;

describe("API server: chat completions with the official openai client", () => {
  it("answers a non-streaming request, with the client's history and system prompt layered on Hermes's", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("Arr, the answer be 42.").usage({ prompt: 30, completion: 7 }));
    const { data, response } = await h.client.chat.completions
      .create({
        model: "hermes-agent",
        messages: [
          { role: "system", content: "Answer like a pirate." },
          { role: "user", content: "What is six times seven?" },
          { role: "assistant", content: "Let me think." },
          { role: "user", content: "Well?" },
        ],
      })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("hermes-agent");
    expect(data.choices[0]?.message.content).toBe("Arr, the answer be 42.");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 });

    const sent = sentMessages(h.llm.chatRequests[0]?.body);
    expect(sent[0]?.role).toBe("system");
    // Hermes's own prompt comes first; the client's system prompt is layered after it.
    expect(sent[0]?.content).toContain("Hermes");
    expect(sent[0]?.content.endsWith("Answer like a pirate.")).toBe(true);
    expect(sent.slice(1)).toEqual([
      { role: "user", content: "What is six times seven?" },
      { role: "assistant", content: "Let me think." },
      { role: "user", content: "Well?" },
    ]);

    const sessionId = response.headers.get("x-hermes-session-id");
    expect(sessionId).toBeTruthy();
    const store = openSqliteStore(sessionStorePath(h.home));
    try {
      const row = store.getSession(sessionId ?? "");
      expect(row?.source).toBe("api_server");
      // The client's system prompt is ephemeral: never saved as the session's prompt.
      expect(row?.systemPrompt).not.toContain("Answer like a pirate.");
      expect(store.conversation(sessionId ?? "").map((m) => m.content)).toEqual([
        "What is six times seven?",
        "Let me think.",
        "Well?",
        "Arr, the answer be 42.",
      ]);
    } finally {
      store.close();
    }
  });

  it("streams the answer as chat.completion.chunk deltas ending with finish_reason and usage", async () => {
    const h = await setup();
    h.llm.enqueue(
      reply().text("Streaming works over several chunks of text.").usage({ prompt: 5, completion: 9 }),
    );
    const stream = await h.client.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: "stream please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const finishes: (string | null)[] = [];
    let usage: unknown;
    let deltas = 0;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) deltas++;
      text += choice.delta.content ?? "";
      finishes.push(choice.finish_reason);
    }
    expect(text).toBe("Streaming works over several chunks of text.");
    expect(deltas).toBeGreaterThan(1);
    expect(finishes.at(-1)).toBe("stop");
    expect(finishes.filter((f) => f !== null)).toHaveLength(1);
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 9 });
  });

  it("continues a stored session named by X-Hermes-Session-Id", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("Noted: your cat is Miso."), reply().text("Your cat is Miso."));
    const first = await h.client.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "My cat is called Miso." }] })
      .withResponse();
    const sessionId = first.response.headers.get("x-hermes-session-id") ?? "";
    const second = await h.client.chat.completions
      .create(
        { model: "hermes-agent", messages: [{ role: "user", content: "What is my cat called?" }] },
        { headers: { "X-Hermes-Session-Id": sessionId } },
      )
      .withResponse();
    expect(second.data.choices[0]?.message.content).toBe("Your cat is Miso.");
    expect(second.response.headers.get("x-hermes-session-id")).toBe(sessionId);
    expect(sentMessages(h.llm.chatRequests[1]?.body).slice(1)).toEqual([
      { role: "user", content: "My cat is called Miso." },
      { role: "assistant", content: "Noted: your cat is Miso." },
      { role: "user", content: "What is my cat called?" },
    ]);
    // A session id that does not exist is a clear 404, and the model is never called.
    const missing = await h.call("/v1/chat/completions", {
      method: "POST",
      headers: { "x-hermes-session-id": "20200101_000000_abcdef" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hello?" }] }),
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain(
      "20200101_000000_abcdef",
    );
    expect(h.llm.chatRequests).toHaveLength(2);
  });

  it("lists the one model and answers /health without a key", async () => {
    const h = await setup({ modelName: "my-hermes" });
    const models = await h.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["my-hermes"]);
    const health = await fetch(`${h.server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    expect(health.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("API server: Responses API", () => {
  it("creates a response and continues it with previous_response_id", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("The capital of France is Paris."), reply().text("About 2.1 million people."));
    const first = await h.client.responses.create({
      model: "hermes-agent",
      instructions: "Be brief.",
      input: "What is the capital of France?",
    });
    expect(first.id).toMatch(/^resp_/);
    expect(first.status).toBe("completed");
    expect(first.output_text).toBe("The capital of France is Paris.");
    const firstSent = sentMessages(h.llm.chatRequests[0]?.body);
    expect(firstSent[0]?.content.endsWith("Be brief.")).toBe(true);

    const second = await h.client.responses.create({
      model: "hermes-agent",
      input: [{ role: "user", content: "How many people live there?" }],
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe("About 2.1 million people.");
    expect(second.previous_response_id).toBe(first.id);
    expect(sentMessages(h.llm.chatRequests[1]?.body).slice(1)).toEqual([
      { role: "user", content: "What is the capital of France?" },
      { role: "assistant", content: "The capital of France is Paris." },
      { role: "user", content: "How many people live there?" },
    ]);
    const fetched = await h.client.responses.retrieve(second.id);
    expect(fetched.id).toBe(second.id);

    await expect(
      h.client.responses.create({
        model: "hermes-agent",
        input: "again",
        previous_response_id: "resp_unknown",
      }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it("streams output_text deltas and a completed response", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("A streamed response, in pieces."));
    const stream = await h.client.responses.create({
      model: "hermes-agent",
      input: "stream it",
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(text).toBe("A streamed response, in pieces.");
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.output_text.done");
    const item = completed?.output[0];
    expect(
      item?.type === "message" && item.content[0]?.type === "output_text" ? item.content[0].text : "",
    ).toBe("A streamed response, in pieces.");
  });
});

describe("API server: a model stream that drops after text went out", () => {
  /** Retries at once, so a dropped stream is retried within the test. */
  const retrying = () =>
    setup({
      createSession: (options) =>
        ChatSession.open({ ...options, retry: { maxRetries: 1, baseMs: 1, capMs: 5 } }),
    });

  it("chat completions: the stream ends with an error the client raises, never a retry glued to the fragment", async () => {
    const h = await retrying();
    h.llm.enqueue(
      disconnectMidStream(3, reply().text("This first attempt breaks off somewhere in the middle.")),
      reply().text("Second attempt, complete."),
    );
    const stream = await h.client.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: "go" }],
      stream: true,
    });
    let text = "";
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(text).toMatch(/^This first/);
    expect(text).not.toContain("Second attempt");
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toContain("broke off");
  });

  it("responses: the completed response carries the retried answer without the fragment", async () => {
    const h = await retrying();
    h.llm.enqueue(
      disconnectMidStream(3, reply().text("This first attempt breaks off somewhere in the middle.")),
      reply().text("Second attempt, complete."),
    );
    const stream = await h.client.responses.create({ model: "hermes-agent", input: "go", stream: true });
    let done = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.output_text.done") done = event.text;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(done).toBe("Second attempt, complete.");
    const item = completed?.output[0];
    expect(
      item?.type === "message" && item.content[0]?.type === "output_text" ? item.content[0].text : "",
    ).toBe("Second attempt, complete.");
  });
});

describe("API server: auth and bad input", () => {
  it("answers 401 to a wrong or missing key, and the model is never called", async () => {
    const h = await setup();
    const wrong = new OpenAI({ baseURL: h.base, apiKey: "not-the-key", maxRetries: 0 });
    const error = await wrong.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "invalid_api_key", type: "invalid_request_error" });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });

    const missing = await fetch(`${h.base}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(missing.status).toBe(401);
    const body = (await missing.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe("invalid_api_key");
    expect(body.error.message).toContain("API_SERVER_KEY");
    expect(h.llm.chatRequests).toHaveLength(0);
  });

  it("answers broken JSON, bad messages, unknown routes and wrong methods with clear errors, and keeps serving", async () => {
    const h = await setup();
    const broken = await h.call("/v1/chat/completions", { method: "POST", body: '{"messages": [' });
    expect(broken.status).toBe(400);
    const brokenBody = (await broken.json()) as { error: { message: string; type: string } };
    expect(brokenBody.error.message).toContain("not valid JSON");
    expect(brokenBody.error.type).toBe("invalid_request_error");

    const cases: [string, unknown, string][] = [
      ["/v1/chat/completions", [], "JSON object"],
      ["/v1/chat/completions", { messages: [] }, "messages"],
      [
        "/v1/chat/completions",
        {
          messages: [
            { role: "user", content: "a" },
            { role: "assistant", content: "b" },
          ],
        },
        "last message",
      ],
      ["/v1/chat/completions", { messages: [{ role: "wizard", content: "a" }] }, "wizard"],
      ["/v1/chat/completions", { messages: [{ role: "user", content: [{ type: "audio" }] }] }, "audio"],
      ["/v1/responses", { input: 42 }, "input"],
    ];
    for (const [path, body, needle] of cases) {
      const response = await h.call(path, { method: "POST", body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(needle);
    }

    const unknown = await h.call("/v1/embeddings", { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    const wrongMethod = await h.call("/v1/chat/completions", { method: "GET" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");

    // Still serving after all of that.
    h.llm.enqueue(reply().text("still here"));
    const ok = await h.client.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "ping" }],
    });
    expect(ok.choices[0]?.message.content).toBe("still here");
  });

  it("refuses a body over the limit with 413", async () => {
    const h = await setup({ maxBodyBytes: 64 * 1024 });
    const big = JSON.stringify({ messages: [{ role: "user", content: "x".repeat(100 * 1024) }] });
    const response = await h.call("/v1/chat/completions", { method: "POST", body: big });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "at most 65536 bytes",
    );
    expect(h.llm.chatRequests).toHaveLength(0);
  });

  it("reports a failed model call as a 502 the client does not retry", async () => {
    const h = await setup();
    const error = await h.client.chat.completions
      .create({ model: "x", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    // Nothing scripted: the fake LLM answers 500, the agent's turn fails.
    expect(error).toMatchObject({ status: 502, code: "agent_error" });
  });

  it("refuses to start without a key", async () => {
    const llm = await startFakeLlm();
    try {
      const start = startApiServer({ home: "/nonexistent", config: fakeLlmConfig(llm), env: {}, port: 0 });
      await expect(start).rejects.toBeInstanceOf(ApiServerConfigError);
      await expect(start).rejects.toThrow(/API_SERVER_KEY/);
    } finally {
      await llm.close();
    }
  });

  it("moves an unreadable state.db aside, says so, and records to a fresh one", async () => {
    const llm = await startFakeLlm();
    const home = mkdtempSync(join(tmpdir(), "hermes-api-corrupt-"));
    writeFileSync(join(home, "state.db"), "this is not a database at all, just some text");
    const warnings: string[] = [];
    const server = await startApiServer({
      home,
      config: fakeLlmConfig(llm),
      env: {},
      port: 0,
      key: "k-0123456789abcdef",
      onWarning: (m) => warnings.push(m),
    });
    try {
      llm.enqueue(reply().text("recorded"));
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "k-0123456789abcdef", maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: "x",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(answer.choices[0]?.message.content).toBe("recorded");
    } finally {
      await server.close();
      await llm.close();
    }
    const moved = readdirSync(home).filter((f) => f.startsWith("state.db.corrupt-"));
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(home, moved[0] ?? ""), "utf8")).toContain("not a database");
    expect(warnings.join("\n")).toContain("hermes sessions repair --from");
    const store = openSqliteStore(sessionStorePath(home));
    try {
      expect(store.listSessions({}).length).toBe(1);
    } finally {
      store.close();
    }
  });

  it("sends CORS headers only to configured origins", async () => {
    const h = await setup({ corsOrigins: ["http://localhost:3000"] });
    const allowed = await h.call("/v1/models", { headers: { origin: "http://localhost:3000" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    const other = await h.call("/v1/models", { headers: { origin: "http://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${h.base}/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
  });
});

describe("API server: concurrency and disconnects", () => {
  it("queues past the run limit, answers 429 past the queue, and frees the slot when a client leaves", async () => {
    const h = await setup({ maxConcurrentRuns: 1, maxQueuedRuns: 1 });
    h.llm.enqueue(hang(), reply().text("served after the slot freed"));
    const leaving = new AbortController();
    const first = h.client.chat.completions
      .create({ model: "x", messages: [{ role: "user", content: "slow one" }] }, { signal: leaving.signal })
      .catch((e: unknown) => e);
    await h.llm.waitForRequests(1);
    const ask = () =>
      h.call("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ messages: [{ role: "user", content: "next" }] }),
      });
    // One waits in the queue, the other is turned away (which is which depends on arrival).
    const [b, c] = [ask(), ask()];
    const rejected = await Promise.race([b, c]);
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get("retry-after")).toBe("1");
    expect(((await rejected.json()) as { error: { type: string } }).error.type).toBe("rate_limit_error");

    leaving.abort();
    expect(await first).toBeInstanceOf(OpenAI.APIUserAbortError);
    const served = (await b) === rejected ? await c : await b;
    expect(served.status).toBe(200);
    const body = (await served.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("served after the slot freed");
  });

  it("interrupts the agent's turn when a streaming client disconnects", async () => {
    const h = await setup({ maxConcurrentRuns: 1 });
    h.llm.enqueue(hang(), reply().text("next answer"));
    const controller = new AbortController();
    const stream = await h.client.chat.completions.create(
      { model: "x", messages: [{ role: "user", content: "never mind" }], stream: true },
      { signal: controller.signal },
    );
    await h.llm.waitForRequests(1);
    controller.abort();
    // The official client ends (or rejects) the iteration once aborted; either way it is over.
    await (async () => {
      for await (const _ of stream) {
        // nothing more arrives
      }
    })().catch(() => undefined);
    // With one run slot, this only completes once the abandoned turn was interrupted.
    const next = await h.client.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(next.choices[0]?.message.content).toBe("next answer");
  });

  it("drains a running request on close", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("finished before shutdown").delay(200));
    const pending = h.client.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "hi" }],
    });
    await h.llm.waitForRequests(1);
    const closing = h.server.close();
    const done = await pending;
    expect(done.choices[0]?.message.content).toBe("finished before shutdown");
    await closing;
    harnesses.forget();
    await h.llm.close();
  });
});
