/**
 * The read-only `hermes skills` subcommands: `list`, `view` and `search`.
 */
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import pc from "picocolors";
import { ago } from "../../../knowledge/curator/verbs.js";
import { safeRelPath } from "../../../knowledge/skills/hub/bundle.js";
import { type InstalledSkill, listInstalledSkills } from "../../../knowledge/skills/hub/installed.js";
import { readLock } from "../../../knowledge/skills/hub/lock.js";
import { readTree } from "../../../knowledge/skills/hub/maintenance.js";
import { fetchSkillsIndex, indexUrlFor, wellKnownIdentifier } from "../../../knowledge/skills/hub/remote.js";
import { HUB_ADAPTERS, SOURCE_NAMES, searchSources } from "../../../knowledge/skills/hub/router.js";
import type { SkillUsageRecord } from "../../../knowledge/skills/provenance.js";
import type { SkillOrigin } from "../../../knowledge/skills/types.js";
import { activityCount, latestActivityAt } from "../../../knowledge/skills/usage.js";
import { knowledgeStores } from "../../../knowledge/stores.js";
import { renderTable } from "../../format/table.js";
import { CliFailure, type SkillsIo, style } from "./io.js";

export type ListSource = "hub" | "bundled" | "local" | "all";

/** "user" reads as "local" to people; agent-made skills are local too. */
export function originLabel(origin: SkillOrigin): string {
  return origin === "user" ? "local" : origin;
}

function matchesSource(skill: InstalledSkill, source: ListSource): boolean {
  if (source === "all") return true;
  if (source === "local") return skill.origin === "user" || skill.origin === "agent";
  return skill.origin === source;
}

