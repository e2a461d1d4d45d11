/**
 * `--image PATH` on a one-shot run, through the built CLI: the image reaches each wire in that
 * wire's own image format (chat completions `image_url`, Anthropic `image` with a base64 source,
 * Responses `input_image`, Bedrock Converse `image` bytes) and is stored with the session.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { type FakeBedrock, startFakeBedrock } from "../support/fake-llm-bedrock.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { PNG_1X1, PNG_1X1_URL } from "../support/images.js";

const llm = useFakeLlm();
let bedrock: FakeBedrock;
beforeAll(async () => {
  bedrock = await startFakeBedrock();
});
afterAll(async () => {
  await bedrock.close();
});

const B64 = PNG_1X1.toString("base64");

function home(apiMode: string) {
  const h = tempHome(
    `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\n  api_mode: ${apiMode}\nagent:\n  api_max_retries: 0\n`,
  );
  writeFileSync(join(h.cwd, "shot.png"), PNG_1X1);
  return h;
}

type Body = Record<string, unknown> & {
  messages?: Array<{ role: string; content: unknown }>;
  input?: unknown[];
};

describe("--image on a one-shot run", () => {
  it.each([
    [
      "chat_completions",
      (body: Body) => body.messages?.at(-1)?.content,
      [
        { type: "text", text: "What is in the picture?" },
        { type: "image_url", image_url: { url: PNG_1X1_URL } },
      ],
    ],
    [
      "anthropic_messages",
      (body: Body) => body.messages?.at(-1)?.content,
      [
        { type: "text", text: "What is in the picture?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: B64 } },
      ],
    ],
    [
      "codex_responses",
      (body: Body) => (body.input?.at(-1) as { content?: unknown } | undefined)?.content,
      [
        { type: "input_text", text: "What is in the picture?" },
        { type: "input_image", image_url: PNG_1X1_URL, detail: "auto" },
      ],
    ],
  ])(
    "sends the image in %s's own format and stores it with the session",
    async (apiMode, content, expected) => {
      const h = home(apiMode);
      llm.enqueue(reply().text("A single pixel."));
      const result = await runHermes(["-q", "What is in the picture?", "--image", "shot.png"], h);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("A single pixel.");
      const sent = content(llm.chatRequests.at(-1)?.body as Body) as Array<Record<string, unknown>>;
      expect(sent).toEqual(expected.map((part) => expect.objectContaining(part)));

      const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
      try {
        const [session] = store.listSessions();
        const user = store.conversation(session?.id ?? "").find((m) => m.role === "user");
        expect(user?.content).toEqual([
          { type: "text", text: "What is in the picture?" },
          { type: "image_url", image_url: { url: PNG_1X1_URL } },
        ]);
      } finally {
        store.close();
      }
    },
  );

  it("sends the image as Bedrock Converse image bytes", async () => {
    const h = tempHome(
      `model:\n  provider: bedrock\n  base_url: ${bedrock.url}\n  default: us.anthropic.claude-sonnet-4-20250514-v1:0\nagent:\n  api_max_retries: 0\n`,
    );
    writeFileSync(join(h.cwd, "shot.png"), PNG_1X1);
    bedrock.enqueue(reply().text("A single pixel."));
    const result = await runHermes(["-q", "What is in the picture?", "--image", "shot.png"], {
      ...h,
      env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret", AWS_REGION: "eu-west-1" },
    });
    expect(result.code, result.stderr).toBe(0);
    const body = bedrock.requests.at(-1)?.body as { messages: Array<{ content: unknown[] }> };
    // A cache point may follow the blocks (Claude models on Bedrock).
    expect(body.messages.at(-1)?.content.slice(0, 2)).toEqual([
      { text: "What is in the picture?" },
      { image: { format: "png", source: { bytes: B64 } } },
    ]);
  });

  it("ends at once with exit 2 and the reason when the file is not an image", async () => {
    const h = home("chat_completions");
    writeFileSync(join(h.cwd, "notes.txt"), "just text\n");
    const before = llm.chatRequests.length;
    const notImage = await runHermes(["-q", "look", "--image", "notes.txt"], h);
    expect(notImage.code).toBe(2);
    expect(notImage.stderr).toMatch(
      /--image: .*notes\.txt is a text file, not an image \(PNG, JPEG, GIF or WebP\)/,
    );
    const missing = await runHermes(["-z", "look", "--image", "gone.png"], h);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--image: No such file: .*gone\.png/);
    expect(llm.chatRequests.length).toBe(before);
  });
});
