/**
 * Two catalogs that serve one SKILL.md per entry:
 *
 * - `lobehub`: LobeHub's agent index (`GET {base}/index.json` → `{"agents": [{identifier, meta:
 *   {title, description, tags}}]}`) and one JSON per agent (`GET {base}/{identifier}.json` with
 *   `config.systemRole`), turned into a SKILL.md whose body is the agent's system role;
 * - `browse-sh`: browse.sh's catalog of site-specific browser skills (`GET {base}/api/skills` →
 *   `{"skills": [{slug, name, title, description, hostname, category, tags}]}`), whose detail
 *   (`GET {base}/api/skills/{slug}`) names the SKILL.md to download in `skillMdUrl`.
 *
 * Both are community trust. Names come from the catalog and are validated like any skill name.
 */

import {
  endpoint,
  getBytes,
  getJson,
  type HubAdapter,
  type HubContext,
  type HubMeta,
  limitsOf,
  matchesWords,
  str,
  strList,
} from "./adapter.js";
import { checkBundleFiles, HubError, isRecord, isValidSkillName, type SkillBundle } from "./bundle.js";
import { isPrivateHost } from "./http.js";

// ---- LobeHub ----------------------------------------------------------------------------------

const lobeBase = (ctx: HubContext) => endpoint(ctx, "HERMES_LOBEHUB_URL", "https://chat-agents.lobehub.com");

async function lobeAgents(ctx: HubContext): Promise<Array<Record<string, unknown>>> {
  const data = await getJson(ctx, `${lobeBase(ctx)}/index.json`);
  const agents = isRecord(data) ? data["agents"] : data;
  return Array.isArray(agents) ? agents.filter(isRecord) : [];
}

function lobeMeta(agent: Record<string, unknown>): HubMeta | undefined {
  const id = str(agent["identifier"]);
  if (!isValidSkillName(id)) return undefined;
  const meta = isRecord(agent["meta"]) ? agent["meta"] : agent;
  return {
    name: id,
    description: str(meta["description"]).slice(0, 200),
    source: "lobehub",
    identifier: `lobehub/${id}`,
    trust: "community",
    tags: strList(meta["tags"]),
    extra: { title: str(meta["title"]) || id },
  };
}

