/**
 * Which skills the prompt index shows first when it cannot show them all: the ones used most and
 * most recently, and the ones that fit the project the session starts in (its folder name and the
 * files at its top). Never the user's message: the system prompt is frozen before the first
 * message, for the prompt cache. Scoring is pure; {@link projectSignals} reads one directory.
 */
import { readdirSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { SkillUsageRecord } from "./provenance.js";
import type { SkillMeta } from "./types.js";
import { latestActivityAt } from "./usage.js";

/** Marker files and extensions → words a skill about that ecosystem would carry. */
const FILE_WORDS: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  [/^package\.json$/, ["node", "npm", "javascript", "js"]],
  [/^tsconfig.*\.json$|\.tsx?$/, ["typescript", "ts"]],
  [/^(pnpm-lock\.yaml|pnpm-workspace\.yaml)$/, ["pnpm"]],
  [/^yarn\.lock$/, ["yarn"]],
  [/^Cargo\.toml$|\.rs$/, ["rust", "cargo"]],
  [/^go\.mod$|\.go$/, ["go", "golang"]],
  [/^(pyproject\.toml|requirements.*\.txt|setup\.py|Pipfile|uv\.lock)$|\.py$/, ["python", "pip", "py"]],
  [/^(Dockerfile|docker-compose\.ya?ml|compose\.ya?ml)$/, ["docker", "container"]],
  [/^Gemfile$|\.rb$/, ["ruby", "rails"]],
  [/^(pom\.xml|build\.gradle(\.kts)?)$|\.java$/, ["java", "maven", "gradle"]],
  [/^\.git$/, ["git", "github"]],
  [/^\.github$/, ["github", "ci", "actions"]],
  [/^Makefile$/, ["make"]],
  [/\.tf$/, ["terraform", "infrastructure"]],
  [/^(k8s|kubernetes|helm|charts)$/, ["kubernetes", "k8s", "helm"]],
  [/\.ipynb$/, ["jupyter", "notebook", "data"]],
  [/\.(tex|bib)$/, ["latex", "paper", "arxiv"]],
  [/^(next\.config\.[cm]?js|vite\.config\.[cm]?[jt]s)$/, ["react", "web", "frontend"]],
  [/\.swift$|\.xcodeproj$/, ["swift", "ios", "apple"]],
];

/** Lowercase words of a name: "deploy-k8s_app.v2" → deploy, k8s, app, v2. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 2);
}

/** The project's words: its folder name and what its top-level files say about it. */
export function projectWords(dirName: string, files: readonly string[]): Set<string> {
  const out = new Set(words(dirName).filter((w) => w.length >= 3));
  for (const file of files) {
    for (const [pattern, tags] of FILE_WORDS) if (pattern.test(file)) for (const t of tags) out.add(t);
  }
  return out;
}

/** The top-level entries of `cwd` (at most 500; unreadable: none). */
export function projectSignals(cwd: string): { dirName: string; files: string[] } {
  let files: string[] = [];
  try {
    // Every session start asks (a server asks for the same folder each time): the listing is
    // kept while the folder's inode and mtime say no entry was added, removed or renamed.
    const st = statSync(cwd, { bigint: true });
    const stamp = `${st.ino}:${st.mtimeNs}`;
    const known = listings.get(cwd);
    const racy = Date.now() - Number(st.mtimeNs / 1_000_000n) < 2000;
    if (known && known.stamp === stamp && !racy) files = [...known.files];
    else {
      files = readdirSync(cwd).slice(0, 500);
      if (racy) listings.delete(cwd);
      else {
        listings.set(cwd, { stamp, files: [...files] });
        if (listings.size > 64) {
          const oldest = listings.keys().next().value;
          if (oldest !== undefined) listings.delete(oldest);
        }
      }
    }
  } catch {
    // Not readable: rank by usage alone.
  }
  return { dirName: basename(cwd), files };
}

const listings = new Map<string, { stamp: string; files: string[] }>();

const DAY = 86_400_000;

/**
 * A score per skill name: project fit (3 per matching word of its name, category or tags, up to
 * 9), usage (log2 of uses + views + patches, up to about 7) and recency (2 within a week, 1
 * within a month). Deterministic for the same inputs.
 */
export function rankSkills(
  skills: readonly SkillMeta[],
  usage: Readonly<Record<string, SkillUsageRecord>>,
  project: ReadonlySet<string>,
  now: Date,
): Map<string, number> {
  const scores = new Map<string, number>();
  for (const skill of skills) {
    const own = new Set([...words(skill.name), ...words(skill.category), ...skill.tags.flatMap(words)]);
    let fit = 0;
    for (const w of own) if (project.has(w)) fit += 3;
    const record = usage[skill.name];
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
    const activity = record ? num(record.use_count) + num(record.view_count) + num(record.patch_count) : 0;
    const last = latestActivityAt(record);
    const age = last ? now.getTime() - last.getTime() : Number.POSITIVE_INFINITY;
    const recency = age <= 7 * DAY ? 2 : age <= 30 * DAY ? 1 : 0;
    scores.set(skill.name, Math.min(fit, 9) + Math.log2(1 + activity) + recency);
  }
  return scores;
}
