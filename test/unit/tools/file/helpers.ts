import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Static, TSchema } from "@sinclair/typebox";
import type { ToolContext, ToolDefinition } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";

/** A tool context whose PATH has no ripgrep, so the built-in walker is what runs. */
export function fileToolContext(overrides: Partial<ToolContext> = {}): ReturnType<typeof makeToolContext> {
  return makeToolContext({ env: { PATH: "", HOME: process.env.HOME }, ...overrides });
}

/** Calls a tool's handler and returns its result as the text the model would see. */
export async function call<P extends TSchema>(
  tool: ToolDefinition<P>,
  args: Static<P>,
  ctx: ToolContext,
): Promise<string> {
  const value = await tool.handler(args, ctx);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Writes files (relative path → content) under `root`, creating folders. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}
