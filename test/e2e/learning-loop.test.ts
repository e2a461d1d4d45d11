/**
 * The learning loop through the built CLI and the Telegram gateway, against the fake LLM: a due
 * nudge starts a background review that saves to USER.md with the memory tool; the answer on
 * stdout is unchanged; the session that taught it keeps its frozen prompt while the next session's
 * prompt carries the new entry; the review is recorded as its own session (source `review`, parent
 * = the reviewed one); compression reviews the turns it drops; in a chat the review starts only
 * after the reply was sent.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { httpError, type RecordedRequest, reply, type ScriptedReply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const llm = useFakeLlm();

/** The system prompt of a recorded chat-completions request. */
function systemOf(request: RecordedRequest | undefined): string {
  const body = request?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  const content = body?.messages?.[0]?.content;
  return typeof content === "string" ? content : JSON.stringify(content ?? "");
}
function lastUserOf(request: RecordedRequest | undefined): string {
  const body = request?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  const content = body?.messages?.filter((m) => m.role === "user").at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content ?? "");
}
const isReview = (r: RecordedRequest) => systemOf(r).includes("learning reviewer");

/** Replies for the reviewer's requests, whatever order they arrive in; "Nothing to save." when none is left. */
let reviewReplies: ScriptedReply[] = [];
let onReviewRequest: (() => void) | undefined;
beforeEach(() => {
  reviewReplies = [];
  onReviewRequest = undefined;
  llm.respondWith((request) => {
    if (!isReview(request)) return undefined;
    onReviewRequest?.();
    return reviewReplies.shift() ?? reply().text("Nothing to save.");
  });
});

const mainRequests = () => llm.chatRequests.filter((r) => !isReview(r));
const reviewRequests = () => llm.chatRequests.filter(isReview);

describe("the learning loop from the CLI", () => {
  it("a due nudge saves to USER.md after a one-shot answer; the next session's prompt has it, this one's did not", async () => {
    const h = tempHome();
    const cfg = fakeProviderConfig(llm.url, "memory:\n  nudge_interval: 1\n");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(h.home, "config.yaml"), cfg);
    reviewReplies.push(
      reply().toolCall("memory", {
        action: "add",
        target: "user",
        content: "The user's name is Ada; metric units.",
      }),
      reply().text("Saved the user's name."),
    );
    llm.enqueue(reply().text("Hello Ada!"));
    const first = await runHermes(["-z", "I'm Ada and I use metric units."], { ...h, timeoutMs: 30_000 });
    expect(first.code, first.stderr).toBe(0);
    // -z: the answer and nothing else; the review's line is not printed by a one-shot run.
    expect(first.stdout).toBe("Hello Ada!\n");
    // The one-shot run waited for the review before exiting.
    expect(readFileSync(join(h.home, "memories", "USER.md"), "utf8")).toContain("The user's name is Ada");
    expect(reviewRequests()).toHaveLength(2);
    expect(lastUserOf(reviewRequests()[0])).toContain("[user] I'm Ada and I use metric units.");
    expect(systemOf(mainRequests()[0])).not.toContain("The user's name is Ada");

    llm.enqueue(reply().text("Hi again."));
    const second = await runHermes(["-q", "hello"], { ...h, timeoutMs: 30_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe("Hi again.");
    expect(systemOf(mainRequests()[1])).toContain("The user's name is Ada");

    // Recorded as their own sessions under the reviewed ones, and counted by insights.
    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const cli = store.listSessions({ source: "cli", limit: 10 });
      const reviews = store.listSessions({ source: "review", limit: 10 });
      expect(reviews).toHaveLength(2);
      expect(new Set(reviews.map((r) => r.parentSessionId))).toEqual(new Set(cli.map((c) => c.id)));
      expect(reviews.find((r) => r.parentSessionId === cli.at(-1)?.id)?.apiCallCount).toBe(2);
    } finally {
      store.close();
    }
    const insights = await runHermes(["insights", "--source", "review", "--json"], h);
    expect(insights.code, insights.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(insights.stdout))).toMatch(/"sessions":2/);
  }, 60_000);

  it("compression reviews the turns it drops once (memory.flush_min_turns)", async () => {
    const h = tempHome(
      fakeProviderConfig(llm.url, "memory:\n  nudge_interval: 0\n  flush_min_turns: 1\n").replace(
        "model:\n",
        "model:\n  context_length: 4000\n",
      ),
    );
    // An earlier conversation of six long exchanges, as earlier runs would have stored it.
    const store = openSqliteStore(join(h.home, "state.db"));
    const earlier = store.createSession({ source: "cli", model: "fake-model" });
    for (let i = 0; i < 6; i++) {
      store.appendMessages(earlier.id, [
        { role: "user", content: `Question ${i}: ${"details ".repeat(150)}` },
        { role: "assistant", content: `Answer ${i}: ${"findings ".repeat(150)}` },
      ]);
    }
    store.close();
    llm.enqueue(
      httpError(400, {
        error: { message: "maximum context length is 4096 tokens", code: "context_length_exceeded" },
      }),
      reply().text("## Active task\nQuestion 6.\n## Done\nAnswered questions 0-5."),
      reply().text("Here is answer 6."),
    );
    const r = await runHermes(["-c", "-q", "Question 6?"], { ...h, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("Here is answer 6.");
    expect(reviewRequests()).toHaveLength(1);
    const text = lastUserOf(reviewRequests()[0]);
    expect(text).toContain("[user] Question 2:");
    expect(text).toContain("[user] Question 6?");
    expect(systemOf(reviewRequests()[0])).toContain("compressed out of the agent's context");
    const after = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      expect(after.listSessions({ source: "review" }).map((s) => s.parentSessionId)).toEqual([earlier.id]);
    } finally {
      after.close();
    }
  }, 60_000);
});

