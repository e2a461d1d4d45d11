import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, sentMessages, startApiHarness } from "../../../support/api-server-harness.js";
import { reply } from "../../../support/fake-llm.js";

const CONVERSATIONS = 200;
let h: ApiHarness;

beforeAll(async () => {
  h = await startApiHarness({ maxConcurrentRuns: 20 });
  // Answer each request by its content: the token of its last user message, but only when the
  // history it carries belongs to the same conversation (a crossed history answers CROSSED).
  h.llm.respondWith((request) => {
    const messages = sentMessages(request.body).filter((m) => m.role !== "system");
    const last = messages.at(-1)?.content ?? "";
    const token = /token (\w+)/.exec(last)?.[1] ?? "MISSING";
    const historyOk =
      messages.length === 3 &&
      messages[0]?.content === `remember ${token}` &&
      messages[1]?.content === `remembered ${token}`;
    return reply().text(historyOk ? `answer for ${token}` : `CROSSED ${token}`);
  });
});
afterAll(async () => {
  await h.close();
});

describe("API server under load", () => {
  it(`keeps ${CONVERSATIONS} concurrent conversations apart: every reply carries its own token`, async () => {
    const tokens = Array.from({ length: CONVERSATIONS }, () => randomBytes(6).toString("hex"));
    const replies = await Promise.all(
      tokens.map(async (token, i) => {
        const messages = [
          { role: "user" as const, content: `remember ${token}` },
          { role: "assistant" as const, content: `remembered ${token}` },
          { role: "user" as const, content: `what was token ${token}?` },
        ];
        if (i % 2 === 0) {
          const done = await h.client.chat.completions.create({ model: "hermes-agent", messages });
          return done.choices[0]?.message.content ?? "";
        }
        const stream = await h.client.chat.completions.create({
          model: "hermes-agent",
          messages,
          stream: true,
        });
        let text = "";
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
        return text;
      }),
    );
    expect(replies).toEqual(tokens.map((token) => `answer for ${token}`));
    expect(h.llm.chatRequests).toHaveLength(CONVERSATIONS);
  });
});
