/**
 * ClawHub (clawhub.ai), through its HTTP API as upstream's adapter reads it:
 * - catalog: `GET {base}/skills?limit=N[&cursor=C]` → `{"items": [{slug, displayName, summary,
 *   tags, latestVersion: {version}}], "nextCursor"}`; search adds `search=QUERY`;
 * - detail: `GET {base}/skills/{slug}` → the item, or `{"skill": {...}, "latestVersion", "owner"}`;
 * - archive: `GET {base}/download?slug=S&version=V` → a ZIP of the skill's files; when that has
 *   no SKILL.md, `GET {base}/skills/{slug}/versions/{V}` with inline `files`.
 * Identifiers: `clawhub/<slug>`, `@owner/<slug>` (owner checked) or a bare slug on install.
 * Every ClawHub skill is community trust.
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
import { checkBundleFiles, HubError, isRecord, type SkillBundle, safeRelPath } from "./bundle.js";
import { readZip } from "./zip.js";

const SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const OWNER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_PAGES = 20;

const base = (ctx: HubContext) => endpoint(ctx, "HERMES_CLAWHUB_URL", "https://clawhub.ai/api/v1");

function parseId(identifier: string): { slug: string; owner?: string } {
  const raw = identifier.trim().replace(/^clawhub\//, "");
  const at = /^@([^/]+)\/([^/]+)$/.exec(raw);
  const slug = at ? (at[2] ?? "") : raw;
  const owner = at ? at[1] : undefined;
  if (!SLUG.test(slug) || slug.includes("..") || (owner !== undefined && !OWNER.test(owner))) {
    throw new HubError(`"${identifier}" is not a ClawHub skill (clawhub/<slug> or @owner/<slug>).`, 2);
  }
  return owner ? { slug, owner } : { slug };
}

function flatten(data: unknown): Record<string, unknown> | undefined {
  if (!isRecord(data)) return undefined;
  const nested = data["skill"];
  if (!isRecord(nested)) return data;
  return {
    ...nested,
    latestVersion: nested["latestVersion"] ?? data["latestVersion"],
    owner: nested["owner"] ?? data["owner"],
  };
}

function ownerOf(item: Record<string, unknown>): string | undefined {
  const owner = item["owner"];
  const handle = isRecord(owner) ? owner["handle"] : owner;
  return typeof handle === "string" && handle.trim() ? handle.trim() : undefined;
}

function tagsOf(tags: unknown): string[] {
  if (Array.isArray(tags)) return strList(tags);
  if (isRecord(tags)) return Object.keys(tags).filter((k) => k !== "latest");
  return [];
}

function toMeta(item: Record<string, unknown>): HubMeta | undefined {
  const slug = str(item["slug"]);
  if (!SLUG.test(slug)) return undefined;
  const owner = ownerOf(item);
  return {
    name: slug,
    description: str(item["summary"]) || str(item["description"]),
    source: "clawhub",
    identifier: `clawhub/${slug}`,
    trust: "community",
    tags: tagsOf(item["tags"]),
    extra: { display_name: str(item["displayName"]) || slug, ...(owner ? { owner } : {}) },
  };
}

async function detail(
  ctx: HubContext,
  identifier: string,
): Promise<{ slug: string; item: Record<string, unknown> }> {
  const { slug, owner } = parseId(identifier);
  const item = flatten(await getJson(ctx, `${base(ctx)}/skills/${encodeURIComponent(slug)}`));
  if (!item) throw new HubError(`ClawHub has no skill "${slug}".`);
  const actual = ownerOf(item);
  if (owner && actual && actual.toLowerCase() !== owner.toLowerCase()) {
    throw new HubError(`ClawHub's ${slug} belongs to @${actual}, not @${owner}; refused.`);
  }
  return { slug, item };
}

function latestVersion(item: Record<string, unknown>): string | undefined {
  const latest = item["latestVersion"];
  const tags = item["tags"];
  const version =
    (isRecord(latest) ? str(latest["version"]) : str(latest)) || (isRecord(tags) ? str(tags["latest"]) : "");
  return /^[\w.+-]{1,64}$/.test(version) ? version : undefined;
}

function inlineFiles(data: unknown): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const list = isRecord(data)
    ? (data["files"] ?? (isRecord(data["version"]) ? data["version"]["files"] : undefined))
    : undefined;
  const put = (name: string, content: string) => {
    const safe = safeRelPath(name);
    if (safe !== name) throw new HubError(`ClawHub lists an unsafe file path "${name}"; refused.`);
    files.set(safe, Buffer.from(content, "utf8"));
  };
  if (isRecord(list)) for (const [k, v] of Object.entries(list)) if (typeof v === "string") put(k, v);
  if (Array.isArray(list)) {
    for (const f of list.filter(isRecord)) {
      const name = str(f["path"]) || str(f["name"]);
      if (name && typeof f["content"] === "string") put(name, f["content"]);
    }
  }
  return files;
}

export const clawhubAdapter: HubAdapter = {
  id: "clawhub",
  label: "ClawHub registry (clawhub/<slug>), trust community",
  claims: (identifier) => identifier.startsWith("clawhub/") || /^@[^/]+\/[^/]+$/.test(identifier),
  async search(query, limit, ctx) {
    const out: HubMeta[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES && out.length < limit; page++) {
      const params = new URLSearchParams({ limit: String(Math.min(200, Math.max(limit, 20))) });
      if (query.trim()) params.set("search", query.trim());
      if (cursor) params.set("cursor", cursor);
      const data = await getJson(ctx, `${base(ctx)}/skills?${params}`);
      const items = isRecord(data) ? data["items"] : data;
      if (!Array.isArray(items) || items.length === 0) break;
      for (const raw of items) {
        const item = flatten(raw);
        const meta = item ? toMeta(item) : undefined;
        if (!meta || seen.has(meta.identifier)) continue;
        seen.add(meta.identifier);
        if (matchesWords(query, meta.name, meta.description, meta.tags, meta.extra?.["display_name"]))
          out.push(meta);
      }
      cursor = isRecord(data) ? str(data["nextCursor"]) || undefined : undefined;
      if (!cursor) break;
    }
    return out.slice(0, limit);
  },
  async inspect(identifier, ctx) {
    const { slug, item } = await detail(ctx, identifier);
    return toMeta({ ...item, slug });
  },
  async fetch(identifier, ctx): Promise<SkillBundle> {
    const { slug, item } = await detail(ctx, identifier);
    const version = latestVersion(item);
    if (!version) throw new HubError(`ClawHub names no version of ${slug} to download.`);
    const limits = limitsOf(ctx);
    ctx.log?.(`Downloading ${slug} ${version} from ClawHub …`);
    const params = new URLSearchParams({ slug, version });
    const res = await getBytes(ctx, `${base(ctx)}/download?${params}`, { maxBytes: limits.maxTotalBytes });
    let files = new Map<string, Buffer>();
    if (res.status === 200) files = readZip(res.body, limits);
    else if (res.status !== 404)
      throw new HubError(`ClawHub's download of ${slug} answered HTTP ${res.status}.`);
    if (!files.has("SKILL.md")) {
      const data = await getJson(
        ctx,
        `${base(ctx)}/skills/${encodeURIComponent(slug)}/versions/${encodeURIComponent(version)}`,
      );
      files = inlineFiles(data);
    }
    if (!files.has("SKILL.md")) throw new HubError(`ClawHub's ${slug} ${version} has no SKILL.md.`);
    checkBundleFiles(files, limits);
    const owner = ownerOf(item);
    return {
      name: slug,
      files,
      source: "clawhub",
      identifier: `clawhub/${slug}`,
      metadata: { slug, version, ...(owner ? { owner } : {}) },
      warnings: [],
      trust: "community",
    };
  },
};
