/**
 * What one API request writes to state.db: the whole session (row with model and system prompt,
 * both messages, usage, end) in a handful of transactions. Each commit rewrites the touched pages
 * into the WAL, so 200 concurrent conversations paid for every extra one; these tests hold the
 * count down and check that nothing the old writes recorded went missing.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openSqliteStore, sessionStorePath } from "../../../../src/state/sqlite-store.js";
import { type ApiHarness, startApiHarness } from "../../../support/api-server-harness.js";
import { reply } from "../../../support/fake-llm.js";

let harness: ApiHarness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await harness?.close();
  harness = undefined;
});

/** Counts the write transactions the process opens while `work` runs. */
async function transactions(work: () => Promise<void>): Promise<number> {
  const exec = vi.spyOn(Database.prototype, "exec");
  await work();
  const n = exec.mock.calls.filter(([sql]) => /^\s*BEGIN/i.test(String(sql))).length;
  exec.mockRestore();
  return n;
}

describe("API server: state.db writes per request", () => {
  it("records a new conversation whole in at most four transactions (seven before)", async () => {
    harness = await startApiHarness();
    const h = harness;
    h.llm.respondWith(() => reply().text("Hello there.").usage({ prompt: 12, completion: 3 }));
    // The first request loads what every later one reuses.
    await h.client.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: "warm" }],
    });
    let sessionId = "";
    const count = await transactions(async () => {
      const done = await h.client.chat.completions
        .create({ model: "hermes-agent", messages: [{ role: "user", content: "Hi!" }] })
        .withResponse();
      sessionId = done.response.headers.get("x-hermes-session-id") ?? "";
    });
    expect(count).toBeLessThanOrEqual(4);

    const store = openSqliteStore(sessionStorePath(h.home), { readonly: true });
    try {
      const row = store.getSession(sessionId);
      expect(row).toMatchObject({ source: "api_server", model: "fake-model", endReason: "api_request_done" });
      expect(row?.systemPrompt).toBeTruthy();
      expect(row?.endedAt).not.toBeNull();
      expect(row?.inputTokens).toBe(12);
      expect(row?.outputTokens).toBe(3);
      expect(store.getMessages(sessionId).map((m) => [m.role, m.content])).toEqual([
        ["user", "Hi!"],
        ["assistant", "Hello there."],
      ]);
    } finally {
      store.close();
    }
  });

  it("continues an ended session in at most five transactions (six before), then ends it again", async () => {
    harness = await startApiHarness();
    const h = harness;
    h.llm.respondWith(() => reply().text("ok").usage({ prompt: 5, completion: 1 }));
    const first = await h.client.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "one" }] })
      .withResponse();
    const sessionId = first.response.headers.get("x-hermes-session-id") ?? "";
    const count = await transactions(async () => {
      await h.client.chat.completions.create(
        { model: "hermes-agent", messages: [{ role: "user", content: "two" }] },
        { headers: { "X-Hermes-Session-Id": sessionId } },
      );
    });
    // The reopen on resume, the model, the user message, the answer with its usage, the end.
    expect(count).toBeLessThanOrEqual(5);
    const store = openSqliteStore(sessionStorePath(h.home), { readonly: true });
    try {
      const row = store.getSession(sessionId);
      expect(row?.endedAt).not.toBeNull();
      expect(row?.inputTokens).toBe(10);
      expect(store.getMessages(sessionId).map((m) => m.content)).toEqual(["one", "ok", "two", "ok"]);
    } finally {
      store.close();
    }
  });

  it("a request carrying earlier messages still stores them before its own turn", async () => {
    harness = await startApiHarness();
    const h = harness;
    h.llm.enqueue(reply().text("It is Miso."));
    const done = await h.client.chat.completions
      .create({
        model: "hermes-agent",
        messages: [
          { role: "user", content: "My cat is Miso." },
          { role: "assistant", content: "Noted." },
          { role: "user", content: "What is my cat called?" },
        ],
      })
      .withResponse();
    const sessionId = done.response.headers.get("x-hermes-session-id") ?? "";
    const store = openSqliteStore(sessionStorePath(h.home), { readonly: true });
    try {
      expect(store.getSession(sessionId)?.systemPrompt).toBeTruthy();
      expect(store.getMessages(sessionId).map((m) => m.content)).toEqual([
        "My cat is Miso.",
        "Noted.",
        "What is my cat called?",
        "It is Miso.",
      ]);
    } finally {
      store.close();
    }
  });
});