function lobeId(identifier: string): string {
  const id = identifier.replace(/^lobehub\//, "");
  if (!isValidSkillName(id))
    throw new HubError(`"${identifier}" is not a LobeHub agent (lobehub/<identifier>).`, 2);
  return id;
}

/** A LobeHub agent as a SKILL.md: frontmatter from its meta, the system role as instructions. */
export function lobeAgentToSkillMd(id: string, agent: Record<string, unknown>): string {
  const meta = isRecord(agent["meta"]) ? agent["meta"] : agent;
  const title = str(meta["title"]) || id;
  const description = str(meta["description"]).replace(/\s+/g, " ").slice(0, 500);
  const role = isRecord(agent["config"]) ? str(agent["config"]["systemRole"]) : "";
  const frontmatter = [
    "---",
    `name: ${JSON.stringify(id)}`,
    `description: ${JSON.stringify(description || title)}`,
    `tags: ${JSON.stringify(strList(meta["tags"]))}`,
    "metadata:",
    "  lobehub:",
    "    source: lobehub",
    "---",
  ];
  return `${frontmatter.join("\n")}\n\n# ${title}\n\n${description}\n\n## Instructions\n\n${role || "(The agent defines no system role.)"}\n`;
}

export const lobehubAdapter: HubAdapter = {
  id: "lobehub",
  label: "LobeHub agents as skills (lobehub/<identifier>), trust community",
  claims: (identifier) => identifier.startsWith("lobehub/"),
  async search(query, limit, ctx) {
    const out: HubMeta[] = [];
    for (const agent of await lobeAgents(ctx)) {
      const meta = lobeMeta(agent);
      if (meta && matchesWords(query, meta.name, meta.description, meta.tags, meta.extra?.["title"]))
        out.push(meta);
      if (out.length >= limit) break;
    }
    return out;
  },
  async inspect(identifier, ctx) {
    const id = lobeId(identifier);
    const agent = (await lobeAgents(ctx)).find((a) => a["identifier"] === id);
    return agent ? lobeMeta(agent) : undefined;
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const id = lobeId(identifier);
    const agent = await getJson(ctx, `${lobeBase(ctx)}/${encodeURIComponent(id)}.json`);
    if (!isRecord(agent)) throw new HubError(`LobeHub has no agent "${id}".`);
    if (str(agent["identifier"]) && agent["identifier"] !== id) {
      throw new HubError(`LobeHub's ${id}.json describes "${str(agent["identifier"])}" instead; refused.`);
    }
    const files = new Map([["SKILL.md", Buffer.from(lobeAgentToSkillMd(id, agent), "utf8")]]);
    checkBundleFiles(files, limitsOf(ctx));
    return {
      name: id,
      files,
      source: "lobehub",
      identifier: `lobehub/${id}`,
      metadata: { agent: id },
      warnings: [],
      trust: "community",
    };
  },
};

// ---- browse.sh --------------------------------------------------------------------------------

const browseBase = (ctx: HubContext) => endpoint(ctx, "HERMES_BROWSE_SH_URL", "https://browse.sh");
const SLUG = /^[a-z0-9][a-z0-9.-]{0,100}(?:\/[a-z0-9][a-z0-9._-]{0,100})?$/i;

async function browseCatalog(ctx: HubContext): Promise<Array<Record<string, unknown>>> {
  const data = await getJson(ctx, `${browseBase(ctx)}/api/skills`);
  const skills = isRecord(data) ? data["skills"] : undefined;
  return Array.isArray(skills) ? skills.filter(isRecord) : [];
}

function browseSlug(identifier: string): string {
  const slug = identifier.replace(/^browse-sh\//, "");
  if (!SLUG.test(slug) || slug.includes("..")) {
    throw new HubError(`"${identifier}" is not a browse.sh skill (browse-sh/<site>/<task>).`, 2);
  }
  return slug;
}

function browseName(item: Record<string, unknown>, slug: string): string {
  const candidates = [str(item["name"]).toLowerCase(), (slug.split("/").pop() ?? "").toLowerCase()];
  const name = candidates.find(isValidSkillName);
  if (!name) throw new HubError(`browse.sh's ${slug} has no usable skill name.`);
  return name;
}

function browseMeta(item: Record<string, unknown>): HubMeta | undefined {
  const slug = str(item["slug"]);
  if (!SLUG.test(slug) || slug.includes("..")) return undefined;
  let name: string;
  try {
    name = browseName(item, slug);
  } catch {
    return undefined;
  }
  const description = str(item["description"]) || str(item["title"]) || name;
  return {
    name,
    description: description.length > 1024 ? `${description.slice(0, 1021)}...` : description,
    source: "browse-sh",
    identifier: `browse-sh/${slug}`,
    trust: "community",
    tags: strList(item["tags"]),
    extra: { hostname: str(item["hostname"]), category: str(item["category"]) },
  };
}

export const browseShAdapter: HubAdapter = {
  id: "browse-sh",
  label: "browse.sh site-specific browser skills (browse-sh/<site>/<task>), trust community",
  claims: (identifier) => identifier.startsWith("browse-sh/"),
  async search(query, limit, ctx) {
    const out: HubMeta[] = [];
    for (const item of await browseCatalog(ctx)) {
      const meta = browseMeta(item);
      if (
        meta &&
        matchesWords(
          query,
          meta.name,
          meta.description,
          meta.tags,
          meta.extra?.["hostname"],
          str(item["title"]),
        )
      ) {
        out.push(meta);
      }
      if (out.length >= limit) break;
    }
    return out;
  },
  async inspect(identifier, ctx) {
    const slug = browseSlug(identifier);
    const item = (await browseCatalog(ctx)).find((i) => i["slug"] === slug);
    return item ? browseMeta(item) : undefined;
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const slug = browseSlug(identifier);
    const item = (await browseCatalog(ctx)).find((i) => i["slug"] === slug);
    if (!item) throw new HubError(`browse.sh has no skill "${slug}".`);
    const detail = await getJson(
      ctx,
      `${browseBase(ctx)}/api/skills/${slug.split("/").map(encodeURIComponent).join("/")}`,
    );
    const mdUrl = isRecord(detail) ? str(detail["skillMdUrl"]) : "";
    if (!/^https?:\/\//i.test(mdUrl)) throw new HubError(`browse.sh names no http(s) SKILL.md for ${slug}.`);
    // A catalog on the internet may not point the download at this machine or the local network.
    if (!isPrivateHost(new URL(browseBase(ctx)).hostname) && isPrivateHost(new URL(mdUrl).hostname)) {
      throw new HubError(`browse.sh points ${slug} at a private address (${new URL(mdUrl).host}); refused.`);
    }
    // The SKILL.md lives on a CDN, so this one download may come from (or redirect to) another host.
    const res = await getBytes(ctx, mdUrl, { sameHost: false });
    if (res.status !== 200) throw new HubError(`could not download ${mdUrl} (HTTP ${res.status}).`);
    const files = new Map([["SKILL.md", res.body]]);
    checkBundleFiles(files, limitsOf(ctx));
    return {
      name: browseName(item, slug),
      files,
      source: "browse-sh",
      identifier: `browse-sh/${slug}`,
      metadata: { slug, hostname: str(item["hostname"]), skill_md_url: mdUrl },
      warnings: [],
      trust: "community",
    };
  },
};
