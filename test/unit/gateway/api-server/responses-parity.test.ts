import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startApiServer } from "../../../../src/gateway/api-server/index.js";
import {
  API_KEY,
  type ApiHarness,
  fakeLlmConfig,
  harnessPerTest,
  sentMessages,
} from "../../../support/api-server-harness.js";
import { reply, stallMidStream } from "../../../support/fake-llm.js";

const harnesses = harnessPerTest();
const setup = () => harnesses.start();

/** The harness's working directory (the agent's tools run there). */
const cwdOf = (h: ApiHarness) => join(dirname(h.home), "work");

describe("Responses stored in response_store.db", () => {
  it("survive a restart: GET and previous_response_id work from a new server on the same home", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("First answer."));
    const first = await h.client.responses.create({
      model: "hermes-agent",
      input: "Remember the word heron.",
      instructions: "Be brief.",
    });
    await h.server.close();

    // The file has upstream's tables and columns, so Python Hermes reads it too.
    const db = new Database(join(h.home, "response_store.db"), { readonly: true });
    try {
      const row = db.prepare("SELECT response_id, data, accessed_at FROM responses").get() as {
        response_id: string;
        data: string;
        accessed_at: number;
      };
      expect(row.response_id).toBe(first.id);
      const data = JSON.parse(row.data) as Record<string, unknown>;
      expect(data["session_id"]).toBeTruthy();
      expect(data["instructions"]).toBe("Be brief.");
      expect(data["conversation_history"]).toMatchObject([
        { role: "user", content: "Remember the word heron." },
        { role: "assistant", content: "First answer." },
      ]);
      expect(
        db
          .prepare("SELECT * FROM conversations")
          .columns()
          .map((c) => c.name),
      ).toEqual(["name", "response_id"]);
    } finally {
      db.close();
    }

    const again = await startApiServer({
      home: h.home,
      cwd: cwdOf(h),
      config: fakeLlmConfig(h.llm),
      env: {},
      port: 0,
      key: API_KEY,
    });
    try {
      const client = new OpenAI({ baseURL: `${again.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
      expect((await client.responses.retrieve(first.id)).id).toBe(first.id);
      h.llm.enqueue(reply().text("The word was heron."));
      const second = await client.responses.create({
        model: "hermes-agent",
        input: "What was the word?",
        previous_response_id: first.id,
      });
      expect(second.output_text).toBe("The word was heron.");
      const sent = sentMessages(h.llm.chatRequests.at(-1)?.body);
      expect(sent.map((m) => m.content)).toContain("Remember the word heron.");
      // Instructions carry to a continuation that sends none, as upstream.
      expect(sent[0]?.content.endsWith("Be brief.")).toBe(true);
    } finally {
      await again.close();
    }
  });

  it("a response whose session is gone from state.db still continues from its stored history", async () => {
    const h = await setup();
    await h.server.close();
    // A row as Python Hermes writes it, naming a session this state.db never had.
    const db = new Database(join(h.home, "response_store.db"));
    db.prepare("INSERT INTO responses (response_id, data, accessed_at) VALUES (?, ?, ?)").run(
      "resp_from_python",
      JSON.stringify({
        response: { id: "resp_from_python", object: "response", status: "completed", output: [] },
        conversation_history: [
          { role: "user", content: "My cat is called Miso." },
          { role: "assistant", content: "Nice name." },
        ],
        instructions: null,
        session_id: "6f1c2a9e-python-uuid",
      }),
      Date.now() / 1000,
    );
    db.close();
    const again = await startApiServer({
      home: h.home,
      cwd: cwdOf(h),
      config: fakeLlmConfig(h.llm),
      env: {},
      port: 0,
      key: API_KEY,
    });
    try {
      const client = new OpenAI({ baseURL: `${again.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
      h.llm.enqueue(reply().text("Miso."));
      await client.responses.create({
        model: "hermes-agent",
        input: "What is my cat called?",
        previous_response_id: "resp_from_python",
      });
      const sent = sentMessages(h.llm.chatRequests.at(-1)?.body).map((m) => m.content);
      expect(sent.slice(1)).toEqual(["My cat is called Miso.", "Nice name.", "What is my cat called?"]);
    } finally {
      await again.close();
    }
  });

  it("keeps the latest `capacity` responses and evicts the least recently used first", async () => {
    const { ResponseStore } = await import("../../../../src/gateway/api-server/response-store.js");
    const store = new ResponseStore(undefined, 3);
    const entry = (n: number) => ({
      sessionId: `s${n}`,
      response: { id: `r${n}` },
      conversationHistory: [],
      instructions: null,
    });
    store.put("r1", entry(1));
    store.put("r2", entry(2));
    store.put("r3", entry(3));
    expect(store.get("r1")?.sessionId).toBe("s1"); // r1 is now the most recently used
    store.put("r4", entry(4));
    expect(store.size).toBe(3);
    expect(store.get("r2")).toBeUndefined();
    expect(store.get("r1")).toBeDefined();
    store.close();
  });
});

describe("A Responses stream the client abandons", () => {
  it("is stored as incomplete with the text it had, and GET finds it", async () => {
    const h = await setup();
    h.llm.enqueue(stallMidStream(3, reply().text("Partial words then a long stall")));
    const controller = new AbortController();
    const res = await h.call("/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "hermes-agent", input: "go", stream: true }),
      signal: controller.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("response.output_text.delta")) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    const id = /"id":"(resp_[0-9a-f]+)"/.exec(text)?.[1] ?? "";
    controller.abort();
    let stored: OpenAI.Responses.Response | undefined;
    while (!stored) {
      stored = await h.client.responses.retrieve(id).catch(() => undefined);
      if (!stored) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stored.status).toBe("incomplete");
    expect(stored.output_text.length).toBeGreaterThan(0);
  });
});

describe("Named conversations", () => {
  it("chain each request to the conversation's latest response; a new name starts fresh", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("Noted: blue."), reply().text("It was blue."), reply().text("No idea."));
    const a = await h.client.responses.create({
      model: "hermes-agent",
      input: "My favourite colour is blue.",
      conversation: "colours",
    });
    const b = await h.client.responses.create({
      model: "hermes-agent",
      input: "What is my favourite colour?",
      conversation: "colours",
    });
    expect(b.previous_response_id).toBe(a.id);
    expect(sentMessages(h.llm.chatRequests[1]?.body).map((m) => m.content)).toContain(
      "My favourite colour is blue.",
    );
    await h.client.responses.create({ model: "hermes-agent", input: "And mine?", conversation: "other" });
    expect(sentMessages(h.llm.chatRequests[2]?.body).map((m) => m.content)).not.toContain(
      "My favourite colour is blue.",
    );
    // Both at once is ambiguous: refused before any turn runs.
    await expect(
      h.client.responses.create({
        model: "hermes-agent",
        input: "x",
        conversation: "colours",
        previous_response_id: b.id,
      }),
    ).rejects.toMatchObject({ status: 400 });
    // store: false answers but keeps nothing, and moves no conversation forward.
    h.llm.enqueue(reply().text("unstored"));
    const unstored = await h.client.responses.create({
      model: "hermes-agent",
      input: "Forget this.",
      conversation: "colours",
      store: false,
    });
    await expect(h.client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
    h.llm.enqueue(reply().text("still blue"));
    const after = await h.client.responses.create({
      model: "hermes-agent",
      input: "Colour?",
      conversation: "colours",
    });
    expect(after.previous_response_id).toBe(b.id);
    for (const name of ["", " ", "x".repeat(300)]) {
      const res = await h.call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({ input: "x", conversation: name }),
      });
      expect(res.status).toBe(400);
    }
    expect(h.llm.chatRequests).toHaveLength(5);
  });
});