describe("the learning loop in a chat (Telegram gateway)", () => {
  const OWNER = 1001;
  let tg: TelegramEmulator;
  let gateway: GatewayProcess;
  let h: { home: string; cwd: string };

  beforeAll(async () => {
    tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
    h = tempHome(
      fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\nmemory:\n  nudge_interval: 1\n'),
    );
    gateway = await startGatewayProcess(h, {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await tg?.stop();
  });

  it("reviews after the reply was sent; the chat's next session knows what was saved", async () => {
    const owner = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
    let replySentFirst: boolean | undefined;
    onReviewRequest = () => {
      replySentFirst ??= tg.botMessages(OWNER).some((m) => (m.text ?? "").includes("Hello Ada"));
    };
    reviewReplies.push(
      reply().toolCall("memory", { action: "add", target: "user", content: "Goes by Ada on Telegram." }),
      reply().text("Saved."),
    );
    llm.enqueue(reply().text("Hello Ada!"));
    const next = tg.nextBotMessage(OWNER);
    await owner.sendText("Call me Ada, please.");
    expect((await next(20_000)).text).toBe("Hello Ada!");
    const userFile = join(h.home, "memories", "USER.md");
    await tg.waitFor(() => existsSync(userFile) && readFileSync(userFile, "utf8").includes("Goes by Ada"), {
      what: "the review's USER.md entry",
      timeoutMs: 20_000,
    });
    expect(replySentFirst).toBe(true);
    expect(systemOf(mainRequests()[0])).not.toContain("Goes by Ada");

    const ack = tg.nextBotMessage(OWNER);
    await owner.sendText("/new");
    await ack(20_000);
    llm.enqueue(reply().text("Hi Ada."));
    const answer = tg.nextBotMessage(OWNER);
    await owner.sendText("hi");
    expect((await answer(20_000)).text).toBe("Hi Ada.");
    expect(systemOf(mainRequests().at(-1))).toContain("Goes by Ada");
  }, 60_000);
});
