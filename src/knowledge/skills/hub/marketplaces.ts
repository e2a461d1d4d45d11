/**
 * Two sources whose index lives elsewhere and whose files come from GitHub (github.ts):
 *
 * - `skills-sh`: the skills.sh directory. Search is `GET {base}/api/search?q=Q&limit=N` →
 *   `{"skills": [{id: "owner/repo/skill", source: "owner/repo", skillId, name, installs}]}`; an
 *   empty query walks `{base}/sitemap.xml` → `sitemap-skills-*.xml` → `<loc>{base}/owner/repo/skill</loc>`.
 *   A skill `owner/repo/skill` is found in the repository's tree under `skills/`, the root,
 *   `.agents/skills/` or `.claude/skills/` (else the one folder of that name holding a SKILL.md).
 *   Recorded as source `skills.sh`, identifier `skills-sh/owner/repo/skill`, as upstream does.
 * - `claude-marketplace`: Claude Code plugin marketplaces, each a repository with
 *   `.claude-plugin/marketplace.json` (`{"plugins": [{name, description, source}]}`, `source` being
 *   `./path`, `owner/repo/path` or `{source: "github", repo, path}`).
 *
 * Trust follows the repository (trusted for the repositories in trust.ts, community otherwise).
 */

import {
  endpoint,
  getBytes,
  getJson,
  type HubAdapter,
  type HubContext,
  type HubMeta,
  matchesWords,
  str,
} from "./adapter.js";
import { HubError, isRecord, type SkillBundle, safeRelPath } from "./bundle.js";
import { fetchGithubSkill, inspectGithub, isRepoName, parseGithubId, rawFile, repoTree } from "./github.js";
import { githubTrust } from "./trust.js";

// ---- skills.sh --------------------------------------------------------------------------------

const shBase = (ctx: HubContext) => endpoint(ctx, "HERMES_SKILLS_SH_URL", "https://skills.sh");
const SKILL_PART = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;
const SH_PREFIXES = ["skills-sh/", "skills.sh/"];

function canonical(identifier: string): { repo: string; skill: string } {
  const raw = SH_PREFIXES.reduce((id, p) => (id.startsWith(p) ? id.slice(p.length) : id), identifier.trim());
  const [owner = "", name = "", skill = "", ...rest] = raw.split("/");
  const repo = `${owner}/${name}`;
  if (rest.length > 0 || !isRepoName(repo) || !SKILL_PART.test(skill) || skill.includes("..")) {
    throw new HubError(`"${identifier}" is not a skills.sh skill (skills-sh/owner/repo/skill).`, 2);
  }
  return { repo, skill };
}

function shMeta(
  repo: string,
  skill: string,
  name: string,
  description: string,
  extra: Record<string, unknown> = {},
): HubMeta {
  return {
    name,
    description,
    source: "skills-sh",
    identifier: `skills-sh/${repo}/${skill}`,
    trust: githubTrust(repo),
    tags: [],
    extra: { repo, detail_url: `https://skills.sh/${repo}/${skill}`, ...extra },
  };
}

