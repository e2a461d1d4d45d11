/**
 * `hermes import FILE`: restores a `hermes backup` zip into the current home (`-p NAME` for a
 * profile's). A home that already has a configuration is only overwritten with `-f` or a yes on
 * the terminal.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { runningGateway } from "../../gateway/pid-file.js";
import { sqliteInUse } from "../../state/in-use.js";
import { ImportError, importBackup, inspectBackup } from "../backup/restore.js";
import { CliFailure, defineCommand } from "../command.js";
import { homeFor } from "../home-env.js";

/**
 * Refuses to restore over a home a running process writes to: the gateway (its pid file), or any
 * process holding state.db open (a chat, a cron run). Their files would be replaced under them and
 * what they write next lost, so the user stops them first.
 */
function refuseLiveHome(home: string): void {
  const gateway = runningGateway(home);
  if (gateway) {
    throw new CliFailure(
      `the gateway is running on ${home} (pid ${gateway.pid}); importing now would replace its files under it. ` +
        "Stop it first (hermes gateway stop, or end that process), then run hermes import again.",
    );
  }
  const db = join(home, "state.db");
  if (sqliteInUse(db)) {
    throw new CliFailure(
      `${db} is open in another Hermes process (a chat, a cron run or the gateway); importing now would ` +
        "replace it under that process and lose what it writes next. Close it, then run hermes import again.",
    );
  }
}

export const importCommand = defineCommand({
  name: "import",
  description: "restore a backup zip made by `hermes backup` into the current home",
  needs: "nothing",
  expected: (error) => (error instanceof ImportError ? 1 : undefined),
  parse: (cmd) =>
    cmd
      .argument("<file>", "the backup zip")
      .option("-f, --force", "overwrite a home that already has a configuration without asking"),
  run: async (ctx, file: string, flags: { force?: boolean }) => {
    const { io } = ctx;
    const zip = resolve(file);
    if (!existsSync(zip)) throw new CliFailure(`no such file: ${zip}`);
    const home = homeFor(io.env, ctx.profile);
    refuseLiveHome(home);
    const { entries, prefix } = inspectBackup(zip);
    io.err(`Backup holds ${entries.filter((e) => !e.name.endsWith("/")).length} files; target: ${home}`);
    if (prefix) io.err(`Removing the archive's top directory ${JSON.stringify(prefix)} from every path.`);
    const configured = existsSync(join(home, "config.yaml")) || existsSync(join(home, ".env"));
    if (configured && !flags.force) {
      if (io.stdin.isTTY !== true) {
        throw new CliFailure(
          `${home} already has a Hermes configuration and importing overwrites it; re-run with -f to overwrite.`,
        );
      }
      const rl = createInterface({ input: io.stdin, output: io.stderr });
      const answer = await rl
        .question(`${home} already has a configuration; the backup overwrites it. Continue? [y/N] `)
        .finally(() => rl.close());
      if (!/^y(es)?$/i.test(answer.trim())) {
        io.err("Cancelled; nothing was changed.");
        return 1;
      }
    }
    // The answer may have taken a while: a chat or gateway started meanwhile is refused too.
    refuseLiveHome(home);
    const summary = await importBackup(zip, home, (done, total) => io.err(`  ${done}/${total} files ...`));
    io.out(
      `Import ${summary.errors.length > 0 ? "incomplete" : "complete"}: ${summary.restored} files restored into ${home}`,
    );
    if (summary.skippedRuntime.length > 0) {
      io.out(
        `  Kept this machine's runtime files (${summary.skippedRuntime.length}): ${summary.skippedRuntime.slice(0, 5).join(", ")}`,
      );
    }
    if (summary.errors.length > 0) {
      io.err(
        `Not restored (${summary.errors.length}):\n${summary.errors
          .slice(0, 10)
          .map((e) => `  ${e}`)
          .join("\n")}`,
      );
      return 1;
    }
    return 0;
  },
});
