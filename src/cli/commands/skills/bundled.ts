/**
 * `hermes skills reset | list-modified | diff | opt-out | opt-in`: the bundled skills a home
 * received. `diff` serves two things, as in Python Hermes: a staged skill write (its pending id) and
 * a bundled skill the user edited (its name); `--pending` / `--bundled` choose when both exist.
 */
import pc from "picocolors";
import { bundledSkillsDir, listBundled } from "../../../knowledge/skills/bundled.js";
import {
  BundledSkillError,
  diffBundledSkill,
  listModifiedBundled,
  removePristineBundled,
  resetBundledSkill,
  seedNow,
} from "../../../knowledge/skills/bundled-manage.js";
import { isOptedOut, readSuppressed } from "../../../knowledge/skills/bundled-opt-out.js";
import { OfficialRepairError, repairOfficial } from "../../../knowledge/skills/official-repair.js";
import { setOptedOutShared, setSuppressedShared } from "../../../knowledge/skills/opt-out-shared.js";
import { nameProblem } from "../../../knowledge/skills/paths.js";
import { shareSkillChanges, unsharedLines } from "../../../knowledge/skills/share.js";
import { isPendingId } from "../../../knowledge/write-approval/pending.js";
import { readWrite } from "../../../knowledge/write-approval/pending-shared.js";
import { CliFailure, confirmOrFail, plural, type SkillsIo, style } from "./io.js";

export interface MgmtCtx {
  home: string;
  io: SkillsIo;
}

/** Runs a bundled-skill operation, turning its refusals into CLI failures with the same code. */
function guarded<T>(body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof BundledSkillError) throw new CliFailure(error.message, error.exitCode);
    throw error;
  }
}

function checkedName(name: string): string {
  const problem = nameProblem(name, "skill name");
  if (problem) throw new CliFailure(problem, 2);
  return name;
}

export async function resetCli(
  { home, io }: MgmtCtx,
  name: string,
  flags: { restore?: boolean; yes?: boolean },
): Promise<number> {
  checkedName(name);
  if (flags.restore) {
    const ok = await confirmOrFail(
      io,
      `Replace your copy of ${name} with the shipped one? Your edits to it are lost.`,
      "reset --restore",
      flags.yes,
    );
    if (!ok) {
      io.err("Cancelled; nothing changed.");
      return 0;
    }
  }
  const result = guarded(() =>
    resetBundledSkill(home, bundledSkillsDir(io.env), name, flags.restore === true),
  );
  io.out(result.message);
  // A shared backend (PostgreSQL) that holds an edited copy gets the shipped one for every instance.
  return shared(io, await shareSkillChanges(home, { names: [name] }));
}

/** Tells which changes the shared backend refused (exit 1), or nothing (0). */
function shared(io: SkillsIo, report: Awaited<ReturnType<typeof shareSkillChanges>>): number {
  const lines = unsharedLines(report);
  for (const line of lines) io.err(line);
  return lines.length > 0 ? 1 : 0;
}

