/**
 * One scripted tool-calling conversation through the built CLI over each wire protocol the fake
 * server speaks: chat completions, Anthropic Messages and the Responses API. The stored transcripts
 * must be the same apart from provider-specific fields, and Anthropic requests must carry their
 * cache breakpoints on the system prompt and the last three messages.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/ai/types.js";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeBedrock, startFakeBedrock } from "../support/fake-llm-bedrock.js";

let llm: FakeLlm;
let bedrock: FakeBedrock;
beforeAll(async () => {
  llm = await startFakeLlm();
  bedrock = await startFakeBedrock();
});
afterAll(async () => {
  await llm.close();
  await bedrock.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

const MODES = [
  { apiMode: "chat_completions", path: "/v1/chat/completions" },
  { apiMode: "anthropic_messages", path: "/v1/messages" },
  { apiMode: "codex_responses", path: "/v1/responses" },
] as const;

function script(server: { enqueue: FakeLlm["enqueue"] } = llm): void {
  server.enqueue(
    reply()
      .reasoning("Write the file, then read it back.")
      .toolCall("write_file", { path: "notes.txt", content: "wire test\n" }, "call_write_1"),
    reply().toolCall("read_file", { path: "notes.txt" }, "call_read_1"),
    reply().text("The file says: wire test."),
  );
}

/** The transcript without the fields only one provider produces. */
function portable(messages: Message[]): Array<Record<string, unknown>> {
  return messages.map((m) => {
    const { reasoning_details: _d, codex_reasoning_items: _c, reasoning: _r, ...rest } = m;
    return rest;
  });
}

async function converse(apiMode: string): Promise<Message[]> {
  const h = tempHome();
  writeFileSync(
    join(h.home, "config.yaml"),
    `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\n  api_mode: ${apiMode}\nagent:\n  api_max_retries: 0\n`,
  );
  script();
  const result = await runHermes(["-q", "Write notes.txt and read it back"], h);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("The file says: wire test.");
  const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
  try {
    const [session] = store.listSessions();
    return store.conversation(session?.id ?? "");
  } finally {
    store.close();
  }
}

describe("the same conversation over every wire protocol", () => {
  it("stores identical transcripts apart from provider fields", async () => {
    const transcripts: Array<Array<Record<string, unknown>>> = [];
    for (const mode of MODES) {
      const before = llm.chatRequests.length;
      transcripts.push(portable(await converse(mode.apiMode)));
      const paths = llm.chatRequests.slice(before).map((r) => r.path);
      expect(paths).toEqual([mode.path, mode.path, mode.path]);
    }
    expect(transcripts[0]?.map((m) => m["role"])).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(transcripts[1]).toEqual(transcripts[0]);
    expect(transcripts[2]).toEqual(transcripts[0]);

    // Bedrock Converse, through the AWS SDK with SigV4-signed requests to its own fake.
    const h = tempHome();
    writeFileSync(
      join(h.home, "config.yaml"),
      `model:\n  provider: bedrock\n  base_url: ${bedrock.url}\n  default: us.anthropic.claude-sonnet-4-20250514-v1:0\nagent:\n  api_max_retries: 0\n`,
    );
    script(bedrock);
    const result = await runHermes(["-q", "Write notes.txt and read it back"], {
      ...h,
      env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret", AWS_REGION: "eu-west-1" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(bedrock.requests).toHaveLength(3);
    expect(String(bedrock.requests[0]?.headers["authorization"])).toContain(
      "/eu-west-1/bedrock/aws4_request",
    );
    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const [session] = store.listSessions();
      expect(portable(store.conversation(session?.id ?? ""))).toEqual(transcripts[0]);
    } finally {
      store.close();
    }
  });

  it("keeps provider reasoning for replay: Anthropic signatures and Responses items", async () => {
    const anthropic = await converse("anthropic_messages");
    const thinking = anthropic.find((m) => m.reasoning_details)?.reasoning_details?.[0] as Record<
      string,
      unknown
    >;
    expect(thinking?.["type"]).toBe("thinking");
    expect(typeof thinking?.["signature"]).toBe("string");
    // The signed block goes back to the provider on the next request.
    const second = llm.chatRequests.at(-2)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(second.messages)).toContain(String(thinking?.["signature"]));

    const responses = await converse("codex_responses");
    const item = responses.find((m) => m.codex_reasoning_items)?.codex_reasoning_items?.[0] as Record<
      string,
      unknown
    >;
    expect(item?.["type"]).toBe("reasoning");
    const next = llm.chatRequests.at(-2)?.body as { input: Array<Record<string, unknown>> };
    expect(
      next.input.some(
        (i) => i["type"] === "reasoning" && i["encrypted_content"] === item?.["encrypted_content"],
      ),
    ).toBe(true);
  });

  it("puts Anthropic cache breakpoints on the system prompt and the last three messages, with a stable system prompt", async () => {
    await converse("anthropic_messages");
    const bodies = llm.chatRequests.map(
      (r) =>
        r.body as {
          system: Array<{ text: string; cache_control?: unknown }>;
          messages: Array<{ role: string; content: Array<{ type: string; cache_control?: unknown }> }>;
        },
    );
    expect(bodies).toHaveLength(3);
    for (const body of bodies) {
      expect(body.system.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
      const marked = body.messages
        .map((m, i) => (m.content.some((b) => b.cache_control !== undefined) ? i : -1))
        .filter((i) => i >= 0);
      const expected = body.messages.map((_, i) => i).slice(-3);
      expect(marked).toEqual(expected);
      // The breakpoint sits on the last block of each of those messages.
      for (const i of marked) expect(body.messages[i]?.content.at(-1)?.cache_control).toBeDefined();
    }
    const systems = bodies.map((b) => JSON.stringify(b.system.map((s) => s.text)));
    expect(new Set(systems).size).toBe(1);
  });
});
