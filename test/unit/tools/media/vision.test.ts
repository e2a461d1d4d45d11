import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../../src/config/defaults.js";
import { imageSize } from "../../../../src/tools/media/image-info.js";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { visionAnalyzeTool } from "../../../../src/tools/media/vision.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../../support/fake-llm.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { type HttpFake, startHttpFake, TINY_PNG } from "./http-fake.js";

const hasFfmpeg = findBinary("ffmpeg", process.env) !== undefined;

/** Keys that would add hosted providers to the chain are blanked so only the fakes answer. */
const ISOLATED_ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  OPENROUTER_API_KEY: "",
  NOUS_API_KEY: "",
  ANTHROPIC_API_KEY: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
};

let llm: FakeLlm;

beforeEach(async () => {
  llm = await startFakeLlm();
});

afterEach(async () => {
  await llm.close();
});

function configWith(
  model: Partial<HermesConfig["model"]>,
  extra: Record<string, unknown> = {},
): HermesConfig {
  const config = defaultConfig();
  return { ...config, model: { ...config.model, ...model }, ...extra };
}

function contextFor(config: HermesConfig) {
  return makeToolContext({ config: config as unknown as Record<string, unknown>, env: ISOLATED_ENV });
}

const openAiMain = () =>
  configWith({ provider: "custom", base_url: llm.url, api_key: "sk-test", default: "vision-model" });
const anthropicMain = () =>
  configWith({
    provider: "anthropic",
    base_url: llm.url,
    api_key: "sk-ant-test",
    default: "claude-sonnet-4-5",
  });

type Part = Record<string, unknown>;
const firstUserParts = (i = 0): Part[] => {
  const body = llm.chatRequests[i]?.body as { messages: { role: string; content: Part[] }[] };
  const user = body.messages.find((m) => m.role === "user");
  return user?.content ?? [];
};

