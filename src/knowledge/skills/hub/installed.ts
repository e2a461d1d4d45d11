/**
 * The skills already in a home, as the hub needs to see them: where each lives, what it is called,
 * and who put it there (hub lock, bundled manifest, agent, or the user). A small reader of its own
 * so the hub does not depend on the skills core while both are in progress; it reads only
 * frontmatter and never follows symlinks out of the skills folder.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { registeredSkillUsage } from "../../stores.js";
import type { SkillOrigin } from "../types.js";
import { isRecord, readFrontmatter } from "./bundle.js";
import { type LockData, skillsRoot } from "./lock.js";

export interface InstalledSkill {
  /** Frontmatter name, else the folder name. */
  name: string;
  /** The folder name (what the hub uses as the install name). */
  dirName: string;
  description: string;
  /** Folder path between the skills root and the skill ("" at the top level). */
  category: string;
  tags: string[];
  version?: string;
  /** Absolute folder. */
  dir: string;
  /** Relative to the skills folder, POSIX (`devops/my-skill`). */
  relPath: string;
  origin: SkillOrigin;
}

const MAX_DEPTH = 4;

/**
 * Every skill folder under `<home>/skills` (folders holding SKILL.md; hidden folders such as
 * `.hub` and `.archive` are skipped; a skill folder is not searched for nested skills), sorted by
 * name. An absent skills folder gives an empty list.
 */
export async function listInstalledSkills(home: string, lock: LockData): Promise<InstalledSkill[]> {
  const root = skillsRoot(home);
  const bundled = await readBundledManifest(home);
  const agentMade = await readAgentCreated(home);
  const hubPaths = new Map(Object.entries(lock.installed).map(([name, e]) => [e.install_path, name]));
  const out: InstalledSkill[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const skillMd = join(dir, "SKILL.md");
    const stat = await lstat(skillMd).catch(() => undefined);
    if (stat?.isFile() && dir !== root) {
      const text = await readFile(skillMd, "utf8").catch(() => "");
      const fm = readFrontmatter(text);
      const relPath = relative(root, dir).split(sep).join("/");
      const dirName = relPath.split("/").pop() ?? relPath;
      const name = fm.name ?? dirName;
      const category = relPath.includes("/") ? relPath.slice(0, relPath.lastIndexOf("/")) : "";
      const origin: SkillOrigin = hubPaths.has(relPath)
        ? "hub"
        : bundled.has(name) || bundled.has(dirName)
          ? "bundled"
          : agentMade.has(name)
            ? "agent"
            : "user";
      out.push({
        name,
        dirName,
        description: fm.description ?? "",
        category,
        tags: fm.tags,
        ...(fm.version ? { version: fm.version } : {}),
        dir,
        relPath,
        origin,
      });
      return;
    }
    if (depth >= MAX_DEPTH) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules") {
        await visit(join(dir, entry.name), depth + 1);
      }
    }
  };
  await visit(root, 0);
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.relPath < b.relPath ? -1 : 1));
}

/** Names in `skills/.bundled_manifest` (`name:hash` lines, or plain names in the old format). */
async function readBundledManifest(home: string): Promise<Set<string>> {
  const text = await readFile(join(skillsRoot(home), ".bundled_manifest"), "utf8").catch(() => "");
  const names = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const name = line.split(":")[0]?.trim();
    if (name) names.add(name);
  }
  return names;
}

/** Skills the home's usage records (`skills/.usage.json`, or the shared database) mark as agent-made. */
async function readAgentCreated(home: string): Promise<Set<string>> {
  const names = new Set<string>();
  const shared = registeredSkillUsage(home);
  if (shared) {
    // Unreadable: nobody is marked as agent-made, as for a broken file.
    const records = await shared.read().catch(() => ({}));
    for (const [name, record] of Object.entries(records)) if (record.created_by === "agent") names.add(name);
    return names;
  }
  try {
    const data: unknown = JSON.parse(await readFile(join(skillsRoot(home), ".usage.json"), "utf8"));
    if (isRecord(data)) {
      const entries = isRecord(data["skills"]) ? data["skills"] : data;
      for (const [name, entry] of Object.entries(entries)) {
        if (isRecord(entry) && entry["created_by"] === "agent") names.add(name);
      }
    }
  } catch {
    // Missing or unreadable: nobody is marked as agent-made.
  }
  return names;
}