async function sitemapCatalog(ctx: HubContext, limit: number): Promise<HubMeta[]> {
  const base = shBase(ctx);
  const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]+)<\/loc>/gi)].map((m) => (m[1] ?? "").trim());
  const index = await getBytes(ctx, `${base}/sitemap.xml`, { maxBytes: 4 * 1024 * 1024 });
  if (index.status !== 200) return [];
  const baseUrl = new URL(base);
  const sameSite = (u: URL) => u.hostname.replace(/^www\./, "") === baseUrl.hostname.replace(/^www\./, "");
  const basePath = baseUrl.pathname.replace(/\/+$/, "");
  const out: HubMeta[] = [];
  const seen = new Set<string>();
  for (const sitemap of locs(index.body.toString("utf8")).filter((u) => u.includes("sitemap-skills"))) {
    const sitemapUrl = URL.canParse(sitemap) ? new URL(sitemap) : undefined;
    // Only the directory's own sitemaps are read, never a URL the index points elsewhere.
    if (!sitemapUrl || !sameSite(sitemapUrl) || !/^https?:$/.test(sitemapUrl.protocol)) continue;
    const res = await getBytes(ctx, sitemapUrl.href, { maxBytes: 16 * 1024 * 1024 });
    if (res.status !== 200) continue;
    for (const loc of locs(res.body.toString("utf8"))) {
      const url = URL.canParse(loc) ? new URL(loc) : undefined;
      if (!url || !sameSite(url) || !url.pathname.startsWith(`${basePath}/`)) continue;
      const path = url.pathname.slice(basePath.length + 1).replace(/\/+$/, "");
      try {
        const { repo, skill } = canonical(path);
        if (seen.has(`${repo}/${skill}`)) continue;
        seen.add(`${repo}/${skill}`);
        out.push(shMeta(repo, skill, skill, `Indexed by skills.sh from ${repo}`));
        if (out.length >= limit) return out;
      } catch {
        // Not a skill page.
      }
    }
  }
  return out;
}

/** The folder of `skill` in `repo`, from the tree: the usual places first, then a unique match. */
async function locate(ctx: HubContext, repo: string, skill: string): Promise<string> {
  const tree = await repoTree(ctx, repo);
  const blobs = new Set(tree.entries.filter((e) => e.type === "blob").map((e) => e.path));
  for (const prefix of ["skills/", "", ".agents/skills/", ".claude/skills/"]) {
    if (blobs.has(`${prefix}${skill}/SKILL.md`)) return `${prefix}${skill}`;
  }
  const found = [...blobs]
    .filter((p) => p.endsWith(`/${skill}/SKILL.md`))
    .map((p) => p.slice(0, -"/SKILL.md".length));
  if (found.length === 1 && found[0]) return found[0];
  if (found.length > 1)
    throw new HubError(`${repo} holds several skills named ${skill}: ${found.join(", ")}.`);
  throw new HubError(`${repo} has no skill named ${skill}.`);
}

export const skillsShAdapter: HubAdapter = {
  id: "skills-sh",
  label: "skills.sh directory, files from GitHub (skills-sh/owner/repo/skill)",
  claims: (identifier) => SH_PREFIXES.some((p) => identifier.startsWith(p)),
  async search(query, limit, ctx) {
    if (!query.trim()) return sitemapCatalog(ctx, limit);
    const params = new URLSearchParams({ q: query.trim(), limit: String(limit) });
    const data = await getJson(ctx, `${shBase(ctx)}/api/search?${params}`);
    const items = isRecord(data) && Array.isArray(data["skills"]) ? data["skills"].filter(isRecord) : [];
    const out: HubMeta[] = [];
    for (const item of items.slice(0, limit)) {
      const id = str(item["id"]) || `${str(item["source"])}/${str(item["skillId"])}`;
      try {
        const { repo, skill } = canonical(id);
        const installs = typeof item["installs"] === "number" ? item["installs"] : undefined;
        out.push(
          shMeta(
            repo,
            skill,
            skill,
            `Indexed by skills.sh from ${repo}${installs !== undefined ? ` · ${installs} installs` : ""}`,
            {
              ...(str(item["name"]) ? { listed_name: str(item["name"]) } : {}),
              ...(installs !== undefined ? { installs } : {}),
            },
          ),
        );
      } catch {
        // An entry whose id is not owner/repo/skill is skipped.
      }
    }
    return out;
  },
  async inspect(identifier, ctx) {
    const { repo, skill } = canonical(identifier);
    const meta = await inspectGithub(ctx, `${repo}/${await locate(ctx, repo, skill)}`);
    return meta ? { ...shMeta(repo, skill, skill, meta.description), tags: meta.tags } : undefined;
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const { repo, skill } = canonical(identifier);
    const dir = await locate(ctx, repo, skill);
    const bundle = await fetchGithubSkill(ctx, `${repo}/${dir}`, {
      source: "skills.sh",
      identifier: `skills-sh/${repo}/${skill}`,
      trust: githubTrust(repo),
    });
    return { ...bundle, metadata: { ...bundle.metadata, detail_url: `https://skills.sh/${repo}/${skill}` } };
  },
};

