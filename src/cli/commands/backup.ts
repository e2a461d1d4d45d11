/**
 * `hermes backup`: the whole root home (every profile) as one zip that `hermes import` restores,
 * each SQLite database copied consistently while Hermes keeps running; `--quick` snapshots only
 * the current home's irreplaceable state under `state-snapshots/`.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { rootHome } from "../../config/home.js";
import { createQuickSnapshot } from "../backup/quick-snapshot.js";
import { BackupBusyError, backupFileName, cleanLabel, writeBackup } from "../backup/write-backup.js";
import { CliFailure, defineCommand } from "../command.js";
import { homeFor } from "../home-env.js";

interface BackupFlags {
  output?: string;
  quick?: boolean;
  label?: string;
}

export const backupCommand = defineCommand({
  name: "backup",
  description: "back up the Hermes home (all profiles) to a zip that `hermes import` restores",
  needs: "nothing",
  expected: (error) => (error instanceof BackupBusyError ? 1 : undefined),
  parse: (cmd) =>
    cmd
      .option(
        "-o, --output <file>",
        "the zip to write, or a directory for it (default: ~/hermes-backup-<time>.zip)",
      )
      .option(
        "-q, --quick",
        "snapshot only state.db, config, secrets, cron jobs and pairing of the current home",
      )
      .option("-l, --label <label>", "a label for the snapshot or the backup's file name"),
  run: async (ctx, flags: BackupFlags) => {
    const { io } = ctx;
    const now = new Date(io.now() * 1000);
    const label = flags.label === undefined ? undefined : cleanLabel(flags.label);
    if (flags.label !== undefined && !label) {
      throw new CliFailure(`the label ${JSON.stringify(flags.label)} has no letters or digits to use`, 2);
    }
    if (flags.quick) {
      if (flags.output)
        throw new CliFailure("--output does not apply to --quick (snapshots go to state-snapshots/)", 2);
      const home = homeFor(io.env, ctx.profile);
      const snapshot = createQuickSnapshot(home, now, label);
      if (!snapshot) {
        io.out(`Nothing to snapshot in ${home}.`);
        return 0;
      }
      io.out(
        `Snapshot ${snapshot.id}: ${snapshot.files} files, ${formatBytes(snapshot.bytes)}\n  ${snapshot.path}`,
      );
      if (snapshot.failed.length > 0) {
        io.err(`Could not copy ${snapshot.failed.join(", ")} safely; the snapshot is incomplete.`);
        return 1;
      }
      return 0;
    }
    const root = rootHome(io.env, homedir());
    if (!existsSync(root)) throw new CliFailure(`there is no Hermes home at ${root} to back up`);
    const output = outputPath(flags.output, now, label);
    io.err(`Backing up ${root} ...`);
    const summary = await writeBackup(root, output, (done, total) => io.err(`  ${done}/${total} files ...`));
    io.out(
      [
        `Backup ${summary.errors.length > 0 ? "incomplete" : "complete"}: ${summary.output}`,
        `  Files:       ${summary.files}`,
        `  Original:    ${formatBytes(summary.bytes)}`,
        `  Compressed:  ${formatBytes(summary.zipBytes)}`,
      ].join("\n"),
    );
    if (summary.errors.length > 0) {
      io.err(
        `Left out ${summary.errors.length} file(s):\n${summary.errors
          .slice(0, 10)
          .map((e) => `  ${e}`)
          .join("\n")}`,
      );
      return 1;
    }
    io.out(`Restore with: hermes import ${summary.output}`);
    return 0;
  },
});

/** `-o` as given (a directory gets the default name inside it; `.zip` is added when missing), else `~/hermes-backup-<time>.zip`. */
function outputPath(given: string | undefined, now: Date, label: string | undefined): string {
  if (given === undefined) return join(homedir(), backupFileName(now, label));
  let path = resolve(given);
  if (isDir(path)) path = join(path, backupFileName(now, label));
  else if (!path.toLowerCase().endsWith(".zip")) path = `${path}.zip`;
  try {
    mkdirSync(resolve(path, ".."), { recursive: true });
  } catch (error) {
    throw new CliFailure(`cannot write a backup to ${given}: ${(error as Error).message}`);
  }
  return path;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
