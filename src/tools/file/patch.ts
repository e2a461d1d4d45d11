/** patch: fuzzy find-and-replace in one file, or an all-or-nothing V4A multi-file patch. */
import { Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import type { TextEncodingName } from "../../util/text-encoding.js";
import { defineTool, type ToolContext } from "../types.js";
import {
  binaryFileError,
  type EncodedText,
  encodeFor,
  MAX_DECODE_BYTES,
  readEncoded,
} from "./encoded-text.js";
import { type FileAccess, fileAccess } from "./file-access.js";
import { assertFresh, forget, recordWritten } from "./file-state.js";
import { fuzzyReplace } from "./fuzzy-match.js";
import description from "./patch.md";
import { displayPath, stringEnum, unifiedDiff } from "./shared.js";
import { fileNotFoundError } from "./similar-names.js";
import { applyHunks, type PatchOp, parseV4A } from "./v4a.js";
import { guardWrite, refuseSecretWrite } from "./write-guard.js";

const parameters = Type.Object({
  mode: Type.Optional(stringEnum(["replace", "patch"])),
  path: Type.Optional(Type.String({ description: "replace: the file to edit." })),
  old_string: Type.Optional(
    Type.String({
      description:
        "replace: text to find, without read_file's line numbers. Must match once (include surrounding lines) unless replace_all; whitespace and indentation drift is tolerated.",
    }),
  ),
  new_string: Type.Optional(Type.String({ description: "replace: the new text (may be empty)." })),
  replace_all: Type.Optional(Type.Boolean({ description: "replace: change every match." })),
  patch: Type.Optional(Type.String({ description: "patch: the V4A patch text." })),
});

export const patchTool = defineTool({
  name: "patch",
  toolset: "file",
  description,
  parameters,
  emoji: "🩹",
  pathScoped(args, cwd) {
    if (isPatchMode(args)) return patchedPaths(args.patch ?? "").map((p) => resolvePath(p, cwd));
    return args.path === undefined ? [] : [resolvePath(args.path, cwd)];
  },
  async handler(args, ctx) {
    if (isPatchMode(args)) {
      if (!args.patch?.trim()) throw new Error('mode "patch" needs the `patch` argument (V4A patch text).');
      return applyPatch(args.patch, ctx, await fileAccess(ctx));
    }
    if (args.path === undefined || args.old_string === undefined || args.new_string === undefined) {
      throw new Error(
        'mode "replace" needs `path`, `old_string` and `new_string` (use mode "patch" for a V4A patch).',
      );
    }
    const files = await fileAccess(ctx);
    return replaceInFile(args.path, args.old_string, args.new_string, args.replace_all ?? false, ctx, files);
  },
});

function isPatchMode(args: { mode?: string; patch?: string; old_string?: string }): boolean {
  // A bare `patch` argument with no old_string can only mean patch mode.
  return (
    args.mode === "patch" ||
    (args.mode === undefined && args.patch !== undefined && args.old_string === undefined)
  );
}

/** The files a V4A patch names (including rename targets), read leniently for scheduling. */
function patchedPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const m of patch.matchAll(/^\*\*\* (?:Add File|Delete File|Update File|Move to): *(.+?) *\r?$/gm)) {
    if (m[1]) paths.push(m[1]);
  }
  return paths;
}

/** Reads a text file that is about to be edited, with the checks shared by both modes. */
async function loadForEdit(
  ctx: ToolContext,
  files: FileAccess,
  argPath: string,
  abs: string,
): Promise<EncodedText> {
  refuseSecretWrite(ctx, abs, files.env);
  const stats = await files.stat(abs);
  if (!stats) throw await fileNotFoundError(argPath, abs, files.names);
  if (stats.isDirectory()) throw new Error(`${argPath} is a directory, not a file.`);
  if (stats.size > MAX_DECODE_BYTES && (await files.isBinary(abs)))
    throw binaryFileError(argPath, abs, "patch");
  assertFresh(ctx, abs, stats, files.cwd);
  return readEncoded(files, abs, argPath, "patch");
}