describe("vision_analyze request bodies", () => {
  it("sends a chat-completions image_url part with a base64 data URL and returns the answer", async () => {
    const ctx = contextFor(openAiMain());
    const file = join(ctx.cwd, "dot.png");
    writeFileSync(file, TINY_PNG);
    llm.enqueue(reply().text("A single red pixel."));

    const result = (await visionAnalyzeTool.handler(
      { image_url: "dot.png", question: "What colour?" },
      ctx,
    )) as {
      success: boolean;
      analysis: string;
      model: string;
    };

    expect(result).toMatchObject({ success: true, analysis: "A single red pixel.", model: "vision-model" });
    expect(llm.chatRequests[0]?.path).toBe("/v1/chat/completions");
    expect((llm.chatRequests[0]?.body as { model?: string } | undefined)?.model).toBe("vision-model");
    const parts = firstUserParts();
    expect(parts[0]).toMatchObject({ type: "text" });
    expect(String(parts[0]?.["text"])).toContain("What colour?");
    expect(parts[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${TINY_PNG.toString("base64")}` },
    });
  });

  it("sends an Anthropic base64 image block to the Messages API", async () => {
    const ctx = contextFor(anthropicMain());
    writeFileSync(join(ctx.cwd, "dot.png"), TINY_PNG);
    llm.enqueue(reply().text("Red."));

    const result = (await visionAnalyzeTool.handler({ image_url: "dot.png", question: "Colour?" }, ctx)) as {
      analysis: string;
    };

    expect(result.analysis).toBe("Red.");
    expect(llm.chatRequests[0]?.path).toBe("/v1/messages");
    // The transport may add a cache_control marker; the image block itself is what matters.
    expect(firstUserParts().find((p) => p["type"] === "image")).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: TINY_PNG.toString("base64") },
    });
  });

  it("uses auxiliary.vision instead of the main model when configured", async () => {
    const aux = await startFakeLlm();
    try {
      const config = configWith(
        { provider: "anthropic", base_url: llm.url, api_key: "sk-ant-test", default: "claude-sonnet-4-5" },
        { auxiliary: { vision: { base_url: aux.url, model: "aux-vision", api_key: "aux-key" } } },
      );
      const ctx = contextFor(config);
      writeFileSync(join(ctx.cwd, "dot.png"), TINY_PNG);
      aux.enqueue(reply().text("From the auxiliary model."));

      const result = (await visionAnalyzeTool.handler({ image_url: "dot.png", question: "?" }, ctx)) as {
        analysis: string;
        model: string;
      };

      expect(result).toMatchObject({ analysis: "From the auxiliary model.", model: "aux-vision" });
      expect(llm.chatRequests).toHaveLength(0);
      expect(aux.chatRequests[0]?.headers.authorization).toBe("Bearer aux-key");
      expect((aux.chatRequests[0]?.body as { model?: string } | undefined)?.model).toBe("aux-vision");
    } finally {
      await aux.close();
    }
  });

  it("explains how to pick a vision model when the provider refuses images", async () => {
    const ctx = contextFor(openAiMain());
    writeFileSync(join(ctx.cwd, "dot.png"), TINY_PNG);
    llm.enqueue(
      httpError(400, {
        error: { message: "This model does not support image input", type: "invalid_request_error" },
      }),
    );

    await expect(visionAnalyzeTool.handler({ image_url: "dot.png", question: "?" }, ctx)).rejects.toThrow(
      /does not support image input.*auxiliary\.vision/,
    );
  });
});

describe("vision_analyze image sources", () => {
  let server: HttpFake;
  beforeEach(async () => {
    server = await startHttpFake((_req, res) => {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(TINY_PNG);
    });
  });
  afterEach(async () => {
    await server.close();
  });

  it("downloads a URL image when private URLs are allowed", async () => {
    const ctx = contextFor({ ...openAiMain(), security: { allow_private_urls: true, redact_secrets: true } });
    llm.enqueue(reply().text("Downloaded and seen."));

    const result = (await visionAnalyzeTool.handler(
      { image_url: `${server.url}/pic`, question: "?" },
      ctx,
    )) as {
      analysis: string;
    };

    expect(result.analysis).toBe("Downloaded and seen.");
    expect(server.requests[0]?.path).toBe("/pic");
    expect(firstUserParts()[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${TINY_PNG.toString("base64")}` },
    });
  });

  it("refuses a loopback URL by default and never calls the model", async () => {
    const ctx = contextFor(openAiMain());

    await expect(
      visionAnalyzeTool.handler({ image_url: `${server.url}/pic`, question: "?" }, ctx),
    ).rejects.toThrow(/allow_private_urls/);
    expect(server.requests).toHaveLength(0);
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("accepts a data: URL", async () => {
    const ctx = contextFor(openAiMain());
    llm.enqueue(reply().text("ok"));
    await visionAnalyzeTool.handler(
      { image_url: `data:image/png;base64,${TINY_PNG.toString("base64")}`, question: "?" },
      ctx,
    );
    expect((firstUserParts()[1] as { image_url: { url: string } }).image_url.url).toBe(
      `data:image/png;base64,${TINY_PNG.toString("base64")}`,
    );
  });

  it("refuses a file that is not an image, saying what it is", async () => {
    const ctx = contextFor(openAiMain());
    writeFileSync(join(ctx.cwd, "notes.png"), "just some text pretending to be a picture\n");

    await expect(visionAnalyzeTool.handler({ image_url: "notes.png", question: "?" }, ctx)).rejects.toThrow(
      /notes\.png is a text file, not an image/,
    );
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("names a data: URL that holds no image without echoing it back", async () => {
    const ctx = contextFor(openAiMain());
    const error = await Promise.resolve(
      visionAnalyzeTool.handler({ image_url: "data:text/plain,hello%20there", question: "?" }, ctx),
    ).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      "The data: URL is a text file, not an image this tool reads (PNG, JPEG, GIF or WebP).",
    );
  });

  it("reports a missing file clearly", async () => {
    const ctx = contextFor(openAiMain());
    await expect(visionAnalyzeTool.handler({ image_url: "nope.png", question: "?" }, ctx)).rejects.toThrow(
      /No such file: .*nope\.png/,
    );
  });
});

describe.skipIf(!hasFfmpeg)("vision_analyze shrinking (ffmpeg)", () => {
  const sentJpeg = (): Buffer => {
    const url = (firstUserParts()[1] as { image_url: { url: string } }).image_url.url;
    expect(url.startsWith("data:image/jpeg;base64,")).toBe(true);
    return Buffer.from(url.slice("data:image/jpeg;base64,".length), "base64");
  };

  it("scales a 9000x9000 PNG below the 8000 px side limit and re-encodes it as JPEG", async () => {
    const ctx = contextFor(openAiMain());
    const big = join(ctx.cwd, "big.png");
    execFileSync("ffmpeg", [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "color=c=red:s=9000x9000",
      "-frames:v",
      "1",
      big,
    ]);
    llm.enqueue(reply().text("A red square."));

    const result = (await visionAnalyzeTool.handler({ image_url: big, question: "?" }, ctx)) as {
      analysis: string;
      scale_note: string;
    };

    const size = imageSize(sentJpeg(), "jpeg");
    expect(size).toBeDefined();
    expect(Math.max(size?.width ?? 0, size?.height ?? 0)).toBeLessThanOrEqual(8000);
    expect(result.scale_note).toMatch(/downscaled from 9000x9000/);
    expect(result.analysis).toContain("A red square.");
  }, 60_000);

  it("shrinks an image over Anthropic's 5 MB limit", async () => {
    const ctx = contextFor(anthropicMain());
    const noisy = join(ctx.cwd, "noise.png");
    // Random pixels do not compress: about 7.7 MB of PNG.
    const made = spawnSync(
      "ffmpeg",
      [
        "-v",
        "error",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        "1600x1600",
        "-i",
        "-",
        "-frames:v",
        "1",
        noisy,
      ],
      { input: randomBytes(1600 * 1600 * 3) },
    );
    expect(made.status).toBe(0);
    llm.enqueue(reply().text("Noise."));

    await visionAnalyzeTool.handler({ image_url: noisy, question: "?" }, ctx);

    const image = firstUserParts().find((p) => p["type"] === "image") as {
      source: { media_type: string; data: string };
    };
    expect(image.source.media_type).toBe("image/jpeg");
    expect(image.source.data.length).toBeLessThanOrEqual(5 * 1024 * 1024);
  }, 60_000);
});

describe("vision_analyze availability", () => {
  it("is offered when a main model resolves and hidden when nothing is configured", () => {
    const env = { PATH: process.env.PATH };
    expect(
      visionAnalyzeTool.check?.({ env, config: openAiMain() as unknown as Record<string, unknown> }),
    ).toBe(true);
    expect(
      visionAnalyzeTool.check?.({ env, config: defaultConfig() as unknown as Record<string, unknown> }),
    ).toBe(false);
  });
});
