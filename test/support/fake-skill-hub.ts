/**
 * One loopback HTTP server that speaks the index and archive formats of every registry the skills
 * hub reads, each under its own prefix (point the hub at it with {@link FakeSkillHub.env}):
 *
 * - `/gh`     the GitHub REST API: `/repos/{o}/{r}`, `/repos/{o}/{r}/git/trees/{ref}?recursive=1`,
 *             `/repos/{o}/{r}/contents/{path}` (folder listing as JSON, file bytes with the raw
 *             media type, `?ref=` pinned to the tree sha);
 * - `/sh`     skills.sh: `/api/search?q&limit`, `/sitemap.xml` and `/sitemap-skills-1.xml`;
 * - `/claw`   ClawHub API v1: `/api/v1/skills` (cursor pages, `search`), `/api/v1/skills/{slug}`,
 *             `/api/v1/download?slug&version` (ZIP), `/api/v1/skills/{slug}/versions/{v}`;
 * - `/lobe`   LobeHub: `/index.json` and `/{identifier}.json`;
 * - `/browse` browse.sh: `/api/skills`, `/api/skills/{slug}` (→ skillMdUrl under `/cdn/`);
 * - `/web`    a plain web site for direct SKILL.md URLs and `/.well-known/skills/index.json`
 *             ({@link FakeSkillHub.publishWellKnown} writes the index and the files it lists).
 *
 * Tests change the maps between calls to publish updates, and put handlers in `overrides`
 * (exact path) to make a registry lie, redirect or send too much.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { makeZip } from "./fake-skill-hub-zip.js";

export type FileValue = string | Buffer | { symlink: string };

export interface FakeRepo {
  branch: string;
  files: Record<string, FileValue>;
  /** Bumped on every change so the tree sha changes. */
  revision: number;
}

export interface FakeClawSkill {
  summary: string;
  version: string;
  files: Record<string, string>;
  owner?: string;
  /** Serve this instead of a ZIP built from `files`. */
  zip?: Buffer;
}

export interface FakeLobeAgent {
  title: string;
  description: string;
  tags?: string[];
  systemRole: string;
  /** The identifier the agent's own JSON claims (defaults to its key). */
  claims?: string;
}

export interface FakeBrowseSkill {
  name: string;
  description: string;
  hostname: string;
  md: string;
  /** Overrides the skillMdUrl the detail answers with. */
  mdUrl?: string;
}

