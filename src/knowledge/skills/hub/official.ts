import { readFile, realpath } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { optionalSkillsDir } from "../bundled.js";
import type { HubAdapter, HubContext, HubMeta } from "./adapter.js";
import { matchesWords } from "./adapter.js";
import { HubError, readFrontmatter, type SkillBundle, safeRelPath, validateSkillName } from "./bundle.js";
import { findSkillDirs, readSkillFolder } from "./local.js";

export { optionalSkillsDir };

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
