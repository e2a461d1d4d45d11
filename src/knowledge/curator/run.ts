/**
 * One curator run: back up, apply the automatic transitions (stale, archive, reactivate), run the
 * consolidation review when it is on, record the state and write the report. One run at a time
 * per home, across processes (a file lock; a second run is refused, not queued). `dryRun` changes
 * nothing on disk except the report and the state's summary, as in Python Hermes.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { FileLockTimeoutError, withFileLock } from "../../util/file-lock.js";
import { createSkill, editSkill } from "../skills/manage.js";
import type { SkillsConfig } from "../skills/types.js";
import { isCuratorManaged, latestActivityAt } from "../skills/usage.js";
import { knowledgeStores } from "../stores.js";
import { skillGist } from "../write-approval/gate.js";
import { stageWrite } from "../write-approval/pending-shared.js";
import { type SkillLookup, skillBase } from "../write-approval/skill-diff.js";
import { archiveSkill, CuratorError, cronSkillNames, foreignOwner, homeSkills } from "./archive.js";
import { snapshotSkills } from "./backup.js";
import {
  type ConsolidationCandidate,
  consolidationPrompt,
  type MergeProposal,
  parseProposals,
} from "./consolidate.js";
import { type CuratorCandidate, curatorDue, planTransitions, transitionCounts } from "./lifecycle.js";
import { curatorLogsRoot, type RunReport, stateTransitions, writeRunReport } from "./report.js";
import { curatorSettings, skillWriteApproval } from "./settings.js";
import { readCuratorState, updateCuratorState } from "./state.js";

/** The auxiliary model's answer to the consolidation prompt. */
export type ConsolidationReviewer = (prompt: {
  system: string;
  user: string;
}) => Promise<{ text: string; model: string; provider: string }>;

export interface CuratorRunOptions {
  home: string;
  config: Readonly<Record<string, unknown>>;
  dryRun?: boolean;
  /** "manual" (hermes curator run, /curator run), "schedule" (gateway tick, after a CLI command). */
  trigger?: "manual" | "schedule";
  /** Overrides `curator.consolidate` for this run. */
  consolidate?: boolean;
  /** Asks the auxiliary model; absent: consolidation is skipped with a note in the report. */
  review?: ConsolidationReviewer;
  /**
   * The write-approval path: stages an umbrella SKILL.md for the user to approve (returns a
   * pending id). When `skills.write_approval` is on and this is absent, merges are only reported.
   */
  stageSkillWrite?: (name: string, content: string, reason: string) => Promise<string>;
  now?: () => Date;
  /**
   * Scheduled runs: re-check under the run lock that a run is still due, so two processes that
   * both found it due make one run (the second gets a `CuratorError`).
   */
  onlyIfDue?: boolean;
}

export interface CuratorRunResult {
  summary: string;
  report: RunReport;
  reportDir: string;
}

export const curatorRunLockPath = (home: string): string => join(curatorLogsRoot(home), ".run.lock");

/** Runs the curator once; throws `CuratorError` when another run holds the lock. */
export async function runCurator(options: CuratorRunOptions): Promise<CuratorRunResult> {
  const lock = curatorRunLockPath(options.home);
  mkdirSync(curatorLogsRoot(options.home), { recursive: true });
  try {
    return await withFileLock(lock, () => runLocked(options), { timeoutMs: 0 });
  } catch (error) {
    if (error instanceof FileLockTimeoutError) {
      throw new CuratorError("Another curator run is in progress for this home; try again when it ends.");
    }
    throw error;
  }
}