async function replaceInFile(
  argPath: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  ctx: ToolContext,
  files: FileAccess,
): Promise<string> {
  if (oldString === "")
    throw new Error("old_string is empty. To create or overwrite a whole file, use write_file.");
  if (oldString === newString)
    throw new Error("old_string and new_string are identical; nothing would change.");
  const abs = files.resolve(argPath);
  const { text: before, encoding } = await loadForEdit(ctx, files, argPath, abs);
  const outcome = fuzzyReplace(before, oldString, newString, replaceAll);
  if (!outcome.ok) {
    if (outcome.reason === "ambiguous") {
      const how = outcome.strategy === "exact" ? "" : ` (${outcome.strategy} matching)`;
      throw new Error(
        `old_string matches ${outcome.count} places in ${argPath}${how}. Include more surrounding lines so it ` +
          "matches exactly one, or set replace_all to true to change every match.",
      );
    }
    throw new Error(
      `old_string was not found in ${argPath}, even ignoring whitespace and indentation differences. ` +
        `${outcome.hint ? `${outcome.hint} ` : ""}Re-read the file and copy the text exactly.`,
    );
  }
  // Asked once the edit is known to apply, so the user is never asked about one that would fail.
  const bytes = encodeFor(outcome.content, encoding, argPath);
  await guardWrite(ctx, abs, "patch", undefined, files.env);
  await files.writeText(abs, bytes);
  await recordWritten(ctx, abs, files.stat);
  const shown = displayPath(abs, files.cwd);
  const how = outcome.strategy === "exact" ? "" : `, matched ${outcome.strategy}`;
  const what = `${outcome.count} replacement${outcome.count === 1 ? "" : "s"}`;
  return `Patched ${shown} (${what}${how}).\n${unifiedDiff(`a/${shown}`, `b/${shown}`, before, outcome.content)}`;
}

/** One file's planned change: `null` content means the file does not exist (before) or is deleted (after). */
interface FilePlan {
  abs: string;
  before: string | null;
  after: string | null;
  /** The encoding the file is written in: its own, or its source's after a move. */
  encoding: TextEncodingName;
  /** Original bytes (to restore after a failed write) and the encoded new content. */
  beforeBytes?: string | Buffer;
  afterBytes?: string | Buffer;
}

async function applyPatch(patchText: string, ctx: ToolContext, files: FileAccess): Promise<string> {
  let ops: PatchOp[];
  try {
    ops = parseV4A(patchText);
  } catch (error) {
    throw new Error(`${(error as Error).message} No files were changed.`);
  }
  const plans = new Map<string, FilePlan>();
  try {
    await planAll(ops, plans, ctx, files);
  } catch (error) {
    throw new Error(`Patch not applied, no files were changed: ${(error as Error).message}`);
  }
  const changed = [...plans.values()].filter((p) => p.before !== p.after);
  try {
    for (const plan of changed) {
      const shown = displayPath(plan.abs, files.cwd);
      if (plan.before !== null) plan.beforeBytes = encodeFor(plan.before, plan.encoding, shown);
      if (plan.after !== null) plan.afterBytes = encodeFor(plan.after, plan.encoding, shown);
    }
  } catch (error) {
    throw new Error(`Patch not applied, no files were changed: ${(error as Error).message}`);
  }
  try {
    // Every file the patch adds, changes, deletes or moves to or from counts; all are decided
    // before anything is written, so one refusal leaves the whole tree as it was.
    for (const plan of changed) {
      const effect =
        plan.after === null
          ? "deleted by the patch"
          : plan.before === null
            ? "created by the patch"
            : undefined;
      await guardWrite(ctx, plan.abs, "patch", effect, files.env);
    }
  } catch (error) {
    throw new Error(`Patch not applied, no files were changed: ${(error as Error).message}`);
  }
  await writeAll(changed, files);
  const summary: string[] = [];
  const diffs: string[] = [];
  for (const plan of changed) {
    const shown = displayPath(plan.abs, files.cwd);
    if (plan.after === null) forget(ctx, plan.abs);
    else await recordWritten(ctx, plan.abs, files.stat);
    summary.push(`${plan.before === null ? "added" : plan.after === null ? "deleted" : "updated"} ${shown}`);
    diffs.push(
      unifiedDiff(
        plan.before === null ? "/dev/null" : `a/${shown}`,
        plan.after === null ? "/dev/null" : `b/${shown}`,
        plan.before ?? "",
        plan.after ?? "",
      ),
    );
  }
  if (changed.length === 0) return "Patch applied, but it changes nothing.";
  return `Patch applied: ${summary.join(", ")}.\n${diffs.join("")}`;
}

