import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserNavigateTool, browserVisionTool } from "../../../../src/tools/browser/index.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../../support/fake-llm.js";
import {
  type BrowserCtx,
  browserConfig,
  browserContext,
  CHROMIUM,
  call,
  callError,
  NO_CHROMIUM_REASON,
  type Site,
  startSite,
} from "./helpers.js";

describe.skipIf(!CHROMIUM)(`browser_vision (${CHROMIUM ?? NO_CHROMIUM_REASON})`, () => {
  let site: Site;
  let llm: FakeLlm;
  let ctx: BrowserCtx;

  beforeAll(async () => {
    site = await startSite();
    llm = await startFakeLlm();
    const config = browserConfig();
    config["model"] = {
      ...(config["model"] as object),
      provider: "custom",
      base_url: llm.url,
      default: "main-model",
    };
    // Only the configured endpoint: no OpenRouter or Nous key from the environment may be tried.
    config["auxiliary"] = { vision: { provider: "main", model: "vision-model" } };
    ctx = browserContext({ config });
    await call(browserNavigateTool, { url: `${site.url}/form` }, ctx);
  });

  afterAll(async () => {
    await ctx?.runtime.dispose();
    await llm?.close();
    await site?.close();
  });

  it("sends an annotated screenshot and the question to the vision model and returns its answer", async () => {
    llm.enqueue(reply().text("The page shows a sign-up form; the button is @e12."));
    const result = await call(
      browserVisionTool,
      { question: "Where is the submit button?", annotate: true },
      ctx,
    );
    expect(result).toMatchObject({
      success: true,
      title: "Sign up",
      url: `${site.url}/form`,
      analysis: "The page shows a sign-up form; the button is @e12.",
    });
    expect(result.labels as number).toBeGreaterThanOrEqual(6);

    const body = llm.chatRequests[0]?.body as {
      model: string;
      messages: { role: string; content: { type: string; text?: string; image_url?: { url: string } }[] }[];
    };
    expect(body.model).toBe("vision-model");
    const parts = body.messages[0]?.content ?? [];
    expect(parts[0]?.text).toContain("Question: Where is the submit button?");
    expect(parts[0]?.text).toContain(`"Sign up" at ${site.url}/form`);
    expect(parts[1]?.image_url?.url).toMatch(/^data:image\/jpeg;base64,\/9j\//);

    const saved = readFileSync(String(result.screenshot_path));
    expect(saved.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(String(result.screenshot_path).startsWith(ctx.home)).toBe(true);
  });

  it("says the model could not answer and where the screenshot is when the call fails", async () => {
    llm.enqueue(httpError(400, '{"error":{"message":"model does not accept images"}}'));
    const message = await callError(browserVisionTool, { question: "What colour is the header?" }, ctx);
    expect(message).toMatch(/^The vision model could not answer: .*images/);
    expect(message).toMatch(/The screenshot was saved to .*\.jpg\.$/);
  });
});