async function runLocked(options: CuratorRunOptions): Promise<CuratorRunResult> {
  const { home, config } = options;
  const clock = options.now ?? (() => new Date());
  const started = clock();
  const dryRun = options.dryRun === true;
  const settings = curatorSettings(config);
  if (options.onlyIfDue) {
    const decision = curatorDue(readCuratorState(home), settings, started, Number.POSITIVE_INFINITY);
    if (!decision.due) throw new CuratorError(`The curator is not due: ${decision.reason}.`);
  }
  // The home's usage store (the shared database on a postgres home), as pins and states are written.
  const usageStore = knowledgeStores(home).skillUsage;
  const usage = await usageStore.read();
  const cron = cronSkillNames(home);
  const installed = homeSkills(home).filter((s) => !foreignOwner(home, s.name));
  const candidates: CuratorCandidate[] = installed.map((s) => ({
    name: s.name,
    record: usage[s.name],
    cronReferenced: cron.has(s.name),
  }));
  const plan = planTransitions(candidates, settings, started);

  let backup: string | null = null;
  if (!dryRun && settings.backup.enabled) {
    backup = (
      await snapshotSkills(home, { reason: "pre-curator-run", keep: settings.backup.keep, now: started })
    ).id;
  }

  const archived: string[] = [];
  if (!dryRun) {
    for (const t of plan.transitions.filter((x) => x.action === "archive")) {
      await archiveSkill(home, t.name, { now: started });
      archived.push(t.name);
    }
    const states = new Map(
      plan.transitions
        .filter((t) => t.action !== "archive")
        .map((t) => [t.name, t.action === "stale" ? "stale" : "active"]),
    );
    if (states.size > 0) {
      await usageStore.mutate((data) => {
        for (const [name, state] of states) {
          const record = data[name];
          if (record) record.state = state;
        }
      });
    }
  }

  const report: RunReport = {
    started_at: started.toISOString().replace("Z", "+00:00"),
    duration_seconds: 0,
    dry_run: dryRun,
    trigger: options.trigger ?? "manual",
    model: "",
    provider: "",
    backup,
    auto_transitions: transitionCounts(plan),
    counts: {},
    archived,
    consolidated: [],
    pruned: archived.map((name) => ({ name, reason: "no activity" })),
    added: [],
    state_transitions: stateTransitions(plan.transitions),
    proposals: [],
    rejected: [],
    llm_summary: "",
    llm_error: null,
  };

  const consolidate = options.consolidate ?? settings.consolidate;
  if (!consolidate) report.llm_summary = "skipped (curator.consolidate is off)";
  else await consolidationPass(options, report, dryRun, started, new Set(archived));

  const before = installed.filter((s) => isCuratorManaged(usage[s.name])).length;
  const usageAfter = dryRun ? usage : await usageStore.read();
  const after = dryRun ? before : homeSkills(home).filter((s) => isCuratorManaged(usageAfter[s.name])).length;
  report.counts = {
    before,
    after,
    archived_this_run: report.archived.length,
    consolidated_this_run: report.consolidated.length,
    added_this_run: report.added.length,
    state_transitions: report.state_transitions.length,
  };
  report.duration_seconds = Math.round((clock().getTime() - started.getTime()) / 10) / 100;
  const reportDir = writeRunReport(home, report, started);
  // A shared backend (PostgreSQL) keeps the run's record for every instance's listings.
  await knowledgeStores(home).curatorReports?.add(basename(reportDir), { ...report });
  const summary = summarize(report);
  await updateCuratorState(home, (state) => {
    if (!dryRun) {
      state.last_run_at = report.started_at;
      state.run_count = (typeof state.run_count === "number" ? state.run_count : 0) + 1;
      state.last_run_duration_seconds = report.duration_seconds;
    }
    state.last_run_summary = summary;
    state.last_report_path = reportDir;
  });
  return { summary, report, reportDir };
}

/** "auto: 2 marked stale, 1 archived; llm: …" as Python Hermes words its one-line summary. */
export function summarize(r: RunReport): string {
  const a = r.auto_transitions;
  const parts = [
    a["marked_stale"] ? `${a["marked_stale"]} marked stale` : "",
    a["archived"] ? `${a["archived"]} archived` : "",
    a["reactivated"] ? `${a["reactivated"]} reactivated` : "",
  ].filter(Boolean);
  return `${r.dry_run ? "dry-run auto: " : "auto: "}${parts.join(", ") || "no changes"}; llm: ${r.llm_summary || "skipped"}`;
}

