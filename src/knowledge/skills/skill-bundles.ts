/**
 * Skill bundles: `<home>/skill-bundles/<slug>.yaml` names several skills (and an optional
 * instruction) that `/<slug> [request]` loads together, as in Python Hermes:
 *
 *     name: release-day          # optional, defaults to the file's slug
 *     description: Ship a release
 *     skills: [changelog-writer, github-release]   # required
 *     instruction: Keep the release notes short.   # optional, put before the skills
 *
 * The bundle travels as one user message (never the system prompt), like a single `/<skill>`.
 * Files are read at each use, so an edit takes effect at once; a broken file is reported by
 * `hermes bundles list|reload`, never loaded.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { nameProblem } from "./paths.js";
import type { SkillsConfig } from "./types.js";
import { loadSkillMessage, type SkillMessageOptions } from "./view.js";

export const bundlesDir = (home: string): string => join(home, "skill-bundles");

export interface SkillBundleDef {
  slug: string;
  name: string;
  description?: string;
  skills: string[];
  instruction?: string;
}

export type BundleRead = { ok: true; bundle: SkillBundleDef } | { ok: false; slug: string; error: string };

/** Why `slug` cannot name a bundle, or undefined: the same shape as a skill name. */
export function bundleSlugProblem(slug: string): string | undefined {
  return nameProblem(slug, "skill name")?.replace("skill name", "bundle name");
}

/** Parses one bundle file's text; never throws. */
export function parseBundle(slug: string, text: string): BundleRead {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    return { ok: false, slug, error: `not valid YAML: ${(error as Error).message.split("\n")[0]}` };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { ok: false, slug, error: "not a mapping with a skills list" };
  }
  const d = data as Record<string, unknown>;
  const skills = d["skills"];
  if (!Array.isArray(skills) || skills.length === 0 || !skills.every((s) => typeof s === "string")) {
    return { ok: false, slug, error: "skills must be a non-empty list of skill names" };
  }
  for (const s of skills as string[]) {
    const problem = nameProblem(s, "skill name");
    if (problem) return { ok: false, slug, error: problem };
  }
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  const description = str(d["description"]);
  const instruction = str(d["instruction"]);
  return {
    ok: true,
    bundle: {
      slug,
      name: str(d["name"]) ?? slug,
      skills: [...new Set(skills as string[])],
      ...(description ? { description } : {}),
      ...(instruction ? { instruction } : {}),
    },
  };
}

/** Reads `<slug>.yaml` (or `.yml`); undefined when there is no such bundle. */
export function readBundle(home: string, slug: string): BundleRead | undefined {
  if (bundleSlugProblem(slug)) return undefined;
  for (const ext of [".yaml", ".yml"]) {
    let text: string;
    try {
      text = readFileSync(join(bundlesDir(home), `${slug}${ext}`), "utf8");
    } catch {
      continue;
    }
    return parseBundle(slug, text);
  }
  return undefined;
}

/** Every bundle file, sorted by slug (broken ones included, with their error). */
export function listBundles(home: string): BundleRead[] {
  let names: string[];
  try {
    names = readdirSync(bundlesDir(home));
  } catch {
    return [];
  }
  const slugs = new Set(
    names
      .map((n) => /^(.+)\.ya?ml$/.exec(n)?.[1])
      .filter((s): s is string => s !== undefined && bundleSlugProblem(s) === undefined),
  );
  return [...slugs]
    .sort()
    .map((slug) => readBundle(home, slug))
    .filter((r): r is BundleRead => r !== undefined);
}

/** Writes a bundle; refuses to replace an existing one unless `force`. Returns the file path. */
export function writeBundle(
  home: string,
  def: Omit<SkillBundleDef, "name"> & { name?: string },
  force = false,
): string {
  const problem = bundleSlugProblem(def.slug);
  if (problem) throw new Error(problem);
  if (readBundle(home, def.slug) && !force) {
    throw new Error(`a bundle named ${def.slug} exists; pass --force to replace it.`);
  }
  const doc: Record<string, unknown> = { name: def.name ?? def.slug };
  if (def.description) doc["description"] = def.description;
  doc["skills"] = def.skills;
  if (def.instruction) doc["instruction"] = def.instruction;
  mkdirSync(bundlesDir(home), { recursive: true });
  const file = join(bundlesDir(home), `${def.slug}.yaml`);
  atomicWriteFileSync(file, stringifyYaml(doc));
  rmSync(join(bundlesDir(home), `${def.slug}.yml`), { force: true });
  return file;
}

/** Deletes a bundle's file(s); false when there was none. */
export function deleteBundle(home: string, slug: string): boolean {
  if (bundleSlugProblem(slug)) return false;
  let removed = false;
  for (const ext of [".yaml", ".yml"]) {
    const file = join(bundlesDir(home), `${slug}${ext}`);
    try {
      readFileSync(file);
      rmSync(file);
      removed = true;
    } catch {
      // not there
    }
  }
  return removed;
}

const SINGLE_REQUEST = /\n\nUser request: apply this skill to the current task\.$/;

/**
 * The user message `/<slug> [request]` sends for a bundle: its instruction, then each skill's
 * instructions in order, then the request. Undefined when there is no such bundle, it is broken,
 * or none of its skills can be loaded; skills that cannot be loaded are named in the message.
 */
export async function loadBundleMessage(
  home: string,
  slug: string,
  config?: SkillsConfig,
  options: SkillMessageOptions = {},
): Promise<string | undefined> {
  const read = readBundle(home, slug);
  if (!read?.ok) return undefined;
  const { bundle } = read;
  const parts: string[] = [];
  const missing: string[] = [];
  for (const name of bundle.skills) {
    const { instruction: _request, ...rest } = options;
    const text = await loadSkillMessage(home, name, config, rest);
    if (text === undefined) missing.push(name);
    else parts.push(text.replace(SINGLE_REQUEST, ""));
  }
  if (parts.length === 0) return undefined;
  const loaded = bundle.skills.filter((s) => !missing.includes(s));
  const lines = [
    `[Skill bundle "${bundle.name}" loaded by the user: ${loaded.join(", ")}. Follow them together for the request below.]`,
  ];
  if (bundle.instruction) lines.push("", `Bundle instruction: ${bundle.instruction}`);
  if (missing.length > 0)
    lines.push("", `Not available here (not installed or disabled): ${missing.join(", ")}.`);
  for (const part of parts) lines.push("", "---", "", part);
  const request = options.instruction?.trim();
  lines.push(
    "",
    request ? `User request: ${request}` : "User request: apply these skills to the current task.",
  );
  return lines.join("\n");
}
