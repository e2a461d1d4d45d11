/**
 * The learning timeline (`hermes journey`, `/journey`): what the agent learned when, and from
 * which session. Sources, merged by time:
 * - state.db's `memory` and `skill_manage` calls (successful ones), with their session;
 * - `skills/.usage.json` for skills whose making was not recorded there (another machine, a
 *   Python Hermes, the hand of the user): their `created_at` and last patch;
 * - the curator's reports (`logs/curator/*\/run.json`) for archives and merges;
 * - memory entries still in MEMORY.md / USER.md that no recorded call explains (dated by the file).
 * Building the timeline is pure ({@link buildJourney}); {@link collectJourney} reads the files.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type LearningCall, readLearningCalls } from "../state/learning-calls.js";
import { sessionStorePath } from "../state/sqlite-store.js";
import { curatorLogsRoot } from "./curator/report.js";
import { MemoryStore } from "./memory/store.js";
import { readUsage, type SkillUsageRecord } from "./skills/provenance.js";
import { parseIsoTime } from "./skills/usage.js";
import { knowledgeStores, registeredSkillUsage } from "./stores.js";

export type JourneyKind = "memory" | "user" | "skill";

export interface JourneyEvent {
  /** ISO time (UTC). */
  at: string;
  kind: JourneyKind;
  /** added, replaced, removed (memory); created, patched, archived, merged, restored (skills). */
  action: string;
  /** The memory entry's text or the skill's name. */
  subject: string;
  detail?: string;
  sessionId?: string;
  /** Where it happened: the session's source (cli, telegram, review, ...), "curator", or "files". */
  source: string;
}

export interface CuratorRunRecord {
  started_at: string;
  archived?: string[];
  consolidated?: { name: string; into: string }[];
  added?: string[];
  dry_run?: boolean;
}

export interface JourneyInputs {
  calls: readonly LearningCall[];
  usage: Readonly<Record<string, SkillUsageRecord>>;
  /** Entries now in MEMORY.md / USER.md, with the file's modification time. */
  memory: readonly { target: "memory" | "user"; entries: readonly string[]; mtime: Date | undefined }[];
  curatorRuns: readonly CuratorRunRecord[];
}

const iso = (d: Date) => d.toISOString();

