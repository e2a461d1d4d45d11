/**
 * API-server turns fenced on their session claim, on real PostgreSQL coordinators (two API
 * servers over one home in one process, short timings): instance A runs a continued session's
 * turn, loses its database past the TTL while its model call is in flight, and B takes the session
 * over and answers. When A's model answer then arrives (a tool call), A runs no tool, stores
 * nothing more, and its client gets `session_moved` (a 409, or the stream's error frame/event);
 * B goes on with the session's history intact.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitForChatClaim } from "../../../../src/gateway/coordination/chat-wait.js";
import { API_SERVER_CLAIM, type Coordinator } from "../../../../src/state/coordination.js";
import { openSqliteStore, sessionStorePath } from "../../../../src/state/sqlite-store.js";
import { type ApiHarness, startApiHarness } from "../../../support/api-server-harness.js";
import { type FakeLlm, reply, startFakeLlm } from "../../../support/fake-llm.js";
import { until } from "../../../support/gateway-instances.js";
import { pgInstancePairs } from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const exclusiveOn = (coordinator: Coordinator) => (id: string, signal: AbortSignal) =>
  waitForChatClaim(coordinator, `${API_SERVER_CLAIM}${id}`, { signal });

describe.skipIf(postgresSkipReason)("an API-server turn whose session another instance took over", () => {
  let pg: PostgresFixture;
  const pairs = pgInstancePairs();
  const harnesses: ApiHarness[] = [];
  const llms: FakeLlm[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.close();
    for (const l of llms.splice(0)) await l.close();
    await pairs.close();
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  /** Instances A (its database cuttable) and B over one home, each with its own fake model. */
  async function twoInstances() {
    const { link, a, b, aLog } = await pairs.open(pg);
    const llmA = await startFakeLlm();
    const llmB = await startFakeLlm();
    llms.push(llmA, llmB);
    const ha = await startApiHarness({ llm: llmA, exclusive: exclusiveOn(a) });
    harnesses.push(ha);
    const hb = await startApiHarness({ llm: llmB, home: ha.home, exclusive: exclusiveOn(b) });
    harnesses.push(hb);
    return { link, aLog, ha, hb, llmA, llmB };
  }

  /** Starts a session on A ("first" → "first answer") and answers its id. */
  async function startSession(ha: ApiHarness, llmA: FakeLlm): Promise<string> {
    llmA.enqueue(reply().text("first answer"));
    const first = await ha.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "hermes-agent", messages: [{ role: "user", content: "first" }] }),
    });
    expect(first.status).toBe(200);
    return first.headers.get("x-hermes-session-id") ?? "";
  }

  /** The stored conversation as role/text pairs. */
  function stored(home: string, sid: string): Array<[string, string]> {
    const store = openSqliteStore(sessionStorePath(home), { readonly: true });
    try {
      return store
        .getMessages(sid)
        .map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)]);
    } finally {
      store.close();
    }
  }

  for (const stream of [false, true]) {
    it(`${stream ? "streamed" : "plain"} chat completion: runs no tool, stores nothing more, answers session_moved`, async () => {
      const { link, aLog, ha, hb, llmA, llmB } = await twoInstances();
      const sid = await startSession(ha, llmA);
      expect(sid).toBeTruthy();
      const marker = join(ha.home, "..", "fenced-api-tool-ran");

      let answer!: () => void;
      const modelAnswers = new Promise<void>((r) => (answer = r));
      llmA.respondWith(async () => {
        await modelAnswers;
        return reply().toolCall("terminal", { command: `touch ${marker}` });
      });
      const before = llmA.chatRequests.length;
      const aTurn = ha.call("/v1/chat/completions", {
        method: "POST",
        headers: { "x-hermes-session-id": sid },
        body: JSON.stringify({
          model: "hermes-agent",
          stream,
          messages: [{ role: "user", content: "second" }],
        }),
      });
      await until(() => llmA.chatRequests.length > before, "A's model call");

      // A loses its database; B takes the session over once A's claim expires, and answers.
      link.cut();
      llmB.enqueue(reply().text("third answer"));
      const bTurn = await hb.call("/v1/chat/completions", {
        method: "POST",
        headers: { "x-hermes-session-id": sid },
        body: JSON.stringify({ model: "hermes-agent", messages: [{ role: "user", content: "third" }] }),
      });
      expect(bTurn.status).toBe(200);
      expect(
        ((await bTurn.json()) as { choices: [{ message: { content: string } }] }).choices[0].message.content,
      ).toBe("third answer");

      // A's model answer (a tool call) arrives while A is still cut off: the tool waits for the claim.
      answer();
      await new Promise((r) => setTimeout(r, 300));
      expect(existsSync(marker)).toBe(false);
      link.restore();

      const aResponse = await aTurn;
      const body = await aResponse.text();
      if (stream) {
        expect(aResponse.status).toBe(200);
        expect(body).toContain('"code":"session_moved"');
        expect(body).not.toContain("[DONE]");
      } else {
        expect(aResponse.status).toBe(409);
        expect(JSON.parse(body)).toMatchObject({ error: { code: "session_moved" } });
      }
      expect(body).toMatch(/taken over by another instance/);
      await new Promise((r) => setTimeout(r, 300));
      expect(existsSync(marker)).toBe(false);
      // No second model call on A after the tool call it could not run.
      expect(llmA.chatRequests.length).toBe(before + 1);
      expect(aLog.join("\n")).toMatch(/lost chat api_server:.*another instance took it over/);

      // One history: A's turn left no tool call or result; B's turn follows intact.
      const history = stored(ha.home, sid);
      expect(history.some(([role]) => role === "tool")).toBe(false);
      expect(history.some(([, text]) => text.includes("fenced-api-tool-ran"))).toBe(false);
      expect(history.slice(0, 2)).toEqual([
        ["user", "first"],
        ["assistant", "first answer"],
      ]);
      expect(history.slice(-2)).toEqual([
        ["user", "third"],
        ["assistant", "third answer"],
      ]);

      // B continues again and its model sees the whole history.
      llmB.enqueue(reply().text("fourth answer"));
      const fourth = await hb.client.chat.completions.create(
        { model: "hermes-agent", messages: [{ role: "user", content: "fourth" }] },
        { headers: { "x-hermes-session-id": sid } },
      );
      expect(fourth.choices[0]?.message.content).toBe("fourth answer");
      const seen = JSON.stringify(llmB.chatRequests.at(-1)?.body ?? {});
      expect(seen).toContain("first answer");
      expect(seen).toContain("third answer");
      expect(seen).not.toContain("fenced-api-tool-ran");
    }, 60_000);
  }
  it("streamed Responses turn continued by conversation: ends with an error event and stores no response", async () => {
    const { link, ha, hb, llmA, llmB } = await twoInstances();
    const create = (h: ApiHarness, input: string, stream = false) =>
      h.call("/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "hermes-agent", conversation: "team", input, stream }),
      });
    llmA.enqueue(reply().text("first answer"));
    expect((await create(ha, "first")).status).toBe(200);
    const marker = join(ha.home, "..", "fenced-responses-tool-ran");
    let answer!: () => void;
    const modelAnswers = new Promise<void>((r) => (answer = r));
    llmA.respondWith(async () => {
      await modelAnswers;
      return reply().toolCall("terminal", { command: `touch ${marker}` });
    });
    const before = llmA.chatRequests.length;
    const aTurn = create(ha, "second", true);
    await until(() => llmA.chatRequests.length > before, "A's model call");

    link.cut();
    llmB.enqueue(reply().text("third answer"));
    const third = await create(hb, "third");
    expect(third.status).toBe(200);
    const thirdId = ((await third.json()) as { id: string }).id;
    answer();
    await new Promise((r) => setTimeout(r, 300));
    link.restore();

    const events = await (await aTurn).text();
    expect(events).toMatch(/event: error\n.*"code":"session_moved"/);
    expect(events).not.toContain("response.completed");
    const aId = /"id":"(resp_[0-9a-f]+)"/.exec(events)?.[1];
    expect(aId).toBeTruthy();
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    // A stored no response of its own, so the conversation still ends at B's answer.
    expect((await hb.call(`/v1/responses/${aId}`)).status).toBe(404);
    expect((await hb.call(`/v1/responses/${thirdId}`)).status).toBe(200);
    llmB.enqueue(reply().text("fourth answer"));
    expect((await create(hb, "fourth")).status).toBe(200);
    const seen = JSON.stringify(llmB.chatRequests.at(-1)?.body ?? {});
    expect(seen).toContain("first answer");
    expect(seen).toContain("third answer");
    expect(seen).not.toContain("fenced-responses-tool-ran");
  }, 60_000);
});
