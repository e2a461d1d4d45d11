/**
 * Claude on Vertex AI through the built CLI: a one-shot with a tool call spoken over Anthropic's
 * Messages wire to the fake LLM's Vertex publisher paths (`…/publishers/anthropic/models/M:
 * streamRawPredict`), signed with the token the loopback Google token endpoint issued. The body
 * carries Vertex's `anthropic_version` and no `model`; the tool result goes back as Anthropic's
 * `tool_result` block; the key never reaches what the run stores.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import {
  type FakeGoogleToken,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../support/fake-google-token.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const PROJECT = "hermes-claude-e2e";
const MODEL = "claude-sonnet-4-5@20250929";
const PUBLISHER = `/v1/projects/${PROJECT}/locations/global/publishers/anthropic`;
const llm = useFakeLlm({ strictToolPairs: true });
const sa = serviceAccountFixture("vertex-claude-e2e");
let google: FakeGoogleToken;

beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa });
});
afterAll(async () => {
  await google.close();
});

function everything(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out += everything(path);
    else if (name !== ".env") out += readFileSync(path).toString("latin1");
  }
  return out;
}

describe("Claude on Vertex AI", () => {
  it("a one-shot with a tool call over streamRawPredict, Google's token as bearer", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: vertex\n  default: anthropic/${MODEL}\nvertex:\n  project_id: ${PROJECT}\nagent:\n  api_max_retries: 0\n`,
    );
    const key = join(cwd, "..", "claude-sa.json");
    writeFileSync(key, serviceAccountJson(sa, google.url), { mode: 0o600 });
    writeFileSync(
      join(home, ".env"),
      `VERTEX_CREDENTIALS_PATH=${key}\nHERMES_VERTEX_BASE_URL=${new URL(llm.url).origin}\n`,
      { mode: 0o600 },
    );
    llm.enqueue(
      reply().text("checking").toolCall("terminal", { command: "echo claude-on-vertex-tool-ran" }),
      reply().text("Claude on Vertex is done"),
    );
    const run = await runHermes(["-z", "run the tool"], { home, cwd });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("Claude on Vertex is done");
    expect(run.code).toBe(0);

    const token = google.issued.at(-1) ?? "";
    expect(token).toMatch(/^ya29\./);
    expect(llm.chatRequests).toHaveLength(2);
    for (const sent of llm.chatRequests) {
      expect(sent.path).toBe(`${PUBLISHER}/models/${MODEL}:streamRawPredict`);
      expect(sent.headers.authorization).toBe(`Bearer ${token}`);
      expect(sent.headers["x-api-key"]).toBeUndefined();
      const body = sent.body as Record<string, unknown>;
      expect(body["anthropic_version"]).toBe("vertex-2023-10-16");
      expect(body).not.toHaveProperty("model");
    }
    // The second request carries the tool's output as Anthropic's tool_result block.
    const second = llm.chatRequests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    const results = JSON.stringify(second.messages.at(-1)?.content);
    expect(results).toContain("tool_result");
    expect(results).toContain("claude-on-vertex-tool-ran");

    const stored = everything(home);
    expect(stored).toContain("Claude on Vertex is done");
    expect(stored).not.toContain(token);
    const keyLine = sa.privateKeyPem.split("\n")[3] ?? "";
    expect(keyLine.length).toBeGreaterThan(20);
    expect(stored).not.toContain(keyLine);
  });
});