function succeeded(result: string | null): boolean {
  if (result === null) return false;
  if (/"success"\s*:\s*false/.test(result) || /^\s*\{\s*"error"/.test(result)) return false;
  return true;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

function memoryEvents(
  call: LearningCall,
  base: Omit<JourneyEvent, "kind" | "action" | "subject">,
): JourneyEvent[] {
  const ops = Array.isArray(call.args["operations"])
    ? (call.args["operations"] as Record<string, unknown>[])
    : [call.args];
  const events: JourneyEvent[] = [];
  for (const op of ops) {
    const action = str(op["action"]) || "add";
    if (action === "read") continue;
    const kind: JourneyKind = str(op["target"] ?? call.args["target"]) === "user" ? "user" : "memory";
    const past =
      action === "add"
        ? "added"
        : action === "replace"
          ? "replaced"
          : action === "remove"
            ? "removed"
            : action;
    const subject = action === "remove" ? str(op["old_text"]) : str(op["content"]);
    events.push({
      ...base,
      kind,
      action: past,
      subject,
      ...(action === "replace" && str(op["old_text"]) ? { detail: `was: ${str(op["old_text"])}` } : {}),
    });
  }
  return events;
}

const SKILL_ACTIONS: Record<string, string> = {
  create: "created",
  patch: "patched",
  edit: "patched",
  write_file: "patched",
  remove_file: "patched",
  delete: "deleted",
};

/** The timeline, oldest first. */
export function buildJourney(inputs: JourneyInputs): JourneyEvent[] {
  const events: JourneyEvent[] = [];
  const createdInSessions = new Set<string>();
  const memorySeen = new Set<string>();
  for (const call of inputs.calls) {
    if (!succeeded(call.result)) continue;
    const base = {
      at: iso(new Date(call.timestamp * 1000)),
      sessionId: call.sessionId,
      source: call.source,
    };
    if (call.tool === "memory") {
      for (const e of memoryEvents(call, base)) {
        events.push(e);
        if (e.action !== "removed") memorySeen.add(e.subject.trim());
      }
      continue;
    }
    const action = SKILL_ACTIONS[str(call.args["action"])];
    const name = str(call.args["name"]);
    if (!action || !name) continue;
    if (action === "created") createdInSessions.add(name);
    const file = str(call.args["file_path"]);
    events.push({ ...base, kind: "skill", action, subject: name, ...(file ? { detail: file } : {}) });
  }
  for (const [name, record] of Object.entries(inputs.usage)) {
    if (createdInSessions.has(name)) continue;
    const created = parseIsoTime(record.created_at);
    if (created) {
      events.push({
        at: iso(created),
        kind: "skill",
        action: "created",
        subject: name,
        detail: record.created_by === "agent" ? "by the background review" : "outside a recorded session",
        source: "files",
      });
    }
  }
  for (const run of inputs.curatorRuns) {
    if (run.dry_run) continue;
    const at = parseIsoTime(run.started_at);
    if (!at) continue;
    const merged = new Map((run.consolidated ?? []).map((c) => [c.name, c.into]));
    for (const name of run.archived ?? []) {
      const into = merged.get(name);
      events.push({
        at: iso(at),
        kind: "skill",
        action: into ? "merged" : "archived",
        subject: name,
        ...(into ? { detail: `into ${into}` } : { detail: "unused" }),
        source: "curator",
      });
    }
    for (const name of run.added ?? []) {
      events.push({
        at: iso(at),
        kind: "skill",
        action: "created",
        subject: name,
        detail: "umbrella",
        source: "curator",
      });
    }
  }
  for (const file of inputs.memory) {
    for (const entry of file.entries) {
      if (memorySeen.has(entry.trim())) continue;
      events.push({
        at: iso(file.mtime ?? new Date(0)),
        kind: file.target,
        action: "added",
        subject: entry,
        detail: "not in a recorded session (dated by the file)",
        source: "files",
      });
    }
  }
  return events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

function readCuratorRuns(home: string): CuratorRunRecord[] {
  const root = curatorLogsRoot(home);
  let dirs: string[];
  try {
    dirs = readdirSync(root).sort();
  } catch {
    return [];
  }
  const runs: CuratorRunRecord[] = [];
  for (const dir of dirs) {
    try {
      const data = JSON.parse(readFileSync(join(root, dir, "run.json"), "utf8")) as CuratorRunRecord;
      if (data && typeof data.started_at === "string") runs.push(data);
    } catch {
      // Not a run folder (the lock file) or an unreadable report: skipped.
    }
  }
  return runs;
}

function mtime(path: string): Date | undefined {
  try {
    return statSync(path).mtime;
  } catch {
    return undefined;
  }
}

/**
 * Reads every source of the home and builds the timeline. A broken state.db is reported by
 * throwing. On a postgres home the caller passes what the shared database holds: `usage` (skill
 * usage records), `calls` (the recorded memory/skill_manage calls) and `memory` (the entries with
 * when each target last changed); each defaults to the home's files (`skills/.usage.json`,
 * state.db, MEMORY.md / USER.md).
 */
export function collectJourney(
  home: string,
  options: {
    usage?: Readonly<Record<string, SkillUsageRecord>>;
    calls?: readonly LearningCall[];
    memory?: JourneyInputs["memory"];
    curatorRuns?: readonly CuratorRunRecord[];
  } = {},
): JourneyEvent[] {
  const store = MemoryStore.forHome(home, {});
  return buildJourney({
    calls: options.calls ?? readLearningCalls(sessionStorePath(home)),
    usage: options.usage ?? readUsage(home),
    memory:
      options.memory ??
      (["memory", "user"] as const).map((target) => ({
        target,
        entries: store.entries(target),
        mtime: mtime(store.path(target)),
      })),
    curatorRuns: options.curatorRuns ?? readCuratorRuns(home),
  });
}

/**
 * The timeline of `home` from its stores (`knowledgeStores(home)`): on a postgres home the shared
 * database's recorded calls, memory entries (dated by their last change) and skill usage; on a
 * file home the files, as {@link collectJourney} reads them.
 */
export async function collectHomeJourney(home: string): Promise<JourneyEvent[]> {
  const stores = knowledgeStores(home);
  if (!stores.learningCalls) {
    const shared = registeredSkillUsage(home);
    return collectJourney(home, shared ? { usage: await shared.read() } : {});
  }
  const memory = stores.memory();
  const targets = await Promise.all(
    (["memory", "user"] as const).map(async (target) => ({
      target,
      entries: await memory.entries(target),
      mtime: await memory.updatedAt?.(target),
    })),
  );
  // The curator's runs as every instance recorded them (each instance's logs/ holds only its own).
  const runs = stores.curatorReports
    ? (await stores.curatorReports.list())
        .map((entry) => entry.report as unknown as CuratorRunRecord)
        .filter((run) => typeof run.started_at === "string")
    : undefined;
  return collectJourney(home, {
    usage: await stores.skillUsage.read(),
    calls: await stores.learningCalls(),
    memory: targets,
    ...(runs ? { curatorRuns: runs } : {}),
  });
}

/** One line per event: "2026-11-20 14:03  skill   created  deploy-app  (cli session 2026…)". */
export function formatJourney(events: readonly JourneyEvent[]): string[] {
  if (events.length === 0) return ["Nothing learned yet: no memories or skills have been saved."];
  const label: Record<JourneyKind, string> = { memory: "memory", user: "user  ", skill: "skill " };
  return events.map((e) => {
    const when = `${e.at.slice(0, 10)} ${e.at.slice(11, 16)}`;
    const subject = e.subject.replace(/\s+/g, " ").trim();
    const shown = subject.length > 70 ? `${subject.slice(0, 69)}…` : subject;
    const where = e.sessionId ? `${e.source} session ${e.sessionId}` : e.source;
    return `${when}  ${label[e.kind]}  ${e.action.padEnd(8)}  ${shown}${e.detail ? ` — ${e.detail}` : ""}  (${where})`;
  });
}