export function listModifiedCli({ home, io }: MgmtCtx, flags: { json?: boolean }): number {
  const modified = listModifiedBundled(home, bundledSkillsDir(io.env));
  if (flags.json) {
    io.out(
      JSON.stringify(
        modified.map((m) => ({ name: m.name, path: m.dir })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (modified.length === 0) {
    io.out("No bundled skill was edited; every one follows the shipped copy.");
    return 0;
  }
  for (const m of modified) io.out(`${style(io, pc.yellow, "~")} ${style(io, pc.cyan, m.name)}  ${m.dir}`);
  io.err(
    `${plural(modified.length, "edited bundled skill")}, kept as you left them by updates. ` +
      "See the changes: hermes skills diff NAME; go back to the shipped copy: hermes skills reset NAME --restore",
  );
  return 0;
}

export interface DiffFlags {
  pending?: boolean;
  bundled?: boolean;
}

/**
 * `diff TARGET`: a pending id shows the staged write (`pendingDiff`), a bundled skill name shows the
 * user's edits against the shipped copy. Both matching, or neither, is a usage error naming the fix.
 */
export async function diffCli(
  ctx: MgmtCtx,
  target: string,
  flags: DiffFlags,
  pendingDiff: (id: string) => number | Promise<number>,
): Promise<number> {
  if (flags.pending && flags.bundled) throw new CliFailure("give --pending or --bundled, not both.", 2);
  const isPending = isPendingId(target) && (await readWrite(ctx.home, "skills", target)) !== undefined;
  const bundled = bundledSkillsDir(ctx.io.env);
  const isBundled = nameProblem(target, "skill name") === undefined && bundledNames(bundled).has(target);
  if (flags.pending || (isPending && !flags.bundled && !isBundled)) return pendingDiff(target);
  if (flags.bundled || (isBundled && !isPending)) return bundledDiff(ctx, target);
  if (isPending && isBundled) {
    throw new CliFailure(
      `"${target}" is both a pending write id and a bundled skill; add --pending or --bundled.`,
      2,
    );
  }
  throw new CliFailure(
    `"${target}" is neither a pending skill write (hermes skills pending) nor a bundled skill ` +
      "(hermes skills list --source bundled).",
    1,
  );
}

function bundledNames(bundledDir: string | undefined): Set<string> {
  return new Set(bundledDir ? listBundled(bundledDir).map((s) => s.name) : []);
}

function bundledDiff({ home, io }: MgmtCtx, name: string): number {
  const result = guarded(() => diffBundledSkill(home, bundledSkillsDir(io.env), name));
  if (result.diffs.length === 0) {
    io.out(`${name} matches the shipped copy.`);
    return 0;
  }
  io.err(
    `# ${name}: ${plural(result.diffs.length, "file")} ${result.diffs.length === 1 ? "differs" : "differ"} from the shipped copy (${result.dir})`,
  );
  for (const d of result.diffs) {
    if (d.status === "modified" && d.diff) {
      for (const line of d.diff.replace(/\n$/, "").split("\n")) {
        const paint =
          line.startsWith("+") && !line.startsWith("+++")
            ? pc.green
            : line.startsWith("-") && !line.startsWith("---")
              ? pc.red
              : line.startsWith("@@")
                ? pc.cyan
                : undefined;
        io.out(paint ? style(io, paint, line) : line);
      }
    } else if (d.status === "added") io.out(`+ only in your copy: ${d.path}`);
    else if (d.status === "removed") io.out(`- only in the shipped copy: ${d.path}`);
    else io.out(`~ ${d.path}: binary file differs`);
  }
  for (const link of result.links) io.err(`# ${link} is a symbolic link in your copy; not compared`);
  io.err(`# Go back to the shipped copy with: hermes skills reset ${name} --restore`);
  return 0;
}

export async function optOutCli(
  { home, io }: MgmtCtx,
  name: string | undefined,
  flags: { remove?: boolean; yes?: boolean },
): Promise<number> {
  const bundled = bundledSkillsDir(io.env);
  if (name !== undefined) {
    checkedName(name);
    if (!bundledNames(bundled).has(name)) {
      throw new CliFailure(`${name} is not a bundled skill; see hermes skills list --source bundled.`, 1);
    }
    const changed = await setSuppressedShared(home, name, true);
    io.out(
      changed ? `Opted out of ${name}: it will not be copied in again.` : `Already opted out of ${name}.`,
    );
  } else {
    const changed = await setOptedOutShared(home, true);
    io.out(
      changed
        ? "Opted out of bundled skills: none will be copied in or updated."
        : "Already opted out of bundled skills.",
    );
  }
  if (!flags.remove) {
    io.err("Copies already in your skills folder were left in place; --remove deletes the unedited ones.");
    return 0;
  }
  const preview = removePristineBundled(home, bundled, { ...(name ? { only: name } : {}), dryRun: true });
  for (const k of preview.kept) io.err(`Keeping ${k.name} (${k.reason}).`);
  if (preview.removed.length === 0) {
    io.out("No unedited bundled skill to remove.");
    return 0;
  }
  const ok = await confirmOrFail(
    io,
    `Delete ${plural(preview.removed.length, "unedited bundled skill")} (${preview.removed.join(", ")})?`,
    "opt-out --remove",
    flags.yes,
  );
  if (!ok) {
    io.err("Cancelled; the opt-out stays, nothing was deleted.");
    return 0;
  }
  const done = removePristineBundled(home, bundled, name ? { only: name } : {});
  io.out(
    `Removed ${plural(done.removed.length, "bundled skill")}${done.removed.length ? `: ${done.removed.join(", ")}` : ""}.`,
  );
  return shared(io, await shareSkillChanges(home, { names: done.removed }));
}

export async function optInCli(
  { home, io }: MgmtCtx,
  name: string | undefined,
  flags: { sync?: boolean },
): Promise<number> {
  const bundled = bundledSkillsDir(io.env);
  if (name !== undefined) {
    checkedName(name);
    const changed = await setSuppressedShared(home, name, false);
    io.out(changed ? `Opted back in to ${name}.` : `${name} was not opted out.`);
    if (isOptedOut(home))
      io.err("The whole home is still opted out; run hermes skills opt-in to receive any.");
  } else {
    const changed = await setOptedOutShared(home, false);
    io.out(changed ? "Opted back in to bundled skills." : "Bundled skills were not opted out.");
    const still = readSuppressed(home);
    if (still.size > 0) io.err(`Still opted out one by one: ${[...still].sort().join(", ")}.`);
  }
  if (flags.sync) {
    const copied = seedNow(home, bundled);
    io.out(
      `Copied in ${plural(copied.length, "bundled skill")}${copied.length ? `: ${copied.join(", ")}` : ""}.`,
    );
  } else {
    io.err("They are copied in at the next start (or now with --sync).");
  }
  return 0;
}

export async function repairOfficialCli(
  { home, io }: MgmtCtx,
  name: string | undefined,
  flags: { restore?: boolean; yes?: boolean },
): Promise<number> {
  const target = name ?? "all";
  if (flags.restore) {
    const ok = await confirmOrFail(
      io,
      `Put the shipped copy of ${target === "all" ? "every official optional skill" : target} back (differing copies are moved to a backup)?`,
      "repair-official --restore",
      flags.yes,
    );
    if (!ok) {
      io.err("Cancelled; nothing changed.");
      return 0;
    }
  }
  let result: Awaited<ReturnType<typeof repairOfficial>>;
  try {
    result = await repairOfficial(home, io.env, target, {
      ...(flags.restore ? { restore: true } : {}),
      nowSeconds: io.now(),
    });
  } catch (error) {
    if (error instanceof OfficialRepairError) throw new CliFailure(error.message, error.exitCode);
    throw error;
  }
  if (result.restored.length) io.out(`Restored: ${result.restored.join(", ")}`);
  if (result.backedUp.length) io.out(`Moved aside: ${result.backedUp.join(", ")} (in ${result.backupDir})`);
  if (result.backfilled.length) io.out(`Recorded as official: ${result.backfilled.join(", ")}`);
  for (const s of result.skipped) io.err(`Skipped ${s.name}: ${s.reason}`);
  if (!result.restored.length && !result.backfilled.length && !result.backedUp.length) {
    io.out("Nothing to repair: official optional skills are recorded and in place.");
  }
  return 0;
}