async function consolidationPass(
  options: CuratorRunOptions,
  report: RunReport,
  dryRun: boolean,
  now: Date,
  archivedNow: ReadonlySet<string>,
): Promise<void> {
  const { home, config } = options;
  const usage = await knowledgeStores(home).skillUsage.read();
  const cron = cronSkillNames(home);
  const all = homeSkills(home);
  const pool = all.filter(
    (s) =>
      !archivedNow.has(s.name) &&
      !foreignOwner(home, s.name) &&
      isCuratorManaged(usage[s.name]) &&
      usage[s.name]?.pinned !== true &&
      !cron.has(s.name),
  );
  if (pool.length < 2) {
    report.llm_summary = "skipped (fewer than two curator-managed skills to compare)";
    return;
  }
  if (!options.review) {
    report.llm_summary = "skipped (no model available for auxiliary.curator)";
    return;
  }
  const candidates: ConsolidationCandidate[] = pool.map((s) => {
    const record = usage[s.name];
    let content = "";
    try {
      content = readFileSync(s.file, "utf8");
    } catch {
      content = `(SKILL.md unreadable) ${s.description}`;
    }
    return {
      name: s.name,
      description: s.description,
      content,
      useCount: typeof record?.use_count === "number" ? record.use_count : 0,
      lastActivity: latestActivityAt(record)?.toISOString() ?? null,
    };
  });
  const known = new Set(pool.map((s) => s.name));
  // Everything installed but not in the pool may be neither absorbed nor overwritten.
  const guarded = new Set(all.map((s) => s.name).filter((n) => !known.has(n)));
  let answer: { text: string; model: string; provider: string };
  try {
    answer = await options.review(consolidationPrompt(candidates));
  } catch (error) {
    report.llm_error = error instanceof Error ? error.message : String(error);
    report.llm_summary = "error (see llm_error)";
    return;
  }
  report.model = answer.model;
  report.provider = answer.provider;
  const parsed = parseProposals(answer.text, known, guarded);
  report.rejected = parsed.rejected;
  const approval = skillWriteApproval(config);
  for (const merge of parsed.merges) {
    if (dryRun) {
      report.proposals.push({ ...proposalOf(merge), status: "dry run: not applied" });
    } else if (approval) {
      const stage =
        options.stageSkillWrite ?? ((name, content, reason) => stageMerge(options, name, content, reason));
      const id = await stage(merge.into, merge.skillMd, merge.reason);
      report.proposals.push({
        ...proposalOf(merge),
        status: `staged for approval as ${id}; archive ${merge.from.join(", ")} after approving it`,
      });
    } else {
      await applyMerge(options, merge, known, now, report);
    }
  }
  const applied = report.consolidated.length;
  report.llm_summary =
    `${parsed.merges.length} merge(s) proposed` +
    (applied ? `, ${applied} skill(s) merged` : "") +
    (parsed.rejected.length ? `, ${parsed.rejected.length} dropped` : "");
}

/**
 * Queues a merge under `pending/skills/` as the `edit` a `skill_manage` call would stage, so
 * `/skills diff|approve ID` review it like any other skill write (with the stale check).
 */
async function stageMerge(options: CuratorRunOptions, name: string, content: string, reason: string) {
  const payload = { action: "edit", name, content };
  const skills = options.config["skills"];
  const lookup: SkillLookup = {
    home: options.home,
    ...(skills && typeof skills === "object" ? { config: skills as SkillsConfig } : {}),
  };
  const record = await stageWrite(options.home, "skills", {
    payload,
    summary: `${skillGist(payload)} (curator: ${reason})`,
    origin: "curator",
    base: skillBase(lookup, payload),
  });
  return record.id;
}

const proposalOf = (m: MergeProposal) => ({ into: m.into, from: m.from, reason: m.reason });

async function applyMerge(
  options: CuratorRunOptions,
  merge: MergeProposal,
  known: ReadonlySet<string>,
  now: Date,
  report: RunReport,
): Promise<void> {
  const ctx = { home: options.home, createdBy: "agent" as const, now: () => now };
  try {
    if (known.has(merge.into)) await editSkill(ctx, { name: merge.into, content: merge.skillMd });
    else {
      await createSkill(ctx, { name: merge.into, content: merge.skillMd });
      report.added.push(merge.into);
    }
  } catch (error) {
    report.rejected.push({
      proposal: `${merge.from.join(", ")} → ${merge.into}`,
      why: `writing the umbrella failed: ${error instanceof Error ? error.message : String(error)}`,
    });
    return;
  }
  for (const name of merge.from) {
    await archiveSkill(options.home, name, { now });
    report.archived.push(name);
    report.consolidated.push({ name, into: merge.into, reason: merge.reason });
  }
}
