/**
 * Declares the skill-management subcommands of `hermes skills` (bundled skills, lint, publish,
 * snapshot) on the command skills.ts builds, through one call from there.
 */
import type { Command } from "commander";
import type { HermesConfig } from "../../../config/defaults.js";
import type { Action } from "../../command.js";
import {
  type DiffFlags,
  diffCli,
  listModifiedCli,
  type MgmtCtx,
  optInCli,
  optOutCli,
  repairOfficialCli,
  resetCli,
} from "./bundled.js";
import { lintCli } from "./lint.js";
import { type PublishFlags, publishCli } from "./publish.js";
import { snapshotExportCli, snapshotImportCli } from "./snapshot.js";

export interface ManagementHooks {
  /** The home's config.yaml (for skills.external_dirs). */
  config: (ctx: MgmtCtx) => HermesConfig;
  /** `diff ID` of a staged skill write (write-approval.ts). */
  pendingDiff: (ctx: MgmtCtx, id: string) => number | Promise<number>;
  /** Called before opt-out / opt-in run, so the command does not seed bundled skills first. */
  skipSeeding: () => void;
}

export function registerManagementCommands<C extends MgmtCtx>(
  root: Command,
  run: Action<C>,
  hooks: ManagementHooks,
): void {
  root
    .command("reset")
    .description("make a bundled skill follow the shipped copy again (--restore replaces your edited copy)")
    .argument("<name>", "bundled skill name")
    .option("--restore", "replace your copy with the shipped one")
    .option("-y, --yes", "do not ask before --restore")
    .action(
      run((ctx: C, name: string, flags: { restore?: boolean; yes?: boolean }) => resetCli(ctx, name, flags)),
    );

  root
    .command("list-modified")
    .description("list bundled skills you edited (updates leave them as you left them)")
    .option("--json", "print JSON")
    .action(run((ctx: C, flags: { json?: boolean }) => listModifiedCli(ctx, flags)));

  root
    .command("diff")
    .description(
      "show a staged skill write (by pending id), or how your copy of a bundled skill differs from the shipped one (by name)",
    )
    .argument("<target>", "a pending id (hermes skills pending) or a bundled skill name")
    .option("--pending", "TARGET is a pending id")
    .option("--bundled", "TARGET is a bundled skill name")
    .action(
      run((ctx: C, target: string, flags: DiffFlags) =>
        diffCli(ctx, target, flags, (id) => hooks.pendingDiff(ctx, id)),
      ),
    );

  root
    .command("opt-out")
    .description("stop receiving bundled skills: all of them, or the one named (never copied in again)")
    .argument("[name]", "only this bundled skill")
    .option("--remove", "also delete the copies you never edited")
    .option("-y, --yes", "do not ask before --remove")
    .hook("preAction", () => hooks.skipSeeding())
    .action(
      run((ctx: C, name: string | undefined, flags: { remove?: boolean; yes?: boolean }) =>
        optOutCli(ctx, name, flags),
      ),
    );

  root
    .command("opt-in")
    .description("receive bundled skills again (all, or the one named)")
    .argument("[name]", "only this bundled skill")
    .option("--sync", "copy them in now instead of at the next start")
    .hook("preAction", () => hooks.skipSeeding())
    .action(run((ctx: C, name: string | undefined, flags: { sync?: boolean }) => optInCli(ctx, name, flags)));

  root
    .command("repair-official")
    .description(
      "record official optional skills found in the home, or put their shipped copy back (--restore)",
    )
    .argument("[name]", "one official optional skill (default: all)")
    .option("--restore", "copy the shipped version back; a differing copy is moved to a backup first")
    .option("-y, --yes", "do not ask before --restore")
    .action(
      run((ctx: C, name: string | undefined, flags: { restore?: boolean; yes?: boolean }) =>
        repairOfficialCli(ctx, name, flags),
      ),
    );

  root
    .command("lint")
    .description("check installed skills: frontmatter, sections, referenced files, scripts, scan")
    .argument("[name]", "only this skill")
    .option("--all", "also check the skills this package ships (skills/, optional-skills/)")
    .option("--json", "print JSON")
    .action(
      run((ctx: C, name: string | undefined, flags: { all?: boolean; json?: boolean }) =>
        lintCli(ctx.home, hooks.config(ctx), name, flags, ctx.io),
      ),
    );

  root
    .command("publish")
    .description(
      "scan a skill and push it to a tap's git repository (a pull request through gh when present)",
    )
    .argument("<name>", "installed skill name")
    .option("--to <tap>", "a configured tap (hermes skills tap list)")
    .option("--repo <url>", "a git repository URL or path")
    .option("--branch <branch>", "branch to push (default add-skill-NAME)")
    .option("--force", "publish despite a caution verdict (a dangerous verdict is always refused)")
    .action(run((ctx: C, name: string, flags: PublishFlags) => publishCli(ctx, name, flags)));

  const snapshot = root
    .command("snapshot")
    .description("export or import the whole skill set (your, hub and edited skills) as one file");
  snapshot
    .command("export")
    .description("write every skill that is not an unedited bundled one, with its provenance, to FILE")
    .argument("<file>", "output file, or - for stdout")
    .action(run((ctx: C, file: string) => snapshotExportCli(ctx, file)));
  snapshot
    .command("import")
    .description("install the skills of a snapshot file; each is scanned and unsafe ones are quarantined")
    .argument("<file>", "snapshot file")
    .option("--force", "replace skills that exist, and accept caution verdicts (never dangerous ones)")
    .action(run((ctx: C, file: string, flags: { force?: boolean }) => snapshotImportCli(ctx, file, flags)));
}
