/**
 * The `hermes skills` subcommands that change or judge installed skills: `install`, `uninstall`,
 * `check` (with `--update`) and `audit`.
 */
import { homedir } from "node:os";
import pc from "picocolors";
import { HubError, type SkillBundle } from "../../../knowledge/skills/hub/bundle.js";
import { type InstallOutcome, installBundle, uninstallSkill } from "../../../knowledge/skills/hub/install.js";
import type { LockEntry } from "../../../knowledge/skills/hub/lock.js";
import { auditInstalled, type CheckRow, checkForUpdates } from "../../../knowledge/skills/hub/maintenance.js";
import type { ScanReport } from "../../../knowledge/skills/hub/scan.js";
import {
  describeSpec,
  type FetchOptions,
  fetchSkill,
  parseSourceArgument,
} from "../../../knowledge/skills/hub/sources.js";
import { renderTable } from "../../format/table.js";
import {
  ask,
  CliFailure,
  canAsk,
  confirmOrFail,
  findingLines,
  paintVerdict,
  plural,
  type SkillsIo,
  style,
} from "./io.js";

export interface InstallFlags {
  git?: string;
  name?: string;
  category?: string;
  force?: boolean;
  yes?: boolean;
}

function tilde(path: string): string {
  const home = homedir();
  return home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

export async function installCommand(
  home: string,
  source: string | undefined,
  flags: InstallFlags,
  io: SkillsIo,
  fetchOptions: FetchOptions,
): Promise<number> {
  if (source !== undefined && flags.git !== undefined) {
    throw new CliFailure("give either SOURCE or --git URL, not both.", 2);
  }
  const arg = flags.git ?? source;
  if (arg === undefined) throw new CliFailure("missing SOURCE: a folder, a git URL or an https URL.", 2);
  const spec = parseSourceArgument(arg, { git: flags.git !== undefined, cwd: io.cwd });
  io.err(`Fetching ${describeSpec(spec)} …`);
  const bundle = await fetchSkill(spec, { ...fetchOptions, ...(flags.name ? { select: flags.name } : {}) });
  for (const warning of bundle.warnings) io.err(`hermes skills: warning: ${warning}`);
  const outcome = await install(home, bundle, flags, io);
  return reportOutcome(outcome, io);
}

async function install(
  home: string,
  bundle: SkillBundle,
  flags: InstallFlags,
  io: SkillsIo,
): Promise<InstallOutcome> {
  io.err(`Scanning ${bundle.name} (${plural(bundle.files.size, "file")}) …`);
  return installBundle({
    home,
    bundle,
    ...(flags.name ? { name: flags.name } : {}),
    ...(flags.category ? { category: flags.category } : {}),
    ...(flags.force ? { force: true } : {}),
    ...(flags.yes ? { yes: true } : {}),
    now: () => io.now(),
    ...(canAsk(io)
      ? {
          confirmCaution: async (report: ScanReport) => {
            io.err(`Scan verdict for ${bundle.name}: ${paintVerdict(io, report.verdict)}`);
            io.err(findingLines(io, report.findings).join("\n"));
            return ask(io, `Install ${bundle.name} anyway?`);
          },
          confirmReplace: (entry: LockEntry) =>
            ask(
              io,
              `${bundle.name} is installed from ${entry.source} ${entry.identifier}. Replace it with ${bundle.source} ${bundle.identifier}?`,
            ),
        }
      : {}),
  });
}

/** Prints an install outcome and returns the exit code: 0 done or cancelled, 1 refused, 2 needs -y/--force. */
function reportOutcome(outcome: InstallOutcome, io: SkillsIo): number {
  if (outcome.status === "refused") {
    if (outcome.report && outcome.reason !== "declined") {
      io.err(`Scan verdict for ${outcome.name}: ${paintVerdict(io, outcome.report.verdict)}`);
      io.err(findingLines(io, outcome.report.findings).join("\n"));
    }
    io.err(`hermes skills: ${outcome.message}`);
    if (outcome.reason === "declined") return 0;
    return outcome.reason === "dangerous" ? 1 : 2;
  }
  const { report } = outcome;
  if (report.verdict !== "safe") {
    io.err(`Scan verdict: ${paintVerdict(io, report.verdict)} (installed with --force or your confirmation)`);
    io.err(findingLines(io, report.findings, "high").join("\n"));
  }
  const verb = outcome.status === "updated" ? "Updated" : "Installed";
  io.out(
    `${verb} ${style(io, pc.cyan, outcome.name)} in ${tilde(outcome.dir)} (scan: ${report.verdict}, ${outcome.contentHash})`,
  );
  return 0;
}

export async function uninstallCommand(
  home: string,
  name: string,
  flags: { yes?: boolean },
  io: SkillsIo,
): Promise<number> {
  const ok = await confirmOrFail(
    io,
    `Uninstall the hub skill ${name} and delete its folder?`,
    "uninstall",
    flags.yes,
  );
  if (!ok) {
    io.err("Cancelled; nothing removed.");
    return 0;
  }
  const result = await uninstallSkill(home, name, () => io.now());
  io.out(
    result.removedFiles
      ? `Uninstalled ${name} (removed skills/${result.relPath}).`
      : `Uninstalled ${name} (its folder skills/${result.relPath} was already gone; removed the lock entry).`,
  );
  return 0;
}

const STATUS_TEXT: Record<CheckRow["status"], string> = {
  up_to_date: "up to date",
  update_available: "update available",
  unreachable: "source unreachable",
  missing: "folder missing",
};

export async function checkCommand(
  home: string,
  name: string | undefined,
  flags: { json?: boolean; update?: boolean; force?: boolean; yes?: boolean },
  io: SkillsIo,
  fetchOptions: FetchOptions,
): Promise<number> {
  if (!flags.json) io.err(name ? `Checking ${name} …` : "Checking hub skills against their sources …");
  const rows = await checkForUpdates(home, name, fetchOptions);
  let code = rows.some((r) => r.status === "unreachable" || r.status === "missing") ? 1 : 0;
  const applied: Array<{ name: string; status: string; message?: string }> = [];
  if (flags.update) {
    for (const row of rows) {
      if (row.status !== "update_available" || !row.bundle) continue;
      const outcome = await install(
        home,
        row.bundle,
        { name: row.name, force: flags.force, yes: flags.yes },
        io,
      );
      if (outcome.status === "refused") {
        applied.push({ name: row.name, status: `refused (${outcome.reason})`, message: outcome.message });
        if (outcome.reason !== "declined") code = Math.max(code, outcome.reason === "dangerous" ? 1 : 2);
        if (!flags.json) reportOutcome(outcome, io);
      } else {
        applied.push({ name: row.name, status: outcome.status });
      }
    }
  }
  if (flags.json) {
    io.out(
      JSON.stringify(
        {
          skills: rows.map(({ bundle: _bundle, ...rest }) => rest),
          ...(flags.update ? { applied } : {}),
        },
        null,
        2,
      ),
    );
    return code;
  }
  if (rows.length === 0) {
    io.out("No hub-installed skills.");
    return 0;
  }
  const paint = (fn: (s: string) => string) => (io.color ? fn : undefined);
  const lines = renderTable(
    [
      { header: "NAME", paint: paint(pc.cyan) },
      { header: "STATUS" },
      { header: "SOURCE" },
      { header: "DETAIL", flex: true, paint: paint(pc.dim) },
    ],
    rows.map((r) => {
      const done = applied.find((a) => a.name === r.name);
      const status = done ? (done.status === "updated" ? "updated" : done.status) : STATUS_TEXT[r.status];
      const detail =
        r.error ?? (r.status === "update_available" ? `${r.installedHash} → ${r.latestHash}` : r.identifier);
      return [r.name, status, r.source, detail];
    }),
    { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
  );
  io.out(lines.join("\n"));
  const available = rows.filter((r) => r.status === "update_available").length;
  if (available > 0 && !flags.update)
    io.err(`${plural(available, "update")} available; apply with: hermes skills check --update`);
  return code;
}

export async function auditCommand(
  home: string,
  name: string | undefined,
  flags: { json?: boolean; all?: boolean },
  io: SkillsIo,
): Promise<number> {
  const rows = await auditInstalled(home, { ...(name ? { name } : {}), ...(flags.all ? { all: true } : {}) });
  const dangerous = rows.some((r) => r.verdict === "dangerous");
  if (flags.json) {
    io.out(JSON.stringify(rows, null, 2));
    return dangerous ? 1 : 0;
  }
  if (rows.length === 0) {
    io.out(
      flags.all
        ? "No skills installed."
        : "No hub-installed skills to audit (pass --all to scan every skill).",
    );
    return 0;
  }
  const blocks = rows.map((r) => {
    const head = [
      style(io, pc.cyan, r.name),
      paintVerdict(io, r.verdict),
      style(io, pc.dim, `skills/${r.relPath}`),
      style(io, pc.dim, r.origin === "user" ? "local" : r.origin),
      r.modified ? style(io, pc.yellow, "modified since install") : "",
    ]
      .filter(Boolean)
      .join("  ");
    const body = r.error ? [`  could not read: ${r.error}`] : findingLines(io, r.findings);
    // A blank line after a skill with findings keeps the blocks apart; clean skills stay one line each.
    return body.length > 0 ? [head, ...body, ""].join("\n") : head;
  });
  io.out(blocks.join("\n").replace(/\n+$/, ""));
  const counts = (["dangerous", "caution", "safe"] as const)
    .map((v) => [v, rows.filter((r) => r.verdict === v).length] as const)
    .filter(([, n]) => n > 0)
    .map(([v, n]) => `${n} ${v}`);
  io.err(`Audited ${plural(rows.length, "skill")}: ${counts.join(", ")}.`);
  return dangerous ? 1 : 0;
}

/** Maps a hub error to the CLI's failure (same message, same exit code). */
export function toCliFailure(error: unknown): CliFailure | undefined {
  if (error instanceof HubError) return new CliFailure(error.message, error.exitCode);
  return undefined;
}
