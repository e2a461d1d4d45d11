/**
 * The curator's verbs, shared by `hermes curator …` and `/curator …`: each takes a parsed request
 * and returns the lines to show and an exit code (0 done, 1 refused or failed, 2 usage). Argument
 * parsing stays with the surfaces; nothing here prints.
 */
import type { Env } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import { shareSkillChanges, unsharedLines } from "../skills/share.js";
import { activityCount, isCuratorManaged, latestActivityAt, parseIsoTime } from "../skills/usage.js";
import { knowledgeStores } from "../stores.js";
import {
  archiveSkill,
  CuratorError,
  foreignOwner,
  homeSkills,
  listArchived,
  restoreSkill,
} from "./archive.js";
import { listBackups, rollbackSkills, snapshotSkills } from "./backup.js";
import { curatorDue } from "./lifecycle.js";
import { auxiliaryCuratorReviewer } from "./reviewer.js";
import { runCurator } from "./run.js";
import { curatorSettings } from "./settings.js";
import { readCuratorState, updateCuratorState } from "./state.js";

export const CURATOR_VERBS = [
  "status",
  "run",
  "pause",
  "resume",
  "pin",
  "unpin",
  "archive",
  "restore",
  "list-archived",
  "prune",
  "backup",
  "rollback",
] as const;
export type CuratorVerb = (typeof CURATOR_VERBS)[number];

export interface CuratorRequest {
  verb: CuratorVerb;
  /** The skill for pin, unpin, archive, restore. */
  name?: string | undefined;
  dryRun?: boolean;
  background?: boolean;
  /** `rollback --list`. */
  list?: boolean;
  /** `rollback --id ID`. */
  id?: string | undefined;
  /** `prune --days N` (default curator.archive_after_days). */
  days?: number | undefined;
  /** `prune --yes`: archive without a second look. */
  yes?: boolean;
}

export interface CuratorDeps {
  home: string;
  config: HermesConfig;
  env: Env;
  now?: () => Date;
  /** Starts `run` in another process and returns its pid (the CLI's `--background`). */
  startBackground?: (request: CuratorRequest) => number;
}

export interface CuratorOutcome {
  lines: string[];
  exitCode: 0 | 1 | 2;
}

const ok = (...lines: string[]): CuratorOutcome => ({ lines, exitCode: 0 });
const fail = (line: string, exitCode: 1 | 2 = 1): CuratorOutcome => ({ lines: [line], exitCode });

