/**
 * browser_vision's two halves: a screenshot of the visible part of the page (optionally with the
 * snapshot's `@eN` labels drawn over the elements) and the question put to the auxiliary vision
 * model, the screenshot attached as an OpenAI-style `image_url` data-URL content part.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AuxiliaryCompleteOptions,
  auxiliaryComplete,
  resolveAuxiliaryChain,
} from "../../ai/auxiliary.js";
import { NoProviderError, resolveRuntime } from "../../ai/resolve.js";
import type { Message } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import { keyEnv } from "../key-env.js";
import type { ToolContext } from "../types.js";
import type { PageInfo } from "./page-ops.js";
import { drawLabels, type LabelBox, removeLabels } from "./page-scripts.js";
import type { BrowserSession } from "./session.js";
import { type AriaNode, isReferenced, readAriaTree } from "./snapshot.js";

const OVERLAY_ID = "__hermes_ref_overlay__";
const MAX_LABELS = 300;

export interface Screenshot {
  data: Buffer;
  mime: "image/jpeg";
  /** Labels drawn, when annotated. */
  labels: number;
}

/** Referenced elements with their viewport boxes; frame contents are offset by their frame's box. */
function collectLabels(
  nodes: readonly AriaNode[],
  offset = { x: 0, y: 0 },
  out: LabelBox[] = [],
): LabelBox[] {
  for (const node of nodes) {
    if (typeof node === "string") continue;
    const box = node.box;
    if (box && node.ref && isReferenced(node) && box.width > 0 && box.height > 0) {
      out.push({
        ref: node.ref,
        x: box.x + offset.x,
        y: box.y + offset.y,
        width: box.width,
        height: box.height,
      });
    }
    const inner = node.role === "iframe" && box ? { x: offset.x + box.x, y: offset.y + box.y } : offset;
    collectLabels(node.children ?? [], inner, out);
  }
  return out;
}

/** A JPEG of the viewport; with `annotate`, each referenced element is outlined and labelled. */
export async function takeScreenshot(session: BrowserSession, annotate: boolean): Promise<Screenshot> {
  const page = session.page;
  const timeout = session.settings.actionTimeoutMs;
  let labels: LabelBox[] = [];
  if (annotate) {
    const tree = await readAriaTree(page, { timeoutMs: timeout, boxes: true });
    const viewport = page.viewportSize() ?? { width: 1280, height: 800 };
    labels = collectLabels(tree)
      .filter((l) => l.x + l.width > 0 && l.y + l.height > 0 && l.x < viewport.width && l.y < viewport.height)
      .slice(0, MAX_LABELS);
    await page.evaluate(drawLabels, { id: OVERLAY_ID, items: labels });
  }
  try {
    const data = await page.screenshot({ type: "jpeg", quality: 75, timeout });
    return { data, mime: "image/jpeg", labels: labels.length };
  } finally {
    if (annotate) {
      await page.evaluate(removeLabels, OVERLAY_ID).catch(() => undefined);
    }
  }
}

/** Saves the screenshot under `<home>/cache/screenshots/` and returns its path. */
export async function saveScreenshot(home: string, shot: Screenshot): Promise<string> {
  const dir = join(home, "cache", "screenshots");
  await mkdir(dir, { recursive: true });
  const path = join(dir, `browser_${new Date().toISOString().replace(/[:.]/g, "-")}.jpg`);
  await writeFile(path, shot.data);
  return path;
}

/** The question and screenshot as one user message. */
export function visionMessages(question: string, info: PageInfo, shot: Screenshot): Message[] {
  const lines = [
    `This is a screenshot of the visible part of a web page: "${info.title}" at ${info.url}.`,
    shot.labels > 0
      ? "Red boxes labelled like @e5 mark elements the agent can act on; name the labels of the elements that matter for your answer."
      : undefined,
    "Answer the question from what the screenshot shows; say so when the answer is not visible.",
    "",
    `Question: ${question}`,
  ].filter((l): l is string => l !== undefined);
  return [
    {
      role: "user",
      content: [
        { type: "text", text: lines.join("\n") },
        { type: "image_url", image_url: { url: `data:${shot.mime};base64,${shot.data.toString("base64")}` } },
      ],
    },
  ];
}

/**
 * Asks the auxiliary `vision` model (`auxiliary.vision` in config.yaml, else the auto chain, else
 * the main model), with the agent's provider keys (`keyEnv`).
 */
export async function askVisionModel(
  ctx: Pick<ToolContext, "config" | "env" | "home" | "secrets" | "signal">,
  messages: Message[],
  options: Pick<AuxiliaryCompleteOptions, "transportFor"> = {},
): Promise<{ text: string; model: string }> {
  const config = ctx.config as unknown as HermesConfig;
  const env = keyEnv(ctx);
  let main: ReturnType<typeof resolveRuntime>;
  try {
    main = resolveRuntime({ flags: {}, config, env, home: ctx.home });
  } catch (error) {
    if (error instanceof NoProviderError) {
      throw new Error(
        `browser_vision needs a vision-capable model and none is configured: ${error.message.split("\n")[0]} Set auxiliary.vision (provider, model) or model.* in config.yaml.`,
      );
    }
    throw error;
  }
  const chain = resolveAuxiliaryChain("vision", { config, env, main, home: ctx.home });
  const result = await auxiliaryComplete(chain, messages, {
    signal: ctx.signal,
    maxTokens: 2000,
    temperature: 0.1,
    ...options,
  });
  return { text: result.text, model: result.runtime.model };
}