export async function listCommand(
  home: string,
  flags: { source: ListSource; json?: boolean },
  io: SkillsIo,
): Promise<number> {
  const lock = await readLock(home);
  const skills = (await listInstalledSkills(home, lock)).filter((s) => matchesSource(s, flags.source));
  // The home's usage store: skills/.usage.json, or the shared database on a postgres home.
  const usage = await knowledgeStores(home).skillUsage.read();
  if (flags.json) {
    io.out(
      JSON.stringify(
        skills.map((s) => ({
          name: s.name,
          category: s.category,
          origin: originLabel(s.origin),
          description: s.description,
          path: s.dir,
          ...(s.version ? { version: s.version } : {}),
          ...(s.origin === "hub" ? { hub: lockSummary(lock.installed[s.dirName]) } : {}),
          ...usageSummary(usage[s.name]),
        })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (skills.length === 0) {
    io.out(flags.source === "all" ? "No skills installed." : `No ${flags.source} skills installed.`);
    return 0;
  }
  const paint = (fn: (s: string) => string) => (io.color ? fn : undefined);
  const lines = renderTable(
    [
      { header: "NAME", paint: paint(pc.cyan) },
      { header: "CATEGORY", max: 24 },
      { header: "ORIGIN" },
      { header: "USES" },
      { header: "LAST ACTIVE" },
      { header: "DESCRIPTION", flex: true, paint: paint(pc.dim) },
    ],
    skills.map((s) => {
      const record = usage[s.name];
      // Bundled and hub skills are not tracked (as in Python Hermes): a dash, not a zero.
      const tracked = record !== undefined || s.origin === "user" || s.origin === "agent";
      return [
        s.name,
        s.category || "—",
        originLabel(s.origin),
        tracked ? String(activityCount(record)) : "—",
        tracked ? ago(latestActivityAt(record), new Date(io.now() * 1000)) : "—",
        s.description,
      ];
    }),
    { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
  );
  io.out(lines.join("\n"));
  return 0;
}

/** The usage fields `--json` adds: counts, last activity, lifecycle state, pin. */
function usageSummary(record: SkillUsageRecord | undefined): Record<string, unknown> {
  if (!record) return {};
  const last = latestActivityAt(record);
  return {
    use_count: record.use_count ?? 0,
    view_count: record.view_count ?? 0,
    patch_count: record.patch_count ?? 0,
    last_activity_at: last ? last.toISOString() : null,
    state: record.state ?? "active",
    pinned: record.pinned === true,
    created_by: record.created_by ?? null,
  };
}

function lockSummary(entry: { source: string; identifier: string; scan_verdict: string } | undefined) {
  return entry
    ? { source: entry.source, identifier: entry.identifier, scan_verdict: entry.scan_verdict }
    : undefined;
}

/** The installed skill called `name` (frontmatter name first, then folder name). */
export async function findInstalled(home: string, name: string): Promise<InstalledSkill> {
  const skills = await listInstalledSkills(home, await readLock(home));
  const found = skills.find((s) => s.name === name) ?? skills.find((s) => s.dirName === name);
  if (!found) throw new CliFailure(`no installed skill named "${name}". See: hermes skills list`);
  return found;
}

const LINKED_DIRS = ["references/", "templates/", "scripts/", "assets/"];

export async function viewCommand(
  home: string,
  name: string,
  file: string | undefined,
  flags: { json?: boolean },
  io: SkillsIo,
): Promise<number> {
  const skill = await findInstalled(home, name);
  const linked = [...(await readTree(skill.dir)).keys()]
    .filter((p) => LINKED_DIRS.some((d) => p.startsWith(d)))
    .sort();
  const rel = file === undefined ? "SKILL.md" : safeRelPath(file);
  if (!rel) throw new CliFailure(`"${file}" is not a path inside the skill.`, 2);
  const path = join(skill.dir, ...rel.split("/"));
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isFile()) {
    const hint = linked.length ? ` Its files: ${linked.join(", ")}` : "";
    throw new CliFailure(`${skill.name} has no file ${rel}.${hint}`);
  }
  const content = await readFile(path, "utf8");
  if (flags.json) {
    io.out(
      JSON.stringify(
        { name: skill.name, category: skill.category, path, file: rel, content, linkedFiles: linked },
        null,
        2,
      ),
    );
    return 0;
  }
  io.out(content.endsWith("\n") ? content.slice(0, -1) : content);
  if (file === undefined && linked.length > 0) {
    io.out(`\n${style(io, pc.bold, "Linked files")} (hermes skills view ${skill.name} FILE):`);
    io.out(linked.map((p) => `  ${p}`).join("\n"));
  }
  return 0;
}

interface SearchHit {
  name: string;
  description: string;
  source: string;
  trust?: string;
  identifier: string;
  installed: boolean;
  index?: string;
}

/** Every word of the query must appear in the name, description or tags (case-insensitive). */
function matchesQuery(words: readonly string[], ...fields: string[]): boolean {
  const hay = fields.join(" ").toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** `--source` values: the registries, `well-known` (indexes), `installed`, and `all`. */
export const SEARCH_SOURCES = [...SOURCE_NAMES, "installed", "all"];

/**
 * Which parts a search covers. Without --source: installed skills, the official skills and the
 * configured well-known indexes (nothing that needs a registry); `all`: every registry and index.
 */
export function searchPlan(source: string | undefined): {
  installed: boolean;
  indexes: boolean;
  registries: string[];
} {
  const registries = HUB_ADAPTERS.map((a) => a.id);
  if (source === undefined) return { installed: true, indexes: true, registries: ["official"] };
  if (!SEARCH_SOURCES.includes(source)) {
    throw new CliFailure(`unknown source "${source}"; use one of: ${SEARCH_SOURCES.join(", ")}.`, 2);
  }
  if (source === "all") return { installed: false, indexes: true, registries };
  if (source === "installed") return { installed: true, indexes: false, registries: [] };
  if (source === "well-known") return { installed: false, indexes: true, registries: [] };
  return { installed: false, indexes: false, registries: [source] };
}

export async function searchCommand(
  home: string,
  query: string,
  indexes: readonly string[],
  flags: { json?: boolean; limit: number; source?: string },
  io: SkillsIo,
  fetchOptions: { timeoutMs?: number },
): Promise<number> {
  const plan = searchPlan(flags.source);
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hits: SearchHit[] = [];
  const lock = await readLock(home);
  const installedNames = new Set<string>();
  for (const s of await listInstalledSkills(home, lock)) {
    installedNames.add(s.name);
    if (plan.installed && matchesQuery(words, s.name, s.description, s.tags.join(" "))) {
      hits.push({
        name: s.name,
        description: s.description,
        source: `installed (${originLabel(s.origin)})`,
        identifier: s.relPath,
        installed: true,
      });
    }
  }
  let failures = 0;
  if (plan.registries.length > 0) {
    const found = await searchSources(query, plan.registries, flags.limit, {
      env: io.env,
      home,
      ...(fetchOptions.timeoutMs ? { timeoutMs: fetchOptions.timeoutMs } : {}),
    });
    for (const r of found.results) {
      hits.push({
        name: r.name,
        description: r.description,
        source: r.source,
        trust: r.trust,
        identifier: r.identifier,
        installed: installedNames.has(r.name),
        index: r.source,
      });
    }
    for (const s of found.perSource.filter((p) => p.error)) {
      failures++;
      io.err(`hermes skills: ${s.source}: ${s.error}`);
    }
  }
  for (const raw of plan.indexes ? new Set(indexes.map(indexUrlFor)) : []) {
    try {
      const index = await fetchSkillsIndex(raw, fetchOptions);
      if (index.skipped > 0) io.err(`hermes skills: ${raw}: skipped ${index.skipped} malformed entries.`);
      for (const entry of index.skills) {
        if (!matchesQuery(words, entry.name, entry.description)) continue;
        hits.push({
          name: entry.name,
          description: entry.description,
          source: new URL(raw).host,
          trust: "community",
          identifier: wellKnownIdentifier(index.baseUrl, entry.name),
          installed: installedNames.has(entry.name),
          index: raw,
        });
      }
    } catch (error) {
      failures++;
      io.err(`hermes skills: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const shown = hits.slice(0, flags.limit);
  if (flags.json) {
    io.out(JSON.stringify(shown, null, 2));
    return 0;
  }
  if (shown.length === 0) {
    const where =
      flags.source !== undefined
        ? `source ${flags.source}`
        : indexes.length
          ? "installed skills or the configured indexes"
          : "installed skills";
    io.out(`No ${where} match "${query}".`);
    if (flags.source === undefined && indexes.length === 0 && failures === 0) {
      io.err(
        "(no skill indexes configured: add skills.hub_indexes to config.yaml or pass --index URL; --source all searches every registry)",
      );
    }
    return 0;
  }
  const paint = (fn: (s: string) => string) => (io.color ? fn : undefined);
  const lines = renderTable(
    [
      { header: "NAME", paint: paint(pc.cyan) },
      { header: "SOURCE", max: 28 },
      { header: "TRUST" },
      { header: "DESCRIPTION", flex: true, paint: paint(pc.dim) },
      { header: "INSTALL WITH" },
    ],
    shown.map((h) => [
      h.name,
      h.source,
      h.trust ?? "—",
      h.description,
      h.installed && !h.index ? "—" : h.identifier,
    ]),
    { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
  );
  io.out(lines.join("\n"));
  if (hits.length > shown.length) io.err(`(${shown.length} of ${hits.length}; pass --limit N to see more)`);
  if (shown.some((h) => h.index))
    io.err(
      "Inspect one with: hermes skills inspect IDENTIFIER; install with: hermes skills install IDENTIFIER",
    );
  return 0;
}