describe("Tool calls as Responses output items", () => {
  it("non-streaming: function_call and function_call_output items precede the message", async () => {
    const h = await setup();
    writeFileSync(join(cwdOf(h), "notes.txt"), "the secret word is otter\n");
    h.llm.enqueue(
      reply().toolCall("read_file", { path: "notes.txt" }, "call_read_1"),
      reply().text("The file says otter."),
    );
    const response = await h.client.responses.create({ model: "hermes-agent", input: "Read notes.txt" });
    expect(response.output.map((i) => i.type)).toEqual(["function_call", "function_call_output", "message"]);
    const call = response.output[0];
    const result = response.output[1];
    expect(call).toMatchObject({ type: "function_call", name: "read_file", call_id: "call_read_1" });
    expect(JSON.parse(call?.type === "function_call" ? call.arguments : "{}")).toEqual({ path: "notes.txt" });
    expect(result).toMatchObject({ type: "function_call_output", call_id: "call_read_1" });
    expect(JSON.stringify(result)).toContain("otter");
    expect(response.output_text).toBe("The file says otter.");
    // The stored copy is the same.
    expect((await h.client.responses.retrieve(response.id)).output).toHaveLength(3);
  });

  it("streaming: items arrive live and the SDK's stream helper assembles the final response", async () => {
    const h = await setup();
    writeFileSync(join(cwdOf(h), "notes.txt"), "badger\n");
    h.llm.enqueue(
      reply().text("Let me look. ").toolCall("read_file", { path: "notes.txt" }, "call_r"),
      reply().text("It says badger."),
    );
    const stream = h.client.responses.stream({ model: "hermes-agent", input: "Read notes.txt" });
    const seen: string[] = [];
    for await (const event of stream) {
      if (event.type === "response.output_item.added" || event.type === "response.output_item.done") {
        seen.push(`${event.type.slice(21)}:${event.item.type}@${event.output_index}`);
      }
    }
    const final = await stream.finalResponse();
    expect(seen).toEqual([
      "added:message@0",
      "added:function_call@1",
      "done:function_call@1",
      "added:function_call_output@2",
      "done:function_call_output@2",
      "done:message@0",
    ]);
    expect(final.output.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output"]);
    expect(final.output_text).toBe("Let me look. It says badger.");
  });
});

describe("Chat completions: hermes.tool.progress events", () => {
  it("are named SSE events (not comments) with running and completed statuses", async () => {
    const h = await setup();
    writeFileSync(join(cwdOf(h), "a.txt"), "x\n");
    h.llm.enqueue(reply().toolCall("read_file", { path: "a.txt" }, "call_p"), reply().text("Done."));
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        model: "hermes-agent",
        stream: true,
        messages: [{ role: "user", content: "go" }],
      }),
    });
    const text = await res.text();
    const frames = text.split("\n\n").filter((f) => f.startsWith("event: hermes.tool.progress\n"));
    const data = frames.map((f) => JSON.parse(f.split("\ndata: ")[1] ?? "{}") as Record<string, unknown>);
    expect(data).toEqual([
      {
        tool: "read_file",
        emoji: expect.any(String),
        label: "read_file: a.txt",
        toolCallId: "call_p",
        status: "running",
      },
      { tool: "read_file", toolCallId: "call_p", status: "completed" },
    ]);
    expect(text).not.toMatch(/^: hermes\.tool\.progress/m);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);

    // The official client yields the progress data as chunks without choices; text still adds up.
    h.llm.enqueue(reply().toolCall("read_file", { path: "a.txt" }, "call_q"), reply().text("Again."));
    const stream = await h.client.chat.completions.create({
      model: "hermes-agent",
      stream: true,
      messages: [{ role: "user", content: "go" }],
    });
    let content = "";
    let progress = 0;
    for await (const chunk of stream) {
      if (!chunk.choices) progress++;
      else content += chunk.choices[0]?.delta.content ?? "";
    }
    expect(progress).toBe(2);
    expect(content).toBe("Again.");
  });
});
