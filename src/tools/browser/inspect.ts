/** The browser tools that read the page without acting on it: get_images, console, vision. */
import { Type } from "@sinclair/typebox";
import type { Page } from "playwright-core";
import { defineTool } from "../types.js";
import consoleDescription from "./browser-console.md";
import imagesDescription from "./browser-get-images.md";
import visionDescription from "./browser-vision.md";
import { describeBlocked } from "./guard.js";
import { firstLine, isTimeout, joinNotes, pageInfo, seconds } from "./page-ops.js";
import { elementMarkup, listImages, type PageImage, stringify, valueType } from "./page-scripts.js";
import { withBrowser } from "./session.js";
import { browserAvailable } from "./tools.js";
import { askVisionModel, saveScreenshot, takeScreenshot, visionMessages } from "./vision.js";

const TOOLSET = "browser";
const MAX_IMAGES = 100;
const MAX_SRC_CHARS = 300;
const MAX_RESULT_CHARS = 20_000;

export const browserGetImagesTool = defineTool({
  name: "browser_get_images",
  toolset: TOOLSET,
  description: imagesDescription,
  parameters: Type.Object({}),
  emoji: "🖼️",
  check: browserAvailable,
  parallelSafe: false,
  handler: (_args, ctx) =>
    withBrowser(ctx, async (session) => {
      const info = await pageInfo(session);
      const all = await session.page.evaluate(listImages, MAX_SRC_CHARS);
      const images: PageImage[] = all.filter((i) => i.src !== "").slice(0, MAX_IMAGES);
      const note =
        all.length > MAX_IMAGES
          ? `The page has ${all.length} images; the first ${MAX_IMAGES} are listed.`
          : undefined;
      return {
        success: true,
        url: info.url,
        title: info.title,
        images,
        count: images.length,
        ...(note ? { note } : {}),
      };
    }),
});

/** `JSON.stringify`-able form of an evaluation result, and its type. */
async function evaluate(
  page: Page,
  expression: string,
  timeoutMs: number,
): Promise<{ result: unknown; result_type: string }> {
  const work = (async () => {
    const handle = await page.evaluateHandle(expression);
    try {
      const type = await handle.evaluate(valueType);
      let result: unknown;
      try {
        result = await handle.jsonValue();
      } catch {
        result = await handle.evaluate(stringify);
      }
      if (type === "object" && typeof result === "string" && result.startsWith("ref: <")) {
        // A DOM node: its markup says more than Playwright's placeholder.
        result = await handle.evaluate(elementMarkup);
      }
      return { result, result_type: type };
    } finally {
      await handle.dispose().catch(() => undefined);
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The expression did not finish within ${seconds(timeoutMs)}.`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function clipResult(value: unknown): { value: unknown; note?: string } {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined || text.length <= MAX_RESULT_CHARS) return { value };
  return {
    value: `${text.slice(0, MAX_RESULT_CHARS)}…`,
    note: `The result was ${text.length.toLocaleString("en-US")} characters; the first ${MAX_RESULT_CHARS.toLocaleString("en-US")} are shown.`,
  };
}

export const browserConsoleTool = defineTool({
  name: "browser_console",
  toolset: TOOLSET,
  description: consoleDescription,
  parameters: Type.Object({
    clear: Type.Optional(
      Type.Boolean({ description: "Empty the message and error lists after reading them." }),
    ),
    expression: Type.Optional(Type.String({ description: "JavaScript to evaluate in the page." })),
  }),
  emoji: "🖥️",
  check: browserAvailable,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      if (args.expression !== undefined) {
        if (args.expression.trim() === "")
          throw new Error("expression is empty: pass JavaScript to evaluate.");
        let evaluated: { result: unknown; result_type: string };
        try {
          evaluated = await evaluate(session.page, args.expression, session.settings.actionTimeoutMs);
        } catch (error) {
          const blocked = session.takeBlocked()[0];
          if (blocked) throw new Error(describeBlocked(blocked));
          throw new Error(`The expression failed: ${isTimeout(error) ? "timed out" : firstLine(error)}`);
        }
        const info = await pageInfo(session);
        const clipped = clipResult(evaluated.result);
        const note = joinNotes(clipped.note, ...session.takeBlocked().map(describeBlocked));
        return {
          success: true,
          url: info.url,
          title: info.title,
          result: clipped.value ?? null,
          result_type: evaluated.result_type,
          ...(note ? { note } : {}),
        };
      }
      const info = await pageInfo(session);
      const messages = session.consoleMessages.map((m) => ({ type: m.type, text: m.text }));
      const errors = session.pageErrors.map((e) => ({ message: e.message }));
      if (args.clear) {
        session.consoleMessages.length = 0;
        session.pageErrors.length = 0;
      }
      return {
        success: true,
        url: info.url,
        title: info.title,
        console_messages: messages,
        js_errors: errors,
        total_messages: messages.length,
        total_errors: errors.length,
      };
    }),
});

export const browserVisionTool = defineTool({
  name: "browser_vision",
  toolset: TOOLSET,
  description: visionDescription,
  parameters: Type.Object({
    question: Type.String({ description: "What to find out from the screenshot." }),
    annotate: Type.Optional(
      Type.Boolean({
        description: "Label elements with their @eN first.",
      }),
    ),
  }),
  emoji: "👁️",
  check: browserAvailable,
  handler: async (args, ctx) => {
    const captured = await withBrowser(ctx, async (session) => {
      const info = await pageInfo(session);
      const shot = await takeScreenshot(session, args.annotate === true);
      return { info, shot };
    });
    const path = await saveScreenshot(ctx.home, captured.shot).catch(() => undefined);
    let answer: { text: string; model: string };
    try {
      answer = await askVisionModel(ctx, visionMessages(args.question, captured.info, captured.shot));
    } catch (error) {
      const saved = path ? ` The screenshot was saved to ${path}.` : "";
      throw new Error(`The vision model could not answer: ${firstLine(error)}${saved}`);
    }
    return {
      success: true,
      url: captured.info.url,
      title: captured.info.title,
      analysis: answer.text,
      ...(path ? { screenshot_path: path } : {}),
      ...(captured.shot.labels > 0 ? { labels: captured.shot.labels } : {}),
    };
  },
});
