/**
 * The protected-path guard for MCP servers that write files (`@modelcontextprotocol/server-filesystem`
 * and its kind): a server tool whose name says it writes (write, edit, move, delete, create...) and
 * whose arguments name a path is checked like write_file before the call is forwarded. Secrets are
 * refused, guarded paths need the user's approval.
 *
 * Generic, not tied to one server, and conservative: tools that only read are never touched, and
 * only argument values under path-like keys count (`path`, `source`, `destination`, `file_path`...),
 * never file contents.
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { withAdvice } from "../approval/denial.js";
import { guardPath, guardRoots, type PathProtection } from "../approval/protected-paths.js";
import {
  deniedProtectedWrite,
  PROTECTED_WRITE_KEY,
  protectedWriteAdvice,
  secretRefusal,
} from "../file/write-guard.js";
import type { ToolContext } from "../types.js";
import type { McpServerConfig } from "./config.js";

/** Words in a tool name that mean it changes files. */
const WRITE_WORDS = new Set([
  "write",
  "edit",
  "move",
  "mv",
  "rename",
  "delete",
  "remove",
  "rm",
  "rmdir",
  "unlink",
  "create",
  "mkdir",
  "touch",
  "append",
  "upload",
  "download",
  "patch",
  "save",
  "copy",
  "cp",
  "overwrite",
  "replace",
  "update",
  "insert",
  "modify",
  "put",
  "truncate",
  "chmod",
  "chown",
  "symlink",
  "link",
  "extract",
  "unzip",
  "untar",
]);

/** Argument names (lower case, without `_` and `-`) whose values are file paths. */
const PATH_KEYS = new Set([
  "path",
  "paths",
  "file",
  "files",
  "filename",
  "filenames",
  "source",
  "sources",
  "src",
  "destination",
  "destinations",
  "dest",
  "target",
  "targets",
  "dir",
  "directory",
  "directories",
  "folder",
  "from",
  "to",
  "output",
  "outputfile",
  "uri",
]);

/** How deep nested arguments are searched for paths (`files: [{path, content}]`). */
const MAX_DEPTH = 6;

/**
 * Whether an MCP tool may change files: its name contains a write word (`write_file`,
 * `createDirectory`, `fs.move`), or the server declares it neither read-only nor harmless
 * (`readOnlyHint: false` or `destructiveHint: true`). Pure.
 */
export function isWritingTool(tool: Pick<Tool, "name" | "annotations">): boolean {
  const words = tool.name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  if (words.some((w) => WRITE_WORDS.has(w))) return true;
  return tool.annotations?.readOnlyHint === false || tool.annotations?.destructiveHint === true;
}

/** Whether an argument name holds file paths: the names above, or any name ending in `path(s)`. */
function isPathKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[_-]/g, "");
  return PATH_KEYS.has(k) || k.endsWith("path") || k.endsWith("paths");
}

/**
 * The path strings in a call's arguments: string values (or arrays of strings) under path-like
 * keys, at any depth; file contents and other values are ignored. Pure.
 */
export function pathArguments(args: unknown, depth = 0): string[] {
  if (depth > MAX_DEPTH || args === null || typeof args !== "object") return [];
  const out: string[] = [];
  const entries = Array.isArray(args) ? args.map((v) => ["", v] as const) : Object.entries(args);
  for (const [key, value] of entries) {
    if (key && isPathKey(key)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === "string" && item.trim() !== "") out.push(item.trim());
      }
    }
    if (value !== null && typeof value === "object") out.push(...pathArguments(value, depth + 1));
  }
  return out;
}

/**
 * The absolute paths `raw` may mean on this machine. A relative path is resolved against every
 * directory the server could resolve it against (the agent's cwd, the server's cwd, the absolute
 * paths among its arguments, such as server-filesystem's allowed directories); `~` against each
 * home; `file://` URIs are decoded; other URLs are not paths. Pure.
 */
export function candidatePaths(raw: string, bases: readonly string[], homes: readonly string[]): string[] {
  let path = raw;
  if (/^file:/i.test(path)) {
    try {
      path = fileURLToPath(path);
    } catch {
      return [];
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path) || path.includes("\n") || path.length > 4096) {
    return [];
  }
  if (path === "~" || path.startsWith("~/")) return homes.map((h) => resolve(h, path.slice(2)));
  if (isAbsolute(path)) return [resolve(path)];
  return bases.map((base) => resolve(base, path));
}

/** Directories a server may resolve relative paths against. */
function serverBases(ctx: ToolContext, server: McpServerConfig): string[] {
  const bases = new Set([ctx.cwd, process.cwd()]);
  if (server.transport === "stdio") {
    if (server.cwd) bases.add(resolve(ctx.cwd, server.cwd));
    for (const arg of server.args) if (isAbsolute(arg)) bases.add(resolve(arg));
  }
  return [...bases];
}

/**
 * Checks an MCP tool call against the protected-path list before it is forwarded. Resolves when
 * the call may go ahead (a reading tool, no protected path, or every guarded path approved);
 * throws an error the model can act on otherwise. `name` is the tool's registry name, shown to the
 * user in the approval request.
 */
export async function guardMcpCall(
  ctx: ToolContext,
  name: string,
  tool: Pick<Tool, "name" | "annotations">,
  args: Record<string, unknown>,
  server: McpServerConfig,
): Promise<void> {
  if (!isWritingTool(tool)) return;
  const raws = pathArguments(args);
  if (raws.length === 0) return;
  const roots = guardRoots(ctx.home, ctx.env);
  const bases = serverBases(ctx, server);
  const guarded = new Map<string, [string, PathProtection]>();
  for (const raw of raws) {
    for (const abs of candidatePaths(raw, bases, roots.homes)) {
      const protection = guardPath(abs, roots);
      if (!protection) continue;
      if (protection.level === "secret") throw new Error(secretRefusal(raw, protection));
      if (!guarded.has(abs)) guarded.set(abs, [raw, protection]);
    }
  }
  for (const [abs, [raw, protection]] of guarded) {
    const decision = await ctx
      .requestApproval({
        command: `${name} ${abs}`,
        reason: protection.reason,
        patternKey: PROTECTED_WRITE_KEY,
        protectedPath: true,
      })
      .catch((error: unknown) => {
        throw withAdvice(error, protectedWriteAdvice(abs, roots));
      });
    if (decision === "deny") {
      throw new Error(deniedProtectedWrite(raw, protection, protectedWriteAdvice(abs, roots)));
    }
  }
}
