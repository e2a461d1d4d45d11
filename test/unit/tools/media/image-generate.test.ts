import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { imageGenerateTool, resolveImageBackend } from "../../../../src/tools/media/image-generate.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { type HttpFake, jsonBody, sendJson, startHttpFake, TINY_PNG } from "./http-fake.js";

const NO_KEYS = {
  FAL_KEY: "",
  FAL_API_URL: "",
  FAL_IMAGE_MODEL: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
  OPENAI_IMAGE_MODEL: "",
  OPENAI_COMPATIBLE_IMAGE_BASE_URL: "",
  OPENAI_COMPATIBLE_IMAGE_API_KEY: "",
  OPENAI_COMPATIBLE_IMAGE_MODEL: "",
};

type Result = {
  success: boolean;
  image: string;
  path: string | null;
  url: string | null;
  model: string;
  warning?: string;
};

let server: HttpFake;

beforeAll(async () => {
  server = await startHttpFake((req, res, base) => {
    if (req.method === "GET" && req.path === "/files/out.png") {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(TINY_PNG);
      return;
    }
    const auth = req.headers.authorization ?? "";
    if (auth.endsWith("revoked")) return sendJson(res, 401, { detail: "Invalid API key" });
    if (req.method === "POST" && req.path.startsWith("/fal-ai/")) {
      return sendJson(res, 200, {
        images: [{ url: `${base}/files/out.png`, width: 1024, height: 1024 }],
        seed: 7,
      });
    }
    if (req.method === "POST" && req.path === "/v1/images/generations") {
      const body = jsonBody(req);
      if (body["model"] === "gpt-image-2") {
        return sendJson(res, 200, {
          created: 1,
          data: [{ b64_json: TINY_PNG.toString("base64"), revised_prompt: "a tidy red dot" }],
        });
      }
      return sendJson(res, 200, { created: 1, data: [{ url: `${base}/files/out.png` }] });
    }
    sendJson(res, 404, { detail: "no route" });
  });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
});

function ctxFor(extra: Record<string, unknown>, env: Record<string, string>) {
  const config = { ...defaultConfig(), ...extra } as unknown as Record<string, unknown>;
  return makeToolContext({ config, env: { PATH: process.env.PATH, ...NO_KEYS, ...env } });
}

const allowPrivate = { security: { allow_private_urls: true, redact_secrets: true } };

describe("image_generate with FAL", () => {
  it("posts the prompt with the model's size preset and saves the image in the home's cache", async () => {
    const ctx = ctxFor(allowPrivate, { FAL_KEY: "fal-test", FAL_API_URL: server.url });
    const result = (await imageGenerateTool.handler(
      { prompt: "a red dot", aspect_ratio: "square" },
      ctx,
    )) as Result;

    const post = server.requests[0];
    expect(post?.path).toBe("/fal-ai/flux-2/klein/9b");
    expect(post?.headers.authorization).toBe("Key fal-test");
    expect(jsonBody(post)).toEqual({
      prompt: "a red dot",
      image_size: "square_hd",
      num_inference_steps: 4,
      output_format: "png",
      enable_safety_checker: false,
    });
    expect(result.url).toBe(`${server.url}/files/out.png`);
    expect(result.path?.startsWith(join(ctx.home, "cache", "images"))).toBe(true);
    expect(result.image).toBe(result.path);
    expect(readFileSync(result.path ?? "")).toEqual(TINY_PNG);
  });

  it("uses the configured model's own size field (aspect ratio) and defaults to landscape", async () => {
    const ctx = ctxFor(
      { ...allowPrivate, image_gen: { model: "fal-ai/nano-banana-pro" } },
      { FAL_KEY: "fal-test", FAL_API_URL: server.url },
    );
    const result = (await imageGenerateTool.handler({ prompt: "a skyline" }, ctx)) as Result;
    expect(server.requests[0]?.path).toBe("/fal-ai/nano-banana-pro");
    expect(jsonBody(server.requests[0])).toMatchObject({ prompt: "a skyline", aspect_ratio: "16:9" });
    expect(result.model).toBe("fal-ai/nano-banana-pro");
  });

  it("keeps the URL when the download is refused as a private address", async () => {
    const ctx = ctxFor({}, { FAL_KEY: "fal-test", FAL_API_URL: server.url });
    const result = (await imageGenerateTool.handler({ prompt: "a red dot" }, ctx)) as Result;
    expect(result.path).toBeNull();
    expect(result.image).toBe(`${server.url}/files/out.png`);
    expect(result.warning).toMatch(/allow_private_urls/);
    expect(server.requests.map((r) => r.path)).toEqual(["/fal-ai/flux-2/klein/9b"]);
  });

  it("reports a rejected key with the provider's message", async () => {
    const ctx = ctxFor({}, { FAL_KEY: "revoked", FAL_API_URL: server.url });
    await expect(imageGenerateTool.handler({ prompt: "x" }, ctx)).rejects.toThrow(
      /FAL rejected the API key \(HTTP 401\): Invalid API key/,
    );
  });
});

