/**
 * Fenced chat claims through the gateway's router and chat relay, on real PostgreSQL coordinators
 * (two instances in one process, short timings): instance A runs a chat's turn, loses its database
 * past the TTL while its model call is in flight, B takes the chat over and answers; when A's
 * model answer then arrives (a tool call), A's turn runs no tool, sends and stores nothing, and
 * the message queued on A goes to B. Plus the gates on their own: what passes, waits and refuses.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { gated, SESSION_WRITES } from "../../../../src/gateway/coordination/chat-fence.js";
import { ChatClaimLostError } from "../../../../src/state/coordination.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { pgInstancePairs } from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { callTools, say } from "../../../support/scripted-transport.js";

describe("the gates", () => {
  it("pass synchronously, wait for a pending confirmation, and refuse after a loss without calling through", async () => {
    const calls: string[] = [];
    const target = {
      appendMessage: async (id: string) => {
        calls.push(`append ${id}`);
        return 1;
      },
      getSession: async (id: string) => {
        calls.push(`get ${id}`);
        return null;
      },
    };
    let verdict: Promise<void> | undefined;
    const store = gated(target, SESSION_WRITES, () => verdict);
    // Valid: the write is made in the same tick (no extra await for the one-process speed).
    void store.appendMessage("s1");
    expect(calls).toEqual(["append s1"]);
    let confirm!: () => void;
    verdict = new Promise<void>((r) => (confirm = r));
    const waiting = store.appendMessage("s2");
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(["append s1"]);
    confirm();
    await waiting;
    expect(calls).toEqual(["append s1", "append s2"]);
    verdict = Promise.reject(new ChatClaimLostError("k", "taken over"));
    verdict.catch(() => undefined);
    await expect(store.appendMessage("s3")).rejects.toBeInstanceOf(ChatClaimLostError);
    // Reads are not fenced.
    await store.getSession("s4");
    expect(calls).toEqual(["append s1", "append s2", "get s4"]);
  });
});

describe.skipIf(postgresSkipReason)(
  "a turn whose chat was taken over while its instance lost the database",
  () => {
    let pg: PostgresFixture;
    const pairs = pgInstancePairs();
    let running: Instances | undefined;
    beforeAll(async () => {
      pg = await startPostgres();
    }, 60_000);
    afterAll(async () => {
      await running?.stop();
      await pairs.close();
      await pg?.dispose();
    });

    it("runs no tool, sends and stores nothing more, and hands its queued message to the new holder", async () => {
      const { link, a, b, aLog } = await pairs.open(pg);
      const config = {
        display: { ...defaultConfig().display, busy_input_mode: "queue", tool_progress: "off" },
      };
      running = startInstances(["a", "b"], { coordinators: [a, b], config, sharedIndex: true });
      const [ia, ib] = running.list as [Instance, Instance];
      const marker = join(running.cwd, "fenced-tool-ran");

      let answer!: () => void;
      const modelAnswers = new Promise<void>((r) => (answer = r));
      ia.model.push(callTools(["terminal", { command: `touch ${marker}` }]), modelAnswers);
      ia.model.push(say("answer one, after the tool"));
      // B's answer waits, so B still runs the chat when A learns it lost it.
      let bAnswers!: () => void;
      const bGate = new Promise<void>((r) => (bAnswers = r));
      ib.model.push(say("answer two"), bGate).push(say("answer zero"));

      ia.adapter.from("100", "one");
      await until(() => ia.model.requests.length === 1, "A's model call");
      // Queued on A behind the running turn.
      ia.adapter.from("100", "zero");
      await until(() => ia.adapter.texts().some((t) => t.startsWith("📥 Queued")), "A's queued notice");

      link.cut();
      ib.adapter.from("100", "two");
      await until(() => ib.model.requests.length === 1, "B to take the chat over", 15_000);
      // A's model answer arrives now, while A is still cut off: its claim is not valid any more,
      // so the turn waits for the database instead of running the tool.
      answer();
      await new Promise((r) => setTimeout(r, 300));
      expect(existsSync(marker)).toBe(false);
      link.restore();
      // A learns the chat is B's: the turn stops, and the queued "zero" goes to B, queued there.
      await until(
        () => ib.adapter.texts().some((t) => t.startsWith("📥 Queued")),
        "zero queued on B",
        15_000,
      );
      bAnswers();
      await until(() => ib.adapter.texts().includes("answer zero"), "B's answers", 15_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker)).toBe(false);
      expect(ia.model.requests).toHaveLength(1);
      expect(ia.adapter.texts().some((t) => t.includes("answer one"))).toBe(false);
      expect(ia.adapter.texts().some((t) => t.includes("went wrong"))).toBe(false);
      expect(aLog.join("\n")).toMatch(/lost chat .*telegram.*another instance took it over/);

      // One history, no interleaving: A's words end where it lost the chat; B's follow.
      const sessions = await running.store.listSessions({});
      expect(sessions).toHaveLength(1);
      const stored = (await running.store.getMessages(sessions[0]!.id)).map((m) => [
        m.role,
        typeof m.content === "string" ? m.content : null,
      ]);
      const texts = stored.map(([, text]) => text ?? "");
      expect(texts.some((t) => t.includes("answer one"))).toBe(false);
      expect(
        stored.filter(([role]) => role === "tool").every(([, t]) => !t?.includes("fenced-tool-ran")),
      ).toBe(true);
      expect(texts.indexOf("one")).toBeLessThan(texts.indexOf("two"));
      expect(texts.indexOf("answer two")).toBeLessThan(texts.indexOf("zero"));
      expect(stored.at(-1)).toEqual(["assistant", "answer zero"]);
      // B's model saw A's first message and B's own, never A's lost answer.
      const seen = JSON.stringify(ib.model.requests.at(-1)?.messages ?? []);
      expect(seen).toMatch(/"role":"user","content":"one\b/);
      expect(seen).not.toContain("answer one");
    }, 60_000);
  },
);