export interface FakeSkillHub {
  url: string;
  repos: Map<string, FakeRepo>;
  skillsSh: Array<{ id: string; name: string; installs: number }>;
  clawhub: Map<string, FakeClawSkill>;
  lobehub: Map<string, FakeLobeAgent>;
  /** Extra index entries served as-is (to make the LobeHub index lie). */
  lobeIndexExtra: unknown[];
  browse: Map<string, FakeBrowseSkill>;
  /** Files of the `/web` site by path below `/web` (`/skills/x/SKILL.md`). */
  web: Map<string, string>;
  /** Publishes skills in the well-known format under `/web/.well-known/skills/`. */
  publishWellKnown(skills: Record<string, Record<string, string>>): void;
  overrides: Map<string, (req: IncomingMessage, res: ServerResponse) => void>;
  requests: string[];
  /** Authorization headers seen, by path. */
  authorizations: Array<{ path: string; value: string }>;
  env(): Record<string, string>;
  /** Sets (or replaces) a repository's files and bumps its revision. */
  setRepo(repo: string, files: Record<string, FileValue>): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function bytes(value: FileValue): Buffer {
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (Buffer.isBuffer(value)) return value;
  return Buffer.from(value.symlink, "utf8");
}

export async function startFakeSkillHub(): Promise<FakeSkillHub> {
  const hub = {
    repos: new Map<string, FakeRepo>(),
    skillsSh: [] as FakeSkillHub["skillsSh"],
    clawhub: new Map<string, FakeClawSkill>(),
    lobehub: new Map<string, FakeLobeAgent>(),
    lobeIndexExtra: [] as unknown[],
    browse: new Map<string, FakeBrowseSkill>(),
    web: new Map<string, string>(),
    overrides: new Map<string, (req: IncomingMessage, res: ServerResponse) => void>(),
    requests: [] as string[],
    authorizations: [] as Array<{ path: string; value: string }>,
  };
  let base = "";

  const github = (res: ServerResponse, path: string, query: URLSearchParams) => {
    const m = /^\/repos\/([^/]+\/[^/]+)(?:\/(git\/trees|contents)\/?(.*))?$/.exec(path);
    const repo = m?.[1] ? hub.repos.get(m[1]) : undefined;
    if (!m || !repo) return json(res, 404, { message: "Not Found" });
    const sha = `tree${repo.revision}`;
    if (!m[2]) return json(res, 200, { full_name: m[1], default_branch: repo.branch });
    if (m[2] === "git/trees") {
      if (m[3] !== repo.branch && m[3] !== sha) return json(res, 404, { message: "Not Found" });
      const dirs = new Set<string>();
      const tree: unknown[] = [];
      for (const [file, value] of Object.entries(repo.files)) {
        const parts = file.split("/");
        for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
        const link = typeof value === "object" && !Buffer.isBuffer(value);
        tree.push({ path: file, mode: link ? "120000" : "100644", type: "blob", size: bytes(value).length });
      }
      for (const dir of dirs) tree.push({ path: dir, mode: "040000", type: "tree" });
      return json(res, 200, { sha, tree, truncated: false });
    }
    const ref = query.get("ref");
    if (ref && ref !== sha && ref !== repo.branch)
      return json(res, 404, { message: "No commit found for the ref" });
    const target = decodeURIComponent(m[3] ?? "").replace(/\/+$/, "");
    const file = repo.files[target];
    if (file !== undefined) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return res.end(bytes(file));
    }
    const prefix = target ? `${target}/` : "";
    const entries = new Map<string, string>();
    for (const name of Object.keys(repo.files)) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length).split("/");
      entries.set(rest[0] ?? "", rest.length > 1 ? "dir" : "file");
    }
    if (entries.size === 0) return json(res, 404, { message: "Not Found" });
    return json(
      res,
      200,
      [...entries].map(([name, type]) => ({ name, type, path: `${prefix}${name}` })),
    );
  };

  const clawItem = (slug: string, s: FakeClawSkill) => ({
    slug,
    displayName: slug,
    summary: s.summary,
    tags: { latest: s.version },
    latestVersion: { version: s.version },
  });

  const clawhub = (res: ServerResponse, path: string, query: URLSearchParams) => {
    if (path === "/api/v1/skills") {
      const q = (query.get("search") ?? "").toLowerCase();
      const all = [...hub.clawhub].filter(
        ([slug, s]) => !q || `${slug} ${s.summary}`.toLowerCase().includes(q),
      );
      const start = Number(query.get("cursor") ?? "0");
      const size = Math.min(Number(query.get("limit") ?? "50"), 2);
      const page = all.slice(start, start + size).map(([slug, s]) => clawItem(slug, s));
      return json(res, 200, {
        items: page,
        nextCursor: start + size < all.length ? String(start + size) : null,
      });
    }
    if (path === "/api/v1/download") {
      const s = hub.clawhub.get(query.get("slug") ?? "");
      if (!s || query.get("version") !== s.version) return json(res, 404, { error: "not found" });
      res.writeHead(200, { "content-type": "application/zip" });
      return res.end(s.zip ?? makeZip(Object.entries(s.files).map(([name, data]) => ({ name, data }))));
    }
    const version = /^\/api\/v1\/skills\/([^/]+)\/versions\/([^/]+)$/.exec(path);
    if (version?.[1]) {
      const s = hub.clawhub.get(version[1]);
      if (!s) return json(res, 404, {});
      return json(res, 200, {
        version: {
          version: s.version,
          files: Object.entries(s.files).map(([p, content]) => ({ path: p, content })),
        },
      });
    }
    const detail = /^\/api\/v1\/skills\/([^/]+)$/.exec(path);
    const s = detail?.[1] ? hub.clawhub.get(detail[1]) : undefined;
    if (!detail?.[1] || !s) return json(res, 404, { error: "not found" });
    return json(res, 200, {
      skill: clawItem(detail[1], s),
      latestVersion: { version: s.version },
      owner: { handle: s.owner ?? "someone" },
    });
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const path = decodeURIComponent(url.pathname);
    hub.requests.push(`${path}${url.search}`);
    if (req.headers.authorization) hub.authorizations.push({ path, value: req.headers.authorization });
    const override = hub.overrides.get(path);
    if (override) return override(req, res);
    if (path.startsWith("/gh/")) return github(res, path.slice(3), url.searchParams);
    if (path.startsWith("/claw/")) return clawhub(res, path.slice(5), url.searchParams);
    if (path === "/sh/api/search") {
      const q = (url.searchParams.get("q") ?? "").toLowerCase();
      const skills = hub.skillsSh.filter((s) => `${s.id} ${s.name}`.toLowerCase().includes(q));
      return json(res, 200, {
        skills: skills.map((s) => ({
          ...s,
          source: s.id.split("/").slice(0, 2).join("/"),
          skillId: s.id.split("/")[2],
        })),
      });
    }
    if (path === "/sh/sitemap.xml") {
      res.writeHead(200, { "content-type": "application/xml" });
      return res.end(
        `<sitemapindex><sitemap><loc>${base}/sh/sitemap-skills-1.xml</loc></sitemap></sitemapindex>`,
      );
    }
    if (path === "/sh/sitemap-skills-1.xml") {
      res.writeHead(200, { "content-type": "application/xml" });
      return res.end(
        `<urlset>${hub.skillsSh.map((s) => `<url><loc>${base}/sh/${s.id}</loc></url>`).join("")}</urlset>`,
      );
    }
    if (path === "/lobe/index.json") {
      const agents = [...hub.lobehub].map(([id, a]) => ({
        identifier: id,
        meta: { title: a.title, description: a.description, tags: a.tags ?? [] },
      }));
      return json(res, 200, { agents: [...agents, ...hub.lobeIndexExtra] });
    }
    const lobe = /^\/lobe\/(.+)\.json$/.exec(path);
    if (lobe?.[1]) {
      const a = hub.lobehub.get(lobe[1]);
      if (!a) return json(res, 404, {});
      return json(res, 200, {
        identifier: a.claims ?? lobe[1],
        meta: { title: a.title, description: a.description, tags: a.tags ?? [] },
        config: { systemRole: a.systemRole },
      });
    }
    if (path === "/browse/api/skills") {
      return json(res, 200, {
        skills: [...hub.browse].map(([slug, s]) => ({
          slug,
          name: s.name,
          title: s.name,
          description: s.description,
          hostname: s.hostname,
          tags: [],
        })),
      });
    }
    const browse = /^\/browse\/api\/skills\/(.+)$/.exec(path);
    if (browse?.[1]) {
      const s = hub.browse.get(browse[1]);
      if (!s) return json(res, 404, {});
      return json(res, 200, { slug: browse[1], skillMdUrl: s.mdUrl ?? `${base}/cdn/${browse[1]}/SKILL.md` });
    }
    const cdn = /^\/cdn\/(.+)\/SKILL\.md$/.exec(path);
    if (cdn?.[1] && hub.browse.has(cdn[1])) {
      res.writeHead(200, { "content-type": "text/markdown" });
      return res.end(hub.browse.get(cdn[1])?.md);
    }
    const page = path.startsWith("/web/") ? hub.web.get(path.slice(4)) : undefined;
    if (page !== undefined) {
      res.writeHead(200, { "content-type": path.endsWith(".json") ? "application/json" : "text/plain" });
      return res.end(page);
    }
    json(res, 404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...hub,
    url: base,
    env: () => ({
      HERMES_GITHUB_API_URL: `${base}/gh`,
      HERMES_SKILLS_SH_URL: `${base}/sh`,
      HERMES_CLAWHUB_URL: `${base}/claw/api/v1`,
      HERMES_LOBEHUB_URL: `${base}/lobe`,
      HERMES_BROWSE_SH_URL: `${base}/browse`,
      HERMES_CLAUDE_MARKETPLACES: "market/place",
    }),
    publishWellKnown(skills: Record<string, Record<string, string>>) {
      const entries = Object.entries(skills).map(([name, files]) => {
        for (const [rel, content] of Object.entries(files))
          hub.web.set(`/.well-known/skills/${name}/${rel}`, content);
        return { name, description: `The ${name} skill.`, files: Object.keys(files) };
      });
      hub.web.set("/.well-known/skills/index.json", JSON.stringify({ skills: entries }));
    },
    setRepo(repo: string, files: Record<string, FileValue>) {
      const prior = hub.repos.get(repo);
      hub.repos.set(repo, { branch: "main", files, revision: (prior?.revision ?? 0) + 1 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