describe("image_generate with OpenAI-style endpoints", () => {
  it("saves a b64_json image from OpenAI's gpt-image-2 at the configured quality tier", async () => {
    const ctx = ctxFor(
      { image_gen: { provider: "openai", openai: { model: "gpt-image-2-high" } } },
      { OPENAI_API_KEY: "sk-img", OPENAI_BASE_URL: `${server.url}/v1` },
    );
    const result = (await imageGenerateTool.handler(
      { prompt: "a red dot", aspect_ratio: "portrait" },
      ctx,
    )) as Result & {
      revised_prompt: string;
    };

    const post = server.requests[0];
    expect(post?.headers.authorization).toBe("Bearer sk-img");
    expect(jsonBody(post)).toEqual({
      model: "gpt-image-2",
      quality: "high",
      prompt: "a red dot",
      n: 1,
      size: "1024x1536",
    });
    expect(result.url).toBeNull();
    expect(result.revised_prompt).toBe("a tidy red dot");
    expect(readFileSync(result.path ?? "")).toEqual(TINY_PNG);
  });

  it("downloads a url answer from an openai-compatible endpoint", async () => {
    const ctx = ctxFor(
      {
        ...allowPrivate,
        image_gen: {
          provider: "openai-compatible",
          openai_compatible: { base_url: `${server.url}/v1`, api_key: "local", model: "my-diffusion" },
        },
      },
      {},
    );
    const result = (await imageGenerateTool.handler({ prompt: "a cat" }, ctx)) as Result;

    expect(jsonBody(server.requests[0])).toEqual({
      model: "my-diffusion",
      prompt: "a cat",
      n: 1,
      size: "1536x1024",
    });
    expect(server.requests[0]?.headers.authorization).toBe("Bearer local");
    expect(result.model).toBe("my-diffusion");
    expect(readFileSync(result.path ?? "")).toEqual(TINY_PNG);
  });
});

describe("image_generate availability", () => {
  const config = (imageGen?: Record<string, unknown>) => ({ ...(imageGen ? { image_gen: imageGen } : {}) });

  it.each([
    ["no key at all", undefined, {}, false],
    ["FAL_KEY", undefined, { FAL_KEY: "k" }, true],
    ["an OpenAI key alone", undefined, { OPENAI_API_KEY: "k" }, false],
    ["provider openai with its key", { provider: "openai" }, { OPENAI_API_KEY: "k" }, true],
    ["provider openai without a key", { provider: "openai" }, {}, false],
    ["an unsupported provider", { provider: "xai" }, { FAL_KEY: "k" }, false],
  ])("%s", (_name, imageGen, env, offered) => {
    expect(imageGenerateTool.check?.({ env, config: config(imageGen) })).toBe(offered);
  });

  it("says what to configure", () => {
    expect(resolveImageBackend({}, {})).toMatchObject({ error: /FAL_KEY/ });
    expect(resolveImageBackend({ image_gen: { provider: "krea" } }, {})).toMatchObject({
      error: /"krea" is not supported by Hermes-TS/,
    });
  });
});
