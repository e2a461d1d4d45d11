/**
 * Compression through the built CLI: a context-overflow error compresses the conversation with a
 * summary from the model and retries, and the session continues as a child of the original one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

/** A home whose latest session holds six long exchanges, in a 4,000-token window. */
async function longSession(): Promise<{ home: string; cwd: string }> {
  const h = tempHome();
  writeFileSync(
    join(h.home, "config.yaml"),
    fakeProviderConfig(llm.url, "").replace("model:\n", "model:\n  context_length: 4000\n"),
  );
  for (let i = 0; i < 6; i++) {
    llm.enqueue(reply().text(`Answer ${i}: ${"findings ".repeat(150)}`));
    const r = await runHermes(
      [...(i > 0 ? ["-c"] : []), "-q", `Question ${i}: ${"details ".repeat(150)}`],
      h,
    );
    expect(r.code, r.stderr).toBe(0);
  }
  return h;
}

const overflow = () =>
  httpError(400, {
    error: {
      message: "This model's maximum context length is 4096 tokens.",
      code: "context_length_exceeded",
    },
  });

describe("context compression from the CLI", () => {
  it("a failing summary call keeps every turn and tells the user", async () => {
    const h = await longSession();
    llm.enqueue(
      overflow(),
      httpError(500, { error: { message: "summary backend down" } }),
      httpError(500, { error: { message: "summary backend still down" } }),
    );
    const last = await runHermes(["-c", "-q", "Question 6?"], { ...h, timeoutMs: 30_000 });
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/Context compression failed/);
    expect(last.stderr).toMatch(/no messages were removed/);
    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const sessions = store.listSessions();
      expect(sessions.filter((s) => s.parentSessionId !== null)).toHaveLength(0);
      const messages = store.conversation(sessions[0]?.id ?? "");
      // Twelve earlier messages and the new question: nothing dropped.
      expect(messages).toHaveLength(13);
      expect(messages.at(-1)).toMatchObject({ role: "user", content: "Question 6?" });
    } finally {
      store.close();
    }
  }, 60_000);

  it("a context-overflow error compresses, retries and continues in a child session", async () => {
    const h = await longSession();
    llm.enqueue(
      overflow(),
      reply().text("## Active task\nQuestion 6.\n## Done\nAnswered questions 0-5."),
      reply().text("Final answer."),
    );
    const last = await runHermes(["-c", "-q", "Question 6?"], h);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout).toContain("Final answer.");
    expect(last.stderr).toMatch(/Context compressed/);

    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const sessions = store.listSessions();
      const child = sessions.find((s) => s.parentSessionId !== null);
      expect(child).toBeDefined();
      const parent = store.getSession(child?.parentSessionId ?? "");
      expect(parent?.endReason).toBe("compression");
      expect(store.conversation(parent?.id ?? "").length).toBeGreaterThanOrEqual(13);
      expect(JSON.stringify(store.conversation(child?.id ?? ""))).toContain("Answered questions 0-5.");
    } finally {
      store.close();
    }
  });
});
