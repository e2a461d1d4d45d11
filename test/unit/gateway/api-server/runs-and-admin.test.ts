import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ApiServerConfigError, startApiServer } from "../../../../src/gateway/api-server/index.js";
import { openSqliteStore, sessionStorePath } from "../../../../src/state/sqlite-store.js";
import {
  API_KEY,
  type ApiHarness,
  fakeLlmConfig,
  harnessPerTest,
  sentMessages,
} from "../../../support/api-server-harness.js";
import { hang, reply, startFakeLlm } from "../../../support/fake-llm.js";

const harnesses = harnessPerTest();
const setup = () => harnesses.start();

type Json = Record<string, unknown>;

/** The official client aimed at the server root, for the `/api/*` routes (its generic verbs). */
const rootClient = (h: ApiHarness) => new OpenAI({ baseURL: h.server.url, apiKey: API_KEY, maxRetries: 0 });

/** Reads `GET /v1/runs/{id}/events` with the official client's SSE decoder until the stream closes. */
async function runEvents(h: ApiHarness, runId: string): Promise<Json[]> {
  const stream = (await h.client.get(`/runs/${runId}/events`, { stream: true })) as AsyncIterable<Json>;
  const events: Json[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("Runs API", () => {
  it("starts a run (202), streams its events, and reports it completed when polled", async () => {
    const h = await setup();
    writeFileSync(join(h.home, "..", "work", "plan.txt"), "step one\n");
    h.llm.enqueue(
      reply().toolCall("read_file", { path: "plan.txt" }, "call_plan"),
      reply().text("Plan read."),
    );
    const { data: started, response } = await h.client
      .post<Json>("/runs", { body: { input: "Read plan.txt", instructions: "Be terse." } })
      .withResponse();
    expect(response.status).toBe(202);
    expect(started).toMatchObject({ status: "started", run_id: expect.stringMatching(/^run_/) });
    const runId = String(started["run_id"]);
    const events = await runEvents(h, runId);
    const kinds = events.map((e) => e["event"]);
    expect(kinds[0]).toBe("tool.started");
    expect(events[0]).toMatchObject({ tool: "read_file", preview: "plan.txt", run_id: runId });
    expect(kinds).toContain("tool.completed");
    expect(kinds).toContain("message.delta");
    expect(kinds.at(-1)).toBe("run.completed");
    expect(events.at(-1)).toMatchObject({
      output: "Plan read.",
      usage: { total_tokens: expect.any(Number) },
    });
    const polled = await h.client.get<Json>(`/runs/${runId}`);
    expect(polled).toMatchObject({
      object: "hermes.run",
      run_id: runId,
      status: "completed",
      output: "Plan read.",
    });
    // A client attaching after the end gets the whole story replayed.
    expect((await runEvents(h, runId)).map((e) => e["event"])).toEqual(kinds);
    expect(sentMessages(h.llm.chatRequests[0]?.body)[0]?.content.endsWith("Be terse.")).toBe(true);
  });

  it("stops a running run: status cancelled and a run.cancelled event ends its stream", async () => {
    const h = await setup();
    h.llm.enqueue(hang());
    const started = await h.client.post<Json>("/runs", { body: { input: "take forever" } });
    const runId = String(started["run_id"]);
    const events = runEvents(h, runId);
    while ((await h.client.get<Json>(`/runs/${runId}`))["status"] !== "running") {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stopped = await h.client.post<Json>(`/runs/${runId}/stop`);
    expect(stopped).toEqual({ run_id: runId, status: "stopping" });
    expect((await events).at(-1)).toMatchObject({ event: "run.cancelled", run_id: runId });
    expect(await h.client.get<Json>(`/runs/${runId}`)).toMatchObject({ status: "cancelled" });
  });

  it("continues a session by session_id, refuses unknown runs and sessions, and refuses an approval answer when none is pending", async () => {
    const h = await setup();
    h.llm.enqueue(reply().text("one"), reply().text("two"));
    const first = await h.client.post<Json>("/runs", { body: { input: "Remember 7." } });
    await runEvents(h, String(first["run_id"]));
    const { session_id: sid } = await h.client.get<Json>(`/runs/${String(first["run_id"])}`);
    const second = await h.client.post<Json>("/runs", { body: { input: "What number?", session_id: sid } });
    await runEvents(h, String(second["run_id"]));
    expect(sentMessages(h.llm.chatRequests[1]?.body).map((m) => m.content)).toContain("Remember 7.");

    await expect(h.client.get("/runs/run_nope")).rejects.toMatchObject({ status: 404 });
    await expect(h.client.post("/runs/run_nope/stop")).rejects.toMatchObject({ status: 404 });
    await expect(
      h.client.post("/runs", { body: { input: "x", session_id: "no-such-session" } }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      h.client.post("/runs", { body: { input: "x", session_id: "../../etc/passwd" } }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(h.client.post("/runs", { body: {} })).rejects.toMatchObject({ status: 400 });
    await expect(
      h.client.post(`/runs/${String(first["run_id"])}/approval`, { body: { choice: "once" } }),
    ).rejects.toMatchObject({ status: 409 });
    expect(h.llm.chatRequests).toHaveLength(2);
  });
});

describe("Runs API limits", () => {
  it("refuses a run past max_concurrent_runs with 429 and accepts one again after a stop", async () => {
    const h = await harnesses.start({ maxConcurrentRuns: 1 });
    h.llm.enqueue(hang(), reply().text("second"));
    const first = await h.client.post<Json>("/runs", { body: { input: "slow" } });
    await expect(h.client.post("/runs", { body: { input: "another" } })).rejects.toMatchObject({
      status: 429,
    });
    await h.client.post(`/runs/${String(first["run_id"])}/stop`);
    const again = await h.client.post<Json>("/runs", { body: { input: "another" } });
    expect((await runEvents(h, String(again["run_id"]))).at(-1)).toMatchObject({ event: "run.completed" });
  });
});

describe("Discovery routes", () => {
  it("capabilities, skills and toolsets through the official client; /health/detailed without a key", async () => {
    const h = await setup();
    const skillDir = join(h.home, "skills", "writing", "haiku");
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(
      join(skillDir, "SKILL.md"),
      "---\nname: haiku\ndescription: Write haiku.\n---\nFive, seven, five.\n",
    );

    const caps = await h.client.get<Json>("/capabilities");
    expect(caps).toMatchObject({
      object: "hermes.api_server.capabilities",
      model: "hermes-agent",
      auth: { type: "bearer", required: true },
      features: { responses_api: true, run_submission: true, run_approval_response: true },
    });
    const skills = await h.client.get<Json[]>("/skills");
    expect(skills).toContainEqual(
      expect.objectContaining({ name: "haiku", description: "Write haiku.", category: "writing" }),
    );
    const toolsets = await h.client.get<Json[]>("/toolsets");
    const api = toolsets.find((t) => t["name"] === "hermes-api-server");
    expect(api).toMatchObject({ enabled: true });
    expect(api?.["tools"]).toContain("read_file");
    expect(api?.["tools"]).not.toContain("clarify");
    expect(toolsets.find((t) => t["name"] === "hermes-discord")?.["enabled"]).toBe(false);

    const detailed = await fetch(`${h.server.url}/health/detailed`);
    expect(detailed.status).toBe(200);
    expect(await detailed.json()).toMatchObject({ status: "ok", active_agents: 0, pid: process.pid });
    expect((await fetch(`${h.server.url}/v1/health`)).status).toBe(200);
    // Everything else needs the key.
    const anonymous = new OpenAI({ baseURL: h.base, apiKey: "not-the-key-at-all", maxRetries: 0 });
    for (const path of ["/capabilities", "/skills", "/toolsets", "/runs/run_x"]) {
      await expect(anonymous.get(path)).rejects.toMatchObject({ status: 401 });
    }
    expect((await fetch(`${h.server.url}/api/sessions`)).status).toBe(401);
    expect((await fetch(`${h.server.url}/api/jobs`)).status).toBe(401);
  });
});

describe("Sessions API", () => {
  it("lists, creates, renames, chats in, reads, forks and deletes sessions", async () => {
    const h = await setup();
    const api = rootClient(h);
    const created = await api.post<Json>("/api/sessions", { body: { title: "Groceries" } });
    const session = created["session"] as Json;
    expect(session).toMatchObject({ source: "api_server", title: "Groceries", has_system_prompt: false });
    const id = String(session["id"]);

    h.llm.enqueue(reply().text("Added milk."));
    const chat = await api.post<Json>(`/api/sessions/${id}/chat`, { body: { message: "Add milk" } });
    expect(chat).toMatchObject({
      object: "hermes.session.chat.completion",
      message: { content: "Added milk." },
    });

    const messages = await api.get<Json>(`/api/sessions/${id}/messages`);
    expect((messages["data"] as Json[]).map((m) => [m["role"], m["content"]])).toEqual([
      ["user", "Add milk"],
      ["assistant", "Added milk."],
    ]);
    const renamed = await api.patch<Json>(`/api/sessions/${id}`, { body: { title: "Shopping" } });
    expect((renamed["session"] as Json)["title"]).toBe("Shopping");
    await expect(api.patch(`/api/sessions/${id}`, { body: { system_prompt: "evil" } })).rejects.toMatchObject(
      {
        status: 400,
      },
    );

    const fork = (await api.post<Json>(`/api/sessions/${id}/fork`, { body: {} }))["session"] as Json;
    expect(fork).toMatchObject({ parent_session_id: id });
    const forkMessages = await api.get<Json>(`/api/sessions/${String(fork["id"])}/messages`);
    expect(forkMessages["data"]).toHaveLength(2);

    const list = await api.get<Json>("/api/sessions", { query: { limit: 10 } });
    expect((list["data"] as Json[]).map((s) => s["id"])).toEqual(expect.arrayContaining([id, fork["id"]]));
    expect(list).toMatchObject({ object: "list", limit: 10, offset: 0 });

    expect(await api.delete<Json>(`/api/sessions/${id}`)).toMatchObject({ deleted: true, id });
    await expect(api.get(`/api/sessions/${id}`)).rejects.toMatchObject({ status: 404 });
    await expect(api.post("/api/sessions", { body: { id: String(fork["id"]) } })).rejects.toMatchObject({
      status: 409,
    });
    for (const bad of ["..%2F..%2Fstate.db", "a%20b", "x".repeat(200)]) {
      expect((await h.call(`/api/sessions/${bad}`)).status).toBe(404);
    }
    await expect(api.post("/api/sessions", { body: { id: "bad id!" } })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe("X-Hermes-Session-Id", () => {
  it("continues only the API server's own sessions, never a CLI session's private transcript", async () => {
    const h = await setup();
    const store = openSqliteStore(sessionStorePath(h.home));
    try {
      store.createSession({ id: "20260101_000000_abcdef", source: "cli" });
      store.appendMessages("20260101_000000_abcdef", [{ role: "user", content: "my bank PIN is 4711" }]);
    } finally {
      store.close();
    }
    await expect(
      h.client.chat.completions.create(
        { model: "hermes-agent", messages: [{ role: "user", content: "what did I say?" }] },
        { headers: { "X-Hermes-Session-Id": "20260101_000000_abcdef" } },
      ),
    ).rejects.toMatchObject({ status: 404 });
    expect(h.llm.chatRequests).toHaveLength(0);
  });
});

describe("Jobs API", () => {
  it("creates, reads, edits, pauses, resumes, triggers and deletes cron jobs in jobs.json", async () => {
    const h = await setup();
    const api = rootClient(h);
    const { job } = await api.post<{ job: Json }>("/api/jobs", {
      body: { name: "morning", schedule: "every 2h", prompt: "Summarise the news", deliver: "local" },
    });
    const id = String(job["id"]);
    expect(job).toMatchObject({ name: "morning", prompt: "Summarise the news", enabled: true });
    expect((await api.get<{ jobs: Json[] }>("/api/jobs")).jobs.map((j) => j["id"])).toEqual([id]);
    expect((await api.get<{ job: Json }>(`/api/jobs/${id}`)).job["name"]).toBe("morning");

    const edited = await api.patch<{ job: Json }>(`/api/jobs/${id}`, {
      body: { prompt: "Summarise the weather", origin: { platform: "telegram" }, workdir: "/etc" },
    });
    expect(edited.job["prompt"]).toBe("Summarise the weather");
    // Fields outside upstream's allowlist are never written.
    expect(edited.job["workdir"] ?? null).toBeNull();
    await expect(api.patch(`/api/jobs/${id}`, { body: { workdir: "/etc" } })).rejects.toMatchObject({
      status: 400,
    });

    expect((await api.post<{ job: Json }>(`/api/jobs/${id}/pause`)).job).toMatchObject({
      enabled: false,
      state: "paused",
    });
    expect((await api.get<{ jobs: Json[] }>("/api/jobs")).jobs).toEqual([]);
    expect(
      (await api.get<{ jobs: Json[] }>("/api/jobs", { query: { include_disabled: "true" } })).jobs,
    ).toHaveLength(1);
    expect((await api.post<{ job: Json }>(`/api/jobs/${id}/resume`)).job).toMatchObject({ enabled: true });
    const due = (await api.post<{ job: Json }>(`/api/jobs/${id}/run`)).job;
    expect(Date.parse(String(due["next_run_at"]))).toBeLessThanOrEqual(Date.now() + 1000);

    expect(await api.delete<Json>(`/api/jobs/${id}`)).toEqual({ ok: true });
    const gone = await h.call(`/api/jobs/${id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: "Job not found" });
  });

  it("refuses bad input with upstream's {error} shape and writes nothing", async () => {
    const h = await setup();
    const post = (body: Json) => h.call("/api/jobs", { method: "POST", body: JSON.stringify(body) });
    const cases: Array<[Json, RegExp]> = [
      [{ schedule: "every 1h", prompt: "x" }, /Name is required/],
      [{ name: "n", prompt: "x" }, /Schedule is required/],
      [{ name: "n", schedule: "whenever you like", prompt: "x" }, /schedule/i],
      [{ name: "n", schedule: "every 1h", prompt: "x".repeat(5001) }, /Prompt/],
      [{ name: "n", schedule: "every 1h", prompt: "x", repeat: 0 }, /Repeat/],
      [{ name: "n", schedule: "every 1h", prompt: "x", skills: "not-a-list" }, /Skills/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(String(((await res.json()) as Json)["error"])).toMatch(message);
    }
    for (const id of ["..%2F..%2Fconfig", "a.b", "x".repeat(70)]) {
      const res = await h.call(`/api/jobs/${id}`);
      expect(res.status).toBe(400);
    }
    expect(((await (await h.call("/api/jobs")).json()) as { jobs: Json[] }).jobs).toEqual([]);
  });
});

describe("API key length", () => {
  it("refuses keys shorter than 16 characters at start-up, counting the key without surrounding spaces", async () => {
    const llm = await startFakeLlm();
    try {
      for (const key of ["short", "fifteen-chars!!", `   ${"k".repeat(15)}   `]) {
        const start = startApiServer({
          home: "/nonexistent-home",
          config: fakeLlmConfig(llm),
          env: {},
          port: 0,
          key,
        });
        await expect(start).rejects.toBeInstanceOf(ApiServerConfigError);
        await expect(start).rejects.toThrow(/at least 16/);
      }
      const fromEnv = startApiServer({
        home: "/nonexistent-home",
        config: fakeLlmConfig(llm),
        env: { API_SERVER_KEY: "abc" },
        port: 0,
      });
      await expect(fromEnv).rejects.toThrow(/API_SERVER_KEY is 3 characters/);
    } finally {
      await llm.close();
    }
  });
});
