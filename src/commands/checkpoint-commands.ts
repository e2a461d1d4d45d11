/**
 * `/rollback` and `/checkpoints`: the working directory's checkpoints (tools/checkpoints/), listed,
 * compared and restored from the REPL or a chat. A restore saves the current files first, so it can
 * be undone with `/rollback 1`. Existing checkpoints stay usable when checkpoints are switched off.
 */
import {
  type CheckpointSettings,
  checkpointLines,
  checkpointSettings,
  diffCheckpoint,
  listCheckpoints,
  restoreCheckpoint,
  restoreLines,
  storePaths,
  storeStatus,
  unsupportedBackend,
} from "../tools/checkpoints/index.js";
import type { CommandContext, CommandDef } from "./types.js";

/** A chat message holds a few thousand characters; the REPL shows more of a long diff. */
const DIFF_LIMIT = { repl: 20_000, chat: 3_500 } as const;

function where(ctx: CommandContext) {
  const { cwd, home, config } = ctx.session.agent;
  return { cwd, paths: storePaths(home), settings: checkpointSettings(config) };
}

/** The lines saying checkpoints are off or cannot cover this backend; empty when they work. */
function caveats(settings: CheckpointSettings): string[] {
  const out: string[] = [];
  const unsupported = unsupportedBackend(settings);
  if (unsupported) out.push(unsupported);
  if (!settings.enabled)
    out.push(
      "Checkpoints are off: set checkpoints.enabled: true in config.yaml, or start with --checkpoints.",
    );
  return out;
}

function parseNumber(word: string | undefined, fallback: number): number {
  if (word === undefined) return fallback;
  if (!/^\d+$/.test(word))
    throw new Error(`Expected a checkpoint number, got "${word}". See /rollback for the list.`);
  return Number(word);
}

function clip(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const rest = text.slice(limit).split("\n").length;
  return `${text.slice(0, limit)}\n… (${rest} more lines; hermes checkpoints diff shows all)`;
}

const rollbackCommand: CommandDef = {
  name: "rollback",
  args: "[N [FILE] | diff N]",
  description:
    "list checkpoints of the working directory, restore one (N), or show what changed since (diff N)",
  category: "Session",
  adminOnly: true,
  async run(args, ctx) {
    const { cwd, paths, settings } = where(ctx);
    const words = args.trim().split(/\s+/).filter(Boolean);
    const paint = ctx.paint;
    if (words.length === 0 || words[0] === "list" || words[0] === "ls") {
      const list = await listCheckpoints(paths, cwd);
      ctx.reply(...caveats(settings).map((l) => paint.yellow(l)), ...checkpointLines(list, cwd));
      return;
    }
    if (words[0] === "diff") {
      const diff = await diffCheckpoint(paths, cwd, parseNumber(words[1], 1));
      const body = [diff.stat, "", diff.patch].join("\n").trim();
      const limit = ctx.surface.kind === "chat" ? DIFF_LIMIT.chat : DIFF_LIMIT.repl;
      ctx.reply(
        paint.bold(`Changes since checkpoint ${diff.checkpoint.short} (${diff.checkpoint.reason}):`),
        body === "" ? "No changes: the files are as the checkpoint has them." : clip(body, limit),
      );
      return;
    }
    const n = parseNumber(words[0], 1);
    const file = words.length > 1 ? words.slice(1).join(" ") : undefined;
    const result = await restoreCheckpoint(paths, cwd, n, settings.limits, Date.now() / 1000, file);
    ctx.reply(...restoreLines(result).map((line, i) => (i === 0 ? paint.green(line) : line)));
  },
};

const checkpointsCommand: CommandDef = {
  name: "checkpoints",
  description: "whether checkpoints are on, the store's size, and this directory's checkpoints",
  category: "Info",
  availableWhileRunning: true,
  async run(_args, ctx) {
    const { cwd, paths, settings } = where(ctx);
    const { bytes, projects } = await storeStatus(paths);
    const mb = (bytes / (1024 * 1024)).toFixed(1);
    const state = settings.enabled ? ctx.paint.green("on") : ctx.paint.yellow("off");
    const list = await listCheckpoints(paths, cwd);
    ctx.reply(
      `Checkpoints: ${state} (before the first file change of each turn; at most ${settings.limits.maxSnapshots} per directory)`,
      ...caveats(settings).map((l) => ctx.paint.yellow(l)),
      `Store: ${paths.store} (${mb} MB, ${projects.length} director${projects.length === 1 ? "y" : "ies"})`,
      "",
      ...checkpointLines(list, cwd),
    );
  },
};

export const CHECKPOINT_COMMANDS: readonly CommandDef[] = [rollbackCommand, checkpointsCommand];
