/**
 * Approvals on the Runs API, through the official client: a dangerous command in a run shows up
 * as an `approval.requested` event and the run waits (status `waiting_for_approval`) with the
 * command not run; `POST /v1/runs/{id}/approval` answers it ("once" runs it, "deny" refuses it);
 * `approvals.timeout` without an answer denies it; answering a wrong id, a bad choice, or a run
 * with nothing pending is refused; other API routes still deny at once (nobody follows them).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ApiHarness, fakeLlmConfig, harnessPerTest } from "../../../support/api-server-harness.js";
import { reply, startFakeLlm } from "../../../support/fake-llm.js";

type Json = Record<string, unknown>;
const harnesses = harnessPerTest();

/** Follows a run's events, resolving each awaited kind as it arrives. */
function follow(h: ApiHarness, runId: string) {
  const events: Json[] = [];
  const done = (async () => {
    const stream = (await h.client.get(`/runs/${runId}/events`, { stream: true })) as AsyncIterable<Json>;
    // The official client's SSE reader throws at an event carrying `error: true` (a failed tool's
    // `tool.completed`); what came before it is kept.
    try {
      for await (const event of stream) events.push(event);
    } catch {}
  })();
  const next = async (kind: string, ms = 15_000): Promise<Json> => {
    const end = Date.now() + ms;
    for (;;) {
      const found = events.find((e) => e["event"] === kind);
      if (found) return found;
      if (Date.now() > end)
        throw new Error(`no ${kind} event; got ${events.map((e) => e["event"]).join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { events, done, next };
}

async function finished(h: ApiHarness, runId: string): Promise<void> {
  while ((await h.client.get<Json>(`/runs/${runId}`))["status"] !== "completed") {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function setup(timeoutS?: number): Promise<{ h: ApiHarness; victim: string }> {
  const llm = await startFakeLlm();
  const config = fakeLlmConfig(llm);
  if (timeoutS) config.approvals = { ...config.approvals, timeout: timeoutS };
  const h = await harnesses.start({ llm, config });
  // Hermes's config.yaml is a protected path: writing it always needs an explicit yes.
  const victim = join(h.home, "config.yaml");
  return { h, victim };
}

describe("approvals on /v1/runs", () => {
  it("waits for the client's answer; 'once' runs the command and the run completes", async () => {
    const { h, victim } = await setup();
    h.llm.enqueue(
      reply().toolCall("write_file", { path: victim, content: "EXTRA=1\n" }),
      reply().text("Cleaned."),
    );
    const started = await h.client.post<Json>("/runs", { body: { input: "clean the build" } });
    const runId = String(started["run_id"]);
    const run = follow(h, runId);
    const asked = await run.next("approval.requested");
    expect(asked).toMatchObject({
      run_id: runId,
      approval_id: expect.stringMatching(/^appr_/),
      command: expect.stringContaining(victim),
      choices: ["once", "deny"],
    });
    expect(await h.client.get<Json>(`/runs/${runId}`)).toMatchObject({ status: "waiting_for_approval" });
    expect(existsSync(victim)).toBe(false);

    // A wrong id and a nonsense choice change nothing.
    await expect(
      h.client.post(`/runs/${runId}/approval`, { body: { approval_id: "appr_nope", choice: "once" } }),
    ).rejects.toMatchObject({ status: 409 });
    await expect(
      h.client.post(`/runs/${runId}/approval`, { body: { choice: "yes please" } }),
    ).rejects.toMatchObject({ status: 400 });
    expect(existsSync(victim)).toBe(false);

    const answered = await h.client.post<Json>(`/runs/${runId}/approval`, {
      body: { approval_id: asked["approval_id"], choice: "once" },
    });
    expect(answered).toMatchObject({ choice: "once", status: "resolved" });
    await run.done;
    expect(run.events.find((e) => e["event"] === "approval.resolved")).toMatchObject({
      choice: "once",
      by: "client",
    });
    expect(run.events.at(-1)).toMatchObject({ event: "run.completed", output: "Cleaned." });
    expect(readFileSync(victim, "utf8")).toBe("EXTRA=1\n");
    // Answered already: nothing is pending any more.
    await expect(
      h.client.post(`/runs/${runId}/approval`, { body: { choice: "once" } }),
    ).rejects.toMatchObject({
      status: 409,
    });
  });

  it("'deny' refuses it: the command never runs and the model is told", async () => {
    const { h, victim } = await setup();
    h.llm.enqueue(
      reply().toolCall("write_file", { path: victim, content: "EXTRA=1\n" }),
      reply().text("Left it."),
    );
    const runId = String((await h.client.post<Json>("/runs", { body: { input: "clean" } }))["run_id"]);
    const run = follow(h, runId);
    await run.next("approval.requested");
    await h.client.post(`/runs/${runId}/approval`, { body: { choice: "deny" } });
    await finished(h, runId);
    expect(existsSync(victim)).toBe(false);
    expect(JSON.stringify(h.llm.chatRequests.at(-1)?.body)).toMatch(/Denied/);
  });

  it("an unanswered approval is denied after approvals.timeout, as in chats", async () => {
    const { h, victim } = await setup(1);
    h.llm.enqueue(
      reply().toolCall("write_file", { path: victim, content: "EXTRA=1\n" }),
      reply().text("Timed out."),
    );
    const runId = String((await h.client.post<Json>("/runs", { body: { input: "clean" } }))["run_id"]);
    const run = follow(h, runId);
    await run.next("approval.requested");
    const resolved = await run.next("approval.resolved", 10_000);
    expect(resolved).toMatchObject({ choice: "deny", by: "timeout" });
    await finished(h, runId);
    expect(existsSync(victim)).toBe(false);
  });

  it("chat completions still deny at once: nobody follows them to answer", async () => {
    const { h, victim } = await setup();
    h.llm.enqueue(
      reply().toolCall("write_file", { path: victim, content: "EXTRA=1\n" }),
      reply().text("Could not."),
    );
    const completion = await h.client.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: "clean" }],
    });
    expect(completion.choices[0]?.message.content).toBe("Could not.");
    expect(existsSync(victim)).toBe(false);
    expect(JSON.stringify(h.llm.chatRequests.at(-1)?.body)).toMatch(/through the API server cannot/);
  });
});
