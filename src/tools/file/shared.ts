/** Small helpers shared by the file tools. */
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";
import { type TUnsafe, Type } from "@sinclair/typebox";
import { createTwoFilesPatch } from "diff";

/** A string enum as plain `{type: "string", enum}`, which every provider's schema dialect accepts. */
export function stringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/** How a path is shown to the model: relative to `cwd` when inside it, absolute otherwise. */
export function displayPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  if (rel === "") return ".";
  if (rel.startsWith("..") || isAbsolute(rel)) return abs;
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/** A positive number from the config at `keys`, or `fallback` when missing or malformed. */
export function configNumber(
  config: Readonly<Record<string, unknown>>,
  keys: string[],
  fallback: number,
): number {
  let node: unknown = config;
  for (const key of keys) {
    if (node === null || typeof node !== "object") return fallback;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === "number" && Number.isFinite(node) && node > 0 ? node : fallback;
}

/**
 * What a tool's own output must stay within so the registry's global truncation (which would cut
 * off the paging hint at the end) never has to act. A margin is kept for the trailing note.
 */
export function outputBudget(config: Readonly<Record<string, unknown>>): {
  maxBytes: number;
  maxLines: number;
} {
  const maxBytes = configNumber(config, ["limits", "tool_output", "max_bytes"], 50_000);
  const maxLines = configNumber(config, ["limits", "tool_output", "max_lines"], 2000);
  return { maxBytes: Math.max(1000, maxBytes - 600), maxLines: Math.max(10, maxLines - 5) };
}

/** Node's error code (`ENOENT`, `EISDIR`...) when `error` carries one. */
export function errorCode(error: unknown): string | undefined {
  return error && typeof error === "object" && "code" in error ? String(error.code) : undefined;
}

/** Splits text into lines the way editors count them: a final newline does not start a new line. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}

/** Stats of `abs`, or undefined when it (or a parent) does not exist. Other failures throw. */
export async function statIfExists(abs: string): Promise<Stats | undefined> {
  try {
    return await stat(abs);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** A unified diff of one file without the `====` banner line that `diff` puts first. */
export function unifiedDiff(oldName: string, newName: string, before: string, after: string): string {
  const text = createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, { context: 3 });
  return text.replace(/^=+\n/, "");
}
