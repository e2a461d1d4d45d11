/**
 * `hermes checkpoints`: the shadow store that `/rollback` restores from. `status` (the default)
 * shows its size and every directory in it, `list` one directory's checkpoints, `prune` applies the
 * retention and size rules now, `clear` deletes the store. `diff N` and `rollback N [FILE]` do
 * outside a session what `/rollback diff N` and `/rollback N` do inside one (after a `-z` run).
 */
import { createInterface } from "node:readline/promises";
import { formatBytes } from "../../tools/checkpoints/format.js";
import {
  checkpointLines,
  checkpointSettings,
  clearStore,
  diffCheckpoint,
  listCheckpoints,
  pruneStore,
  restoreCheckpoint,
  restoreLines,
  statusLines,
  storePaths,
  storeStatus,
} from "../../tools/checkpoints/index.js";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";

const dirOption = ["-d, --dir <path>", "the working directory (default: the current one)"] as const;
const workdir = (flags: { dir?: string }) => flags.dir ?? process.cwd();

function checkpointNumber(word: string | undefined): number {
  if (word === undefined) return 1;
  if (!/^\d+$/.test(word)) throw new CliFailure(`expected a checkpoint number, got "${word}".`, 2);
  return Number(word);
}

/** The store's own failures (no such checkpoint, a path outside the directory) are the user's to fix. */
const asFailure = (error: unknown): never => {
  throw new CliFailure(error instanceof Error ? error.message : String(error), 1);
};

export const checkpointsCommand = defineCommand({
  name: "checkpoints",
  description: "the checkpoint store behind /rollback: status, list, diff, rollback, prune, clear",
  needs: "config",
  defaultSubcommand: "status",
  parse: (root, run) => {
    root
      .command("status")
      .description("the store's size and every directory it holds checkpoints of")
      .option("--json", "print JSON")
      .action(
        run(async ({ io, home }: ConfigContext, flags: { json?: boolean }) => {
          const paths = storePaths(home);
          const status = await storeStatus(paths);
          if (flags.json) io.out(JSON.stringify({ store: paths.store, ...status }, null, 2));
          else io.out(statusLines(paths.store, status.bytes, status.projects).join("\n"));
          return 0;
        }),
      );

    root
      .command("list")
      .alias("ls")
      .description("the checkpoints of one directory, newest first")
      .option(...dirOption)
      .option("--json", "print JSON")
      .action(
        run(async ({ io, home }: ConfigContext, flags: { dir?: string; json?: boolean }) => {
          const list = await listCheckpoints(storePaths(home), workdir(flags));
          if (flags.json) io.out(JSON.stringify(list, null, 2));
          else io.out(checkpointLines(list, workdir(flags), false).join("\n"));
          return 0;
        }),
      );

    root
      .command("diff")
      .description("what changed in the directory since checkpoint N (default 1, the latest)")
      .argument("[n]", "checkpoint number from `hermes checkpoints list`")
      .option(...dirOption)
      .action(
        run(async ({ io, home }: ConfigContext, n: string | undefined, flags: { dir?: string }) => {
          const diff = await diffCheckpoint(storePaths(home), workdir(flags), checkpointNumber(n)).catch(
            asFailure,
          );
          io.out(diff.stat || "No changes: the files are as the checkpoint has them.");
          if (diff.patch) io.out(`\n${diff.patch}`);
          return 0;
        }),
      );

    root
      .command("rollback")
      .alias("restore")
      .description("restore the directory (or one FILE) to checkpoint N; the current files are saved first")
      .argument("[n]", "checkpoint number from `hermes checkpoints list` (default 1)")
      .argument("[file]", "restore only this file")
      .option(...dirOption)
      .action(
        run(
          async (
            { io, home, config }: ConfigContext,
            n: string | undefined,
            file: string | undefined,
            flags: { dir?: string },
          ) => {
            const settings = checkpointSettings(config);
            const result = await restoreCheckpoint(
              storePaths(home),
              workdir(flags),
              checkpointNumber(n),
              settings.limits,
              io.now(),
              file,
            ).catch(asFailure);
            io.out(restoreLines(result, false).join("\n"));
            return 0;
          },
        ),
      );

    root
      .command("prune")
      .description("drop checkpoints of deleted or long-untouched directories and hold the size cap, now")
      .option(
        "--retention-days <n>",
        "untouched this many days counts as stale (default checkpoints.retention_days)",
      )
      .option("--max-size-mb <n>", "store size cap (default checkpoints.max_total_size_mb)")
      .option("--keep-orphans", "keep the checkpoints of directories that no longer exist")
      .action(
        run(
          async (
            { io, home, config }: ConfigContext,
            flags: { retentionDays?: string; maxSizeMb?: string; keepOrphans?: boolean },
          ) => {
            const settings = checkpointSettings(config);
            const num = (value: string | undefined, fallback: number, name: string) => {
              if (value === undefined) return fallback;
              const n = Number(value);
              if (!Number.isFinite(n) || n < 0)
                throw new CliFailure(`${name} expects a number, got "${value}".`, 2);
              return n;
            };
            const report = await pruneStore(
              storePaths(home),
              {
                retentionDays: num(flags.retentionDays, settings.retentionDays, "--retention-days"),
                maxTotalSizeMb: num(flags.maxSizeMb, settings.maxTotalSizeMb, "--max-size-mb"),
                deleteOrphans: flags.keepOrphans !== true && settings.deleteOrphans,
              },
              io.now(),
            );
            io.out(
              `Scanned ${report.scanned} director${report.scanned === 1 ? "y" : "ies"}: ` +
                `${report.deletedOrphan} gone, ${report.deletedStale} stale, ${report.trimmed} checkpoint(s) dropped for size; ` +
                `${formatBytes(report.bytesFreed)} freed.`,
            );
            return 0;
          },
        ),
      );

    root
      .command("clear")
      .description("delete every checkpoint of every directory (asks first; -f does not)")
      .option("-f, --force", "do not ask")
      .action(
        run(async ({ io, home }: ConfigContext, flags: { force?: boolean }) => {
          const paths = storePaths(home);
          if (!flags.force) {
            if (!io.stdin.isTTY)
              throw new CliFailure("clear deletes every checkpoint; add -f to confirm.", 2);
            const rl = createInterface({ input: io.stdin, output: io.stderr });
            const answer = await rl.question(`Delete every checkpoint in ${paths.store}? [y/N] `);
            rl.close();
            if (!/^y(es)?$/i.test(answer.trim())) {
              io.err("Nothing deleted.");
              return 1;
            }
          }
          const bytes = await clearStore(paths);
          io.out(`Deleted the checkpoint store (${formatBytes(bytes)}).`);
          return 0;
        }),
      );
  },
});
