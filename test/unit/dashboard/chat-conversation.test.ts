/**
 * `Conversation` (the dashboard chat's turn relay) with a scripted session standing in for
 * `ChatSession`: the approval prompt asks in the running turn's stream and resolves with the
 * browser's answer; a wrong id is 404 and a choice a protected path does not offer is 422; the
 * question is withdrawn (denied) when the policy's timeout fires or the browser goes away, and
 * asking with no stream open denies at once. Streamed text is redacted across pieces.
 */
import { describe, expect, it } from "vitest";
import type { ApprovalPromptOptions } from "../../../src/agent/approval-policy.js";
import type { ChatSession } from "../../../src/agent/chat-session.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import { CLARIFY_UNANSWERED, Conversation } from "../../../src/dashboard/api-chat-conversation.js";
import { ApiError, type EventSink } from "../../../src/dashboard/http.js";
import type { ApprovalDecision, ApprovalRequest } from "../../../src/tools/types.js";
import { processRedactor } from "../../../src/util/redact.js";

const usage = {
  inputTokens: 1,
  outputTokens: 1,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};

function sinkOf(controller = new AbortController()) {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const sink: EventSink = {
    send: (event, data) => events.push({ event, data: data as Record<string, unknown> }),
    signal: controller.signal,
  };
  return { sink, events, controller };
}

/** A session whose turn runs `script` (which may ask the conversation's prompt). */
function scriptedSession(script: (emit: (e: AgentEvent) => void) => Promise<void>): ChatSession {
  let interrupted = false;
  const session = {
    id: "20261126_000000_abcdef",
    title: null,
    resumed: false,
    interrupt: () => {
      interrupted = true;
    },
    get interrupted() {
      return interrupted;
    },
    run: () => {
      const events: AgentEvent[] = [];
      const result = script((e) => events.push(e)).then(() => {
        events.push({
          type: "done",
          reason: interrupted ? "interrupted" : "completed",
          text: "",
          iterations: 1,
          usage,
        });
        return { text: "", reason: "completed" as const, iterations: 1, usage };
      });
      return {
        result,
        async *[Symbol.asyncIterator]() {
          await result;
          yield* events;
        },
      };
    },
  };
  return session as unknown as ChatSession;
}

/** The question reaches the stream after the turn's queued events: one macrotask later. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

const request: ApprovalRequest = {
  command: "rm -rf /tmp/x",
  reason: "recursive delete",
  patternKey: "rm_rf",
};

function options(signal = new AbortController().signal): ApprovalPromptOptions {
  return { signal, timeoutMs: 30_000 };
}

describe("the dashboard chat's conversation", () => {
  it("asks in the stream and resolves with the answer; wrong ids and unoffered choices are refused", async () => {
    const conversation = new Conversation(() => undefined);
    const { sink, events } = sinkOf();
    let decision: ApprovalDecision | undefined;
    conversation.attach(
      scriptedSession(async () => {
        const asking = conversation.prompt(request, options());
        await tick();
        const asked = events.find((e) => e.event === "approval");
        const id = String(asked?.data["id"]);
        expect(asked?.data["choices"]).toEqual(["once", "session", "always", "deny"]);
        expect(() => conversation.answer("not-it", "once")).toThrow(ApiError);
        conversation.answer(id, "session");
        decision = await asking;
        expect(() => conversation.answer(id, "once")).toThrow(/no pending approval/);
      }),
    );
    await conversation.runTurn("go", sink);
    expect(decision).toBe("session");
    expect(events.find((e) => e.event === "approval_resolved")?.data).toMatchObject({
      decision: "session",
      by: "dashboard",
    });
  });

  it("offers only once or deny for a protected path and refuses session or always with 422", async () => {
    const conversation = new Conversation(() => undefined);
    const { sink, events } = sinkOf();
    let status = 0;
    let decision: ApprovalDecision | undefined;
    conversation.attach(
      scriptedSession(async () => {
        const asking = conversation.prompt({ ...request, protectedPath: true }, options());
        await tick();
        const id = String(events.find((e) => e.event === "approval")?.data["id"]);
        try {
          conversation.answer(id, "always");
        } catch (error) {
          status = (error as ApiError).status;
        }
        conversation.answer(id, "deny");
        decision = await asking;
      }),
    );
    await conversation.runTurn("go", sink);
    expect(status).toBe(422);
    expect(decision).toBe("deny");
    expect(events.find((e) => e.event === "approval")?.data["choices"]).toEqual(["once", "deny"]);
  });

  it("denies when the policy's timeout withdraws the question, and when the browser leaves", async () => {
    const conversation = new Conversation(() => undefined);
    const first = sinkOf();
    const decisions: ApprovalDecision[] = [];
    conversation.attach(
      scriptedSession(async () => {
        const timeout = new AbortController();
        const asking = conversation.prompt(request, options(timeout.signal));
        timeout.abort(new Error("approvals.timeout passed"));
        decisions.push(await asking);
        const leaving = conversation.prompt(request, options());
        first.controller.abort();
        decisions.push(await leaving);
      }),
    );
    await conversation.runTurn("go", first.sink);
    expect(decisions).toEqual(["deny", "deny"]);
    const by = first.events.filter((e) => e.event === "approval_resolved").map((e) => e.data["by"]);
    expect(by).toEqual(["timeout", "stopped"]);
    // No turn streaming: nobody can be asked.
    expect(await conversation.prompt(request, options())).toBe("deny");
  });

  it("asks the clarify question in the stream; the reply reaches the tool, a closed page answers for nobody", async () => {
    const conversation = new Conversation(() => undefined);
    const first = sinkOf();
    const answers: string[] = [];
    conversation.attach(
      scriptedSession(async () => {
        const asking = conversation.clarify({ question: "Which bird?", choices: ["Pelican", "Heron"] });
        await tick();
        const asked = first.events.find((e) => e.event === "clarify");
        expect(asked?.data).toMatchObject({ question: "Which bird?", choices: ["Pelican", "Heron"] });
        expect(() => conversation.reply("other", "Heron")).toThrow(/no pending question/);
        conversation.reply(String(asked?.data["id"]), "Heron");
        answers.push(await asking);
        const again = conversation.clarify({ question: "And then?" });
        first.controller.abort();
        answers.push(await again);
      }),
    );
    await conversation.runTurn("go", first.sink);
    expect(answers).toEqual(["Heron", CLARIFY_UNANSWERED]);
    expect(await conversation.clarify({ question: "anyone?" })).toBe(CLARIFY_UNANSWERED);
  });

  it("redacts a secret split across two text pieces", async () => {
    // A value the process knows as a secret (no well-known shape: only the known-value rule catches it).
    const secret = "Zq9vXw2Lm4Np6Rt8Yb0Cd3Fg5Hj7Kk1";
    processRedactor().addSecret(secret, "TEST_SECRET");
    const conversation = new Conversation(() => undefined);
    const { sink, events } = sinkOf();
    conversation.attach(
      scriptedSession(async (emit) => {
        emit({ type: "text_delta", text: `key: ${secret.slice(0, 12)}` });
        emit({ type: "text_delta", text: `${secret.slice(12)} done` });
      }),
    );
    await conversation.runTurn("go", sink);
    const text = events
      .filter((e) => e.event === "text")
      .map((e) => e.data["text"])
      .join("");
    expect(text).toContain("done");
    expect(text).not.toContain(secret.slice(6, 18));
    expect(text).not.toContain(secret.slice(12));
  });
});
