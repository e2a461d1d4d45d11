/**
 * The `official` source: optional skills shipped in this package under
 * `optional-skills/<category>/<name>/`, installable as `official/<category>/<name>` (or
 * `official/<name>` when the name is unique). Trust is `builtin`. The folder is the package's own
 * (found by walking up to its package.json) unless `HERMES_OPTIONAL_SKILLS` points elsewhere.
 */
import { existsSync, readFileSync } from "node:fs";
import { readFile, realpath } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { HubAdapter, HubContext, HubMeta } from "./adapter.js";
import { matchesWords } from "./adapter.js";
import { HubError, readFrontmatter, type SkillBundle, safeRelPath, validateSkillName } from "./bundle.js";
import { findSkillDirs, readSkillFolder } from "./local.js";

const PACKAGE_NAME = "hermes-agent";

/** The optional-skills folder, or undefined when this install has none. */
export function optionalSkillsDir(env: HubContext["env"]): string | undefined {
  const override = env["HERMES_OPTIONAL_SKILLS"]?.trim();
  if (override) return existsSync(override) ? override : undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: unknown }).name === PACKAGE_NAME) {
          const found = join(dir, "optional-skills");
          return existsSync(found) ? found : undefined;
        }
      } catch {
        // Not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

async function catalog(ctx: HubContext): Promise<Array<HubMeta & { dir: string }>> {
  const root = optionalSkillsDir(ctx.env);
  if (!root) return [];
  const out: Array<HubMeta & { dir: string }> = [];
  for (const skill of await findSkillDirs(root)) {
    const rel = relative(root, skill.dir).split(sep).join("/");
    const text = await readFile(join(skill.dir, "SKILL.md"), "utf8").catch(() => "");
    const fm = readFrontmatter(text);
    out.push({
      name: rel.split("/").pop() ?? rel,
      description: fm.description ?? "",
      source: "official",
      identifier: `official/${rel}`,
      trust: "builtin",
      tags: fm.tags,
      dir: skill.dir,
    });
  }
  return out.sort((a, b) => (a.identifier < b.identifier ? -1 : 1));
}

async function resolve(ctx: HubContext, identifier: string): Promise<{ rel: string; dir: string }> {
  const root = optionalSkillsDir(ctx.env);
  if (!root) throw new HubError("this install ships no optional skills (no optional-skills folder).");
  const wanted = identifier.replace(/^official\//, "");
  const rel = safeRelPath(wanted);
  if (!rel || rel !== wanted.replace(/\/+$/, ""))
    throw new HubError(`"${identifier}" is not an official skill path.`, 2);
  const skills = await catalog(ctx);
  const exact = skills.find((s) => s.identifier === `official/${rel}`);
  const byName = skills.filter((s) => s.name === rel);
  const hit = exact ?? (byName.length === 1 ? byName[0] : undefined);
  if (!hit) {
    const hint = byName.length > 1 ? ` It is ambiguous: ${byName.map((s) => s.identifier).join(", ")}.` : "";
    throw new HubError(
      `there is no official skill "${identifier}".${hint} See: hermes skills browse --source official`,
    );
  }
  const realRoot = await realpath(root);
  const realDir = await realpath(hit.dir);
  if (!realDir.startsWith(realRoot + sep))
    throw new HubError(`official/${rel} lies outside the optional-skills folder.`);
  return { rel: hit.identifier.slice("official/".length), dir: realDir };
}

export const officialAdapter: HubAdapter = {
  id: "official",
  label: "optional skills shipped with Hermes-TS (official/<category>/<name>), trust builtin",
  claims: (identifier) => identifier.startsWith("official/"),
  async search(query, limit, ctx) {
    return (await catalog(ctx))
      .filter((s) => matchesWords(query, s.name, s.description, s.tags, s.identifier))
      .slice(0, limit)
      .map(({ dir: _dir, ...meta }) => meta);
  },
  async inspect(identifier, ctx) {
    const { rel } = await resolve(ctx, identifier);
    const hit = (await catalog(ctx)).find((s) => s.identifier === `official/${rel}`);
    if (!hit) return undefined;
    const { dir: _dir, ...meta } = hit;
    return meta;
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const { rel, dir } = await resolve(ctx, identifier);
    const { files, warnings } = await readSkillFolder(dir, ctx.limits);
    return {
      name: validateSkillName(rel.split("/").pop() ?? rel),
      files,
      source: "official",
      identifier: `official/${rel}`,
      metadata: {
        path: `optional-skills/${rel}`,
        ...(rel.includes("/") ? { category: rel.slice(0, rel.lastIndexOf("/")) } : {}),
      },
      warnings,
      trust: "builtin",
    };
  },
};