/** Validates every operation against the files (and earlier operations) without writing anything. */
async function planAll(
  ops: readonly PatchOp[],
  plans: Map<string, FilePlan>,
  ctx: ToolContext,
  files: FileAccess,
): Promise<void> {
  const current = async (argPath: string, abs: string, mustExist: boolean): Promise<string | null> => {
    const planned = plans.get(abs);
    if (planned) {
      if (planned.after === null && mustExist)
        throw new Error(`${argPath} is deleted earlier in this patch.`);
      return planned.after;
    }
    refuseSecretWrite(ctx, abs, files.env);
    const stats = await files.stat(abs);
    const loaded = stats ? await loadForEdit(ctx, files, argPath, abs) : undefined;
    if (!stats && mustExist) throw await fileNotFoundError(argPath, abs, files.names);
    const before = loaded?.text ?? null;
    plans.set(abs, { abs, before, after: before, encoding: loaded?.encoding ?? "utf-8" });
    return before;
  };
  const set = (abs: string, after: string | null, encoding?: TextEncodingName) => {
    const plan = plans.get(abs);
    if (plan) plan.after = after;
    if (plan && encoding) plan.encoding = encoding;
  };

  for (const op of ops) {
    const abs = files.resolve(op.path);
    if (op.kind === "add") {
      if ((await current(op.path, abs, false)) !== null) {
        throw new Error(`*** Add File: ${op.path} already exists; use *** Update File to change it.`);
      }
      set(abs, op.content);
    } else if (op.kind === "delete") {
      await current(op.path, abs, true);
      set(abs, null);
    } else {
      const text = (await current(op.path, abs, true)) as string;
      let next: string;
      try {
        next = op.hunks.length > 0 ? applyHunks(text, op.hunks) : text;
      } catch (error) {
        throw new Error(`in ${op.path}, ${(error as Error).message}`);
      }
      if (op.moveTo === undefined) {
        set(abs, next);
        continue;
      }
      const dest = files.resolve(op.moveTo);
      if (dest === abs) {
        set(abs, next);
        continue;
      }
      if ((await current(op.moveTo, dest, false)) !== null) {
        throw new Error(`*** Move to: ${op.moveTo} already exists.`);
      }
      const moved = plans.get(abs)?.encoding;
      set(abs, null);
      set(dest, next, moved);
    }
  }
}

/**
 * Writes every planned file. If one write fails, the files already written are put back as they
 * were, so a failure at this stage also leaves the tree unchanged as far as the OS allows.
 */
async function writeAll(plans: readonly FilePlan[], files: FileAccess): Promise<void> {
  const done: FilePlan[] = [];
  try {
    for (const plan of plans) {
      await putContent(files, plan.abs, plan.afterBytes ?? null);
      done.push(plan);
    }
  } catch (error) {
    for (const plan of done.reverse())
      await putContent(files, plan.abs, plan.beforeBytes ?? null).catch(() => {});
    throw new Error(
      `Writing the patch failed (${(error as Error).message}); files already written were restored.`,
    );
  }
}

async function putContent(files: FileAccess, abs: string, content: string | Buffer | null): Promise<void> {
  if (content === null) await files.remove(abs);
  else await files.writeText(abs, content);
}