// ---- Claude Code marketplaces -----------------------------------------------------------------

const DEFAULT_MARKETPLACES = ["anthropics/skills", "aiskillstore/marketplace"];

function marketplaces(ctx: HubContext): string[] {
  const configured = ctx.env["HERMES_CLAUDE_MARKETPLACES"];
  const list =
    configured !== undefined
      ? configured
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : DEFAULT_MARKETPLACES;
  return list.filter(isRepoName);
}

/** The GitHub `owner/repo/path` a plugin entry points at, or undefined when it points nowhere safe. */
export function pluginTarget(marketplace: string, source: unknown): string | undefined {
  let repo = marketplace;
  let path = "";
  if (typeof source === "string") {
    if (source.startsWith("./")) path = source.slice(2);
    else if (source.split("/").length >= 3) {
      const [o = "", n = "", ...rest] = source.split("/");
      repo = `${o}/${n}`;
      path = rest.join("/");
    } else path = source;
  } else if (isRecord(source) && str(source["source"]) === "github") {
    repo = str(source["repo"]);
    path = str(source["path"]).replace(/^\.\//, "");
  } else return undefined;
  const safe = safeRelPath(path);
  if (!isRepoName(repo) || !safe || safe !== path.replace(/\/+$/, "")) return undefined;
  return `${repo}/${safe}`;
}

async function plugins(ctx: HubContext, repo: string): Promise<HubMeta[]> {
  const raw = await rawFile(ctx, repo, ".claude-plugin/marketplace.json");
  if (raw === undefined) return [];
  let data: unknown;
  try {
    data = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HubError(`${repo}'s marketplace.json is not valid JSON.`);
  }
  const list = isRecord(data) && Array.isArray(data["plugins"]) ? data["plugins"].filter(isRecord) : [];
  const out: HubMeta[] = [];
  for (const plugin of list) {
    const target = pluginTarget(repo, plugin["source"]);
    if (!target) continue;
    out.push({
      name: target.split("/").pop() ?? target,
      description: str(plugin["description"]),
      source: "claude-marketplace",
      identifier: `claude-marketplace/${target}`,
      trust: githubTrust(target),
      tags: [],
      extra: { marketplace: repo, listed_name: str(plugin["name"]) },
    });
  }
  return out;
}

export const claudeMarketplaceAdapter: HubAdapter = {
  id: "claude-marketplace",
  label: "Claude Code plugin marketplaces (claude-marketplace/owner/repo/path)",
  claims: (identifier) => identifier.startsWith("claude-marketplace/"),
  async search(query, limit, ctx) {
    const out: HubMeta[] = [];
    for (const repo of marketplaces(ctx)) {
      for (const meta of await plugins(ctx, repo).catch(() => [])) {
        if (matchesWords(query, meta.name, meta.description, meta.extra?.["listed_name"])) out.push(meta);
      }
    }
    return out.slice(0, limit);
  },
  async inspect(identifier, ctx) {
    const id = identifier.replace(/^claude-marketplace\//, "");
    const meta = await inspectGithub(ctx, id);
    return meta
      ? { ...meta, source: "claude-marketplace", identifier: `claude-marketplace/${meta.identifier}` }
      : undefined;
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const id = identifier.replace(/^claude-marketplace\//, "");
    const { repo, path } = parseGithubId(id);
    return fetchGithubSkill(ctx, `${repo}/${path}`, {
      source: "claude-marketplace",
      identifier: `claude-marketplace/${repo}/${path}`,
      trust: githubTrust(repo),
    });
  },
};