/** "never", "just now", "5m ago", "3h ago", "12d ago". */
export function ago(at: Date | undefined, now: Date): string {
  if (!at) return "never";
  const s = Math.max(0, Math.floor((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** Runs one verb. Expected refusals come back as exit code 1 with the reason, never as throws. */
export async function runCuratorVerb(request: CuratorRequest, deps: CuratorDeps): Promise<CuratorOutcome> {
  const needsName = ["pin", "unpin", "archive", "restore"].includes(request.verb);
  if (needsName && !request.name?.trim()) return fail(`curator ${request.verb} needs a skill name.`, 2);
  try {
    return await dispatch(request, deps);
  } catch (error) {
    if (error instanceof CuratorError) return fail(error.message, error.exitCode);
    throw error;
  }
}

async function dispatch(request: CuratorRequest, deps: CuratorDeps): Promise<CuratorOutcome> {
  const { home, config } = deps;
  const now = (deps.now ?? (() => new Date()))();
  const settings = curatorSettings(config);
  const name = request.name?.trim() ?? "";
  switch (request.verb) {
    case "status":
      return ok(...(await statusLines(deps, now)));
    case "run": {
      if (!settings.enabled && !request.dryRun) {
        return fail("The curator is disabled (curator.enabled: false); `--dry-run` still previews it.");
      }
      if (request.background && deps.startBackground) {
        const pid = deps.startBackground({ ...request, background: false });
        return ok(`Curator run started in the background (pid ${pid}); see: hermes curator status`);
      }
      const review = auxiliaryCuratorReviewer(config, deps.env, home);
      const result = await runCurator({
        home,
        config,
        trigger: "manual",
        dryRun: request.dryRun === true,
        ...(review ? { review } : {}),
        ...(deps.now ? { now: deps.now } : {}),
      });
      const lines = [`curator: ${result.summary}`];
      for (const t of result.report.state_transitions)
        lines.push(`  ${t.name}: ${t.from} → ${t.to}${request.dryRun ? " (would be)" : ""}`);
      for (const p of result.report.proposals)
        lines.push(`  proposed: ${p.from.join(", ")} → ${p.into} (${p.status})`);
      if (result.report.backup) lines.push(`backup: ${result.report.backup}`);
      lines.push(`report: ${result.reportDir}/REPORT.md`);
      if (request.dryRun) lines.push("dry run: nothing was changed; `hermes curator run` applies it.");
      return ok(...lines);
    }
    case "pause":
    case "resume": {
      await updateCuratorState(home, (s) => {
        s.paused = request.verb === "pause";
      });
      return ok(request.verb === "pause" ? "curator: paused" : "curator: resumed");
    }
    case "pin":
    case "unpin": {
      const owner = foreignOwner(home, name);
      if (owner)
        return fail(
          `"${name}" is ${owner}; the curator never touches it, so there is nothing to ${request.verb}.`,
        );
      if (!homeSkills(home).some((s) => s.name === name)) {
        return fail(`No skill named "${name}" is installed. See: hermes skills list`);
      }
      const pinned = request.verb === "pin";
      // The home's usage store: on a postgres home the pin holds on every instance.
      await knowledgeStores(home).skillUsage.mutate((data) => {
        data[name] = { ...(data[name] ?? {}), pinned };
      });
      return ok(pinned ? `pinned "${name}": the curator leaves it alone` : `unpinned "${name}"`);
    }
    case "archive": {
      const result = await archiveSkill(home, name, { now });
      return ok(`archived "${name}" to ${result.to}; undo with: hermes curator restore ${name}`);
    }
    case "restore": {
      const result = await restoreSkill(home, name, { now });
      return ok(`restored "${name}" to ${result.to}`);
    }
    case "list-archived": {
      const archived = listArchived(home);
      if (archived.length === 0) return ok("No archived skills.");
      const width = Math.max(...archived.map((a) => a.name.length)) + 2;
      return ok(
        `${archived.length} archived skill(s):`,
        ...archived.map(
          (a) =>
            `  ${a.name.padEnd(width)}archived ${ago(parseIsoTime(a.archivedAt), now)}  ${a.description.slice(0, 60)}`,
        ),
      );
    }
    case "prune":
      return prune(request, deps, now);
    case "backup": {
      const info = await snapshotSkills(home, { reason: "manual", keep: settings.backup.keep, now });
      return ok(
        `backup ${info.id}: ${info.skillFiles} skill(s), ${info.archiveBytes} bytes, in ${info.path}`,
      );
    }
    case "rollback": {
      if (request.list) {
        const all = listBackups(home);
        if (all.length === 0) return ok("No curator backups yet (hermes curator backup makes one).");
        return ok(
          ...all.map(
            (b) =>
              `${b.id.padEnd(24)}  ${b.reason.slice(0, 40).padEnd(40)}  ${String(b.skillFiles).padStart(4)} skills`,
          ),
        );
      }
      const { restored, safety } = await rollbackSkills(home, {
        id: request.id,
        keep: settings.backup.keep,
        now,
      });
      // A shared backend (PostgreSQL) stores the restored tree for every instance.
      // The live skills and the archive in one step, so they never disagree on another instance.
      const shared = await shareSkillChanges(home, { includeNew: true, tree: true });
      const unshared = unsharedLines(shared);
      const line = `restored skills from backup ${restored.id}; the tree before it is backup ${safety.id}`;
      return unshared.length > 0 ? { lines: [line, ...unshared], exitCode: 1 } : ok(line);
    }
  }
}

async function prune(request: CuratorRequest, deps: CuratorDeps, now: Date): Promise<CuratorOutcome> {
  const settings = curatorSettings(deps.config);
  const days = request.days ?? settings.archiveAfterDays;
  if (!Number.isFinite(days) || days < 1)
    return fail(`--days must be a whole number of at least 1, got ${days}.`, 2);
  const usage = await knowledgeStores(deps.home).skillUsage.read();
  const candidates = homeSkills(deps.home)
    .filter(
      (s) =>
        !foreignOwner(deps.home, s.name) && isCuratorManaged(usage[s.name]) && usage[s.name]?.pinned !== true,
    )
    .map((s) => {
      const at = latestActivityAt(usage[s.name]) ?? parseIsoTime(usage[s.name]?.created_at);
      return { name: s.name, idle: at ? Math.floor((now.getTime() - at.getTime()) / 86_400_000) : undefined };
    })
    .filter((c): c is { name: string; idle: number } => c.idle !== undefined && c.idle >= days)
    .sort((a, b) => b.idle - a.idle);
  if (candidates.length === 0)
    return ok(`Nothing to prune: no unpinned agent-made skill idle ${days} days or more.`);
  const lines = [
    `${candidates.length} skill(s) idle ${days} days or more:`,
    ...candidates.map((c) => `  ${c.name} (idle ${c.idle}d)`),
  ];
  if (request.dryRun || !request.yes) {
    lines.push(
      request.dryRun ? "dry run: nothing was archived." : "Nothing archived yet: add --yes to archive them.",
    );
    return ok(...lines);
  }
  for (const c of candidates) await archiveSkill(deps.home, c.name, { now });
  lines.push(`archived ${candidates.length}; restore any with: hermes curator restore NAME`);
  return ok(...lines);
}

async function statusLines(deps: CuratorDeps, now: Date): Promise<string[]> {
  const settings = curatorSettings(deps.config);
  const state = readCuratorState(deps.home);
  const usage = await knowledgeStores(deps.home).skillUsage.read();
  const last = parseIsoTime(state.last_run_at);
  const due = curatorDue(state, settings, now, Number.POSITIVE_INFINITY);
  const lines = [
    `curator: ${state.paused ? "PAUSED" : settings.enabled ? "ENABLED" : "DISABLED"}`,
    `  runs:          ${state.run_count ?? 0}`,
    `  last run:      ${ago(last, now)}`,
    `  last summary:  ${state.last_run_summary ?? "(none)"}`,
    ...(state.last_report_path ? [`  last report:   ${state.last_report_path}`] : []),
    `  next run:      ${due.due ? "due now (waits for idle)" : due.reason}`,
    `  interval:      every ${settings.intervalHours} h, after ${settings.minIdleHours} h idle`,
    `  stale after:   ${settings.staleAfterDays} d unused; archive after ${settings.archiveAfterDays} d`,
    `  consolidate:   ${settings.consolidate ? "on (auxiliary.curator)" : "off"}`,
    `  backups:       ${settings.backup.enabled ? `on, keep ${settings.backup.keep}` : "off"} (${listBackups(deps.home).length} now)`,
  ];
  const skills = homeSkills(deps.home).filter((s) => !foreignOwner(deps.home, s.name));
  const managed = skills.filter((s) => isCuratorManaged(usage[s.name]));
  const byState = (st: string) => managed.filter((s) => (usage[s.name]?.state ?? "active") === st).length;
  lines.push(
    "",
    `agent-made skills (curator-managed): ${managed.length}  active ${byState("active")}  stale ${byState("stale")}  archived ${listArchived(deps.home).length}`,
    `your own skills (never curated): ${skills.length - managed.length}`,
  );
  const pinned = skills.filter((s) => usage[s.name]?.pinned === true).map((s) => s.name);
  if (pinned.length > 0) lines.push(`pinned: ${pinned.join(", ")}`);
  const quiet = managed
    .map((s) => ({ name: s.name, record: usage[s.name] }))
    .sort(
      (a, b) => (latestActivityAt(a.record)?.getTime() ?? 0) - (latestActivityAt(b.record)?.getTime() ?? 0),
    )
    .slice(0, 5);
  if (quiet.length > 0) {
    lines.push("least recently active:");
    for (const q of quiet)
      lines.push(
        `  ${q.name}  activity=${activityCount(q.record)}  last=${ago(latestActivityAt(q.record), now)}`,
      );
  }
  return lines;
}

/**
 * Parses `/curator` arguments (`run --dry-run`, `pin NAME`, `rollback --id ID`, `prune --days 60
 * --yes`). Returns the request or a usage message.
 */
export function parseCuratorArgs(text: string): CuratorRequest | { usage: string } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const verb = (words.shift() ?? "status").toLowerCase();
  if (!(CURATOR_VERBS as readonly string[]).includes(verb)) {
    return { usage: `Unknown curator verb "${verb}". Verbs: ${CURATOR_VERBS.join(", ")}.` };
  }
  const request: CuratorRequest = { verb: verb as CuratorVerb };
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === "--dry-run") request.dryRun = true;
    else if (word === "--background") request.background = true;
    else if (word === "--list") request.list = true;
    else if (word === "--yes" || word === "-y") request.yes = true;
    else if (word === "--id") request.id = words[++i];
    else if (word === "--days") request.days = Number(words[++i]);
    else if (!word.startsWith("-") && request.name === undefined) request.name = word;
    else return { usage: `curator ${verb}: unexpected "${word}".` };
  }
  return request;
}
