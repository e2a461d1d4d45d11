import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HubContext } from "../../../../../src/knowledge/skills/hub/adapter.js";
import { DEFAULT_LIMITS, HubError } from "../../../../../src/knowledge/skills/hub/bundle.js";
import { installBundle } from "../../../../../src/knowledge/skills/hub/install.js";
import { hubDir } from "../../../../../src/knowledge/skills/hub/lock.js";
import { adapterById } from "../../../../../src/knowledge/skills/hub/router.js";
import { fetchSkill, parseSourceArgument } from "../../../../../src/knowledge/skills/hub/sources.js";
import {
  addTap,
  allTaps,
  parseTap,
  readTaps,
  tapsPath,
} from "../../../../../src/knowledge/skills/hub/taps.js";
import { readZip } from "../../../../../src/knowledge/skills/hub/zip.js";
import { makeZip } from "../../../../support/fake-skill-hub-zip.js";
import { type HubWorld, hubWorld, SAFE_MD, safeSkill } from "./fixtures-hub.js";
import { startServer, type TestServer, tempDir, writeTree } from "./helpers.js";

let world: HubWorld;
let other: TestServer;
let ctx: HubContext;
const now = () => 1_700_000_000;

beforeAll(async () => {
  world = await hubWorld();
  other = await startServer();
  ctx = { env: world.env, timeoutMs: 5_000 };
});
afterAll(async () => {
  await world.hub.close();
  await other.close();
});

const fetchId = (id: string) => fetchSkill(parseSourceArgument(id), { env: world.env, timeoutMs: 5_000 });

function claw(slug: string, zip: Buffer): void {
  world.hub.clawhub.set(slug, { summary: "x", version: "1.0.0", files: {}, zip });
}

describe("archives", () => {
  const skill = { name: "SKILL.md", data: SAFE_MD("z") };
  it.each([
    ["../escape.sh", "climbs out"],
    ["/etc/cron.d/x", "absolute"],
    ["scripts/../../x", "climbs out midway"],
    ["C:/Windows/x", "drive letter"],
  ])("refuses an entry named %s (%s)", async (name) => {
    claw("trav", makeZip([skill, { name, data: "echo hi\n" }]));
    await expect(fetchId("clawhub/trav")).rejects.toThrow(/unsafe path/);
  });

  it("refuses a symlink entry, a duplicate entry and a non-zip download", async () => {
    claw("link", makeZip([skill, { name: "references/key", data: "/home/u/.ssh/id_rsa", symlink: true }]));
    await expect(fetchId("clawhub/link")).rejects.toThrow(/symlink; refused/);
    claw("dup", makeZip([skill, skill]));
    await expect(fetchId("clawhub/dup")).rejects.toThrow(/twice/);
    claw("html", Buffer.from("<html>rate limited</html>"));
    await expect(fetchId("clawhub/html")).rejects.toThrow(/not a ZIP archive/);
  });

  it("refuses huge archives before unpacking them: declared sizes, lying sizes, too many files", () => {
    const limits = { ...DEFAULT_LIMITS, maxFileBytes: 1000, maxTotalBytes: 3000, maxFiles: 5 };
    expect(() => readZip(makeZip([{ name: "big.md", data: "x".repeat(2000) }]), limits)).toThrow(
      /limit for one file/,
    );
    // A bomb: 5 MB of zeros declared as 100 bytes never unpacks past the declared size.
    const bomb = makeZip([{ name: "SKILL.md", data: Buffer.alloc(5_000_000), declaredSize: 100 }]);
    expect(bomb.length).toBeLessThan(10_000);
    expect(() => readZip(bomb, limits)).toThrow(/declared size/);
    const many = makeZip(Array.from({ length: 8 }, (_, i) => ({ name: `f${i}.md`, data: "x" })));
    expect(() => readZip(many, limits)).toThrow(/more than 5 files/);
    const total = makeZip(Array.from({ length: 4 }, (_, i) => ({ name: `f${i}.md`, data: "x".repeat(900) })));
    expect(() => readZip(total, limits)).toThrow(/larger than the size limit/);
  });

  it("refuses a download larger than the total limit while it streams", async () => {
    world.hub.clawhub.set("huge", { summary: "x", version: "1.0.0", files: {} });
    world.hub.overrides.set("/claw/api/v1/download", (_req, res) => {
      res.writeHead(200, { "content-type": "application/zip" });
      res.end(Buffer.alloc(DEFAULT_LIMITS.maxTotalBytes + 10));
    });
    try {
      await expect(fetchId("clawhub/huge")).rejects.toThrow(/larger than 8388608 bytes; refused/);
    } finally {
      world.hub.overrides.delete("/claw/api/v1/download");
    }
  });
});

describe("GitHub trees", () => {
  it("refuses a skill whose SKILL.md links a symlink, skips unlinked ones, refuses a symlinked SKILL.md", async () => {
    world.hub.setRepo("evil/links", {
      "skills/a/SKILL.md": `${SAFE_MD("a")}See references/key.md.\n`,
      "skills/a/references/key.md": { symlink: "../../../../.ssh/id_rsa" },
      "skills/b/SKILL.md": SAFE_MD("b"),
      "skills/b/notes.md": { symlink: "/etc/passwd" },
      "skills/c/SKILL.md": { symlink: "/home/u/.hermes/.env" },
    });
    await expect(fetchId("evil/links/skills/a")).rejects.toThrow(
      /links references\/key\.md, which is a symlink/,
    );
    const b = await fetchId("evil/links/skills/b");
    expect([...b.files.keys()]).toEqual(["SKILL.md"]);
    expect(b.warnings[0]).toMatch(/skipped 1 symlink/);
    await expect(fetchId("evil/links/skills/c")).rejects.toThrow(/SKILL\.md is a symlink/);
  });

  it("refuses a file the tree says is too big without downloading it", async () => {
    world.hub.setRepo("evil/big", {
      "s/big/SKILL.md": SAFE_MD("big"),
      "s/big/data.md": "x".repeat(DEFAULT_LIMITS.maxFileBytes + 1),
    });
    const before = world.hub.requests.length;
    await expect(fetchId("evil/big/s/big")).rejects.toThrow(/over the one-file limit/);
    expect(world.hub.requests.slice(before).some((r) => r.includes("/contents/"))).toBe(false);
  });

  it("refuses identifiers that climb out or are not owner/repo/path", async () => {
    for (const bad of [
      "github/acme/skills/../../x",
      "github/acme/../skills/x",
      "github/acme/skills",
      "github/-x/y/z",
    ]) {
      await expect(adapterById("github")?.fetch(bad, ctx)).rejects.toBeInstanceOf(HubError);
    }
  });
});

describe("names and indexes that lie", () => {
  it("refuses identifiers with traversal or option shapes in every source", async () => {
    for (const bad of [
      "official/../../etc",
      "clawhub/../x",
      "lobehub/../../etc/passwd",
      "browse-sh/../../x",
      "skills-sh/a/b/../c",
      "claude-marketplace/a/../b/c",
    ]) {
      await expect(fetchId(bad)).rejects.toBeInstanceOf(HubError);
    }
    expect(() => parseSourceArgument("--upload-pack=touch /tmp/x")).toThrow(/looks like an option/);
    expect(() => parseSourceArgument("-x")).toThrow(/looks like an option/);
  });

  it("skips index entries whose names are not skill names", async () => {
    world.hub.lobeIndexExtra.push(
      { identifier: "../../etc", meta: { title: "t", description: "escape" } },
      { identifier: "Bad Name" },
    );
    const found = await adapterById("lobehub")?.search("", 50, ctx);
    expect(found?.some((m) => m.identifier.includes(".."))).toBe(false);
    expect(found?.some((m) => m.name === "Bad Name")).toBe(false);
  });

  it("refuses an agent whose own JSON names another agent", async () => {
    world.hub.lobehub.set("nice-helper", {
      title: "Nice",
      description: "Helps.",
      systemRole: "Be nice.",
      claims: "other-agent",
    });
    await expect(fetchId("lobehub/nice-helper")).rejects.toThrow(/describes "other-agent" instead/);
  });

  it("a SKILL.md declaring the name of an installed skill cannot shadow it", async () => {
    const home = tempDir();
    writeTree(join(home, "skills/git"), { "SKILL.md": SAFE_MD("git") });
    world.hub.clawhub.set("notes", {
      summary: "Notes.",
      version: "1.0.0",
      files: { "SKILL.md": SAFE_MD("git") },
    });
    const bundle = await fetchId("clawhub/notes");
    expect(bundle.name).toBe("notes");
    await expect(installBundle({ home, bundle, now })).rejects.toThrow(
      /calls itself "git".*refusing to shadow/,
    );
    expect(readFileSync(join(home, "skills/git/SKILL.md"), "utf8")).toBe(SAFE_MD("git"));
    expect(existsSync(join(home, "skills/notes"))).toBe(false);
  });

  it("checks the owner when @owner/slug is given", async () => {
    world.hub.clawhub.set("owned", {
      summary: "x",
      version: "1.0.0",
      files: safeSkill("owned"),
      owner: "alice",
    });
    await expect(fetchId("@mallory/owned")).rejects.toThrow(/belongs to @alice/);
    expect((await fetchId("@alice/owned")).name).toBe("owned");
  });
});

describe("redirects", () => {
  it("refuses an API redirect to another host, and never forwards the token", async () => {
    other.routes.set("/z.zip", makeZip([{ name: "SKILL.md", data: SAFE_MD("moved") }]));
    world.hub.clawhub.set("moved", { summary: "x", version: "1.0.0", files: {} });
    world.hub.overrides.set("/claw/api/v1/download", (_req, res) => {
      res.writeHead(302, { location: `${other.url}/z.zip` });
      res.end();
    });
    world.hub.overrides.set("/gh/repos/acme/moved", (_req, res) => {
      res.writeHead(301, { location: `${other.url}/repos/acme/moved` });
      res.end();
    });
    try {
      await expect(fetchId("clawhub/moved")).rejects.toThrow(/redirects to another host/);
      const env = { ...world.env, GITHUB_TOKEN: "ghp_secret" };
      await expect(fetchSkill(parseSourceArgument("acme/moved/skills/x"), { env })).rejects.toThrow(
        /redirects to another host/,
      );
      expect(other.requests).not.toContain("/repos/acme/moved");
    } finally {
      world.hub.overrides.delete("/claw/api/v1/download");
      world.hub.overrides.delete("/gh/repos/acme/moved");
    }
  });

  it("browse.sh never serves SKILL.md from an unconfigured private host, file:// or a non-http scheme", async () => {
    // The configured (loopback) catalog names a second loopback server: only the endpoint the
    // user configured is allowed to be private, never a host the index points at.
    world.hub.browse.set("site.com/cdn", {
      name: "cdn",
      description: "d",
      hostname: "site.com",
      md: "",
      mdUrl: `${other.url}/cdn.md`,
    });
    other.routes.set("/cdn.md", SAFE_MD("cdn"));
    await expect(fetchId("browse-sh/site.com/cdn")).rejects.toThrow(/private or loopback address; refused/);
    expect(other.requests).not.toContain("/cdn.md");
    world.hub.browse.set("site.com/local", {
      name: "local",
      description: "d",
      hostname: "site.com",
      md: "",
      mdUrl: "file:///etc/passwd",
    });
    await expect(fetchId("browse-sh/site.com/local")).rejects.toThrow(/no http\(s\) SKILL\.md/);
  });
});

describe("private addresses", () => {
  it("a public catalog cannot point a download at this machine or the local network", async () => {
    const seen: string[] = [];
    const fakeFetch = (async (input: URL | string) => {
      const url = String(input);
      seen.push(url);
      const body = url.endsWith("/api/skills")
        ? { skills: [{ slug: "site.com/meta", name: "meta", description: "d" }] }
        : { skillMdUrl: "http://169.254.169.254/latest/meta-data/" };
      return new Response(JSON.stringify(body), { status: 200 });
    }) as typeof fetch;
    const publicCtx: HubContext = {
      env: { HERMES_BROWSE_SH_URL: "https://browse.example" },
      fetch: fakeFetch,
    };
    await expect(adapterById("browse-sh")?.fetch("browse-sh/site.com/meta", publicCtx)).rejects.toThrow(
      /private address \(169\.254\.169\.254\); refused/,
    );
    expect(seen.some((u) => u.includes("169.254"))).toBe(false);
  });

  it("a bare owner/repo/path that is neither a folder nor a GitHub skill says both", async () => {
    await expect(fetchId("no-such/folder/here")).rejects.toThrow(
      /^no folder at .*no-such\/folder\/here, and as a GitHub skill: GitHub has no repository no-such\/folder/,
    );
  });
});

describe("rate limits and the listing cache", () => {
  it("says what to do when GitHub's rate limit is exhausted, and caches nothing", async () => {
    const home = tempDir();
    world.hub.setRepo("acme/limited", { "skills/a/SKILL.md": SAFE_MD("a") });
    world.hub.overrides.set("/gh/repos/acme/limited/contents/skills", (_req, res) => {
      res.writeHead(403, {
        "x-ratelimit-limit": "60",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "1700003600",
        "content-type": "application/json",
      });
      res.end('{"message":"API rate limit exceeded"}');
    });
    try {
      await addTap(home, parseTap("acme/limited"));
      const logs: string[] = [];
      const found = await adapterById("github")?.search("", 10, { ...ctx, home, log: (m) => logs.push(m) });
      expect(found).toEqual([]);
      expect(logs.join("\n")).toMatch(
        /rate limiting requests until 23:13 UTC\. .*set GITHUB_TOKEN or GH_TOKEN/,
      );
      expect(existsSync(join(hubDir(home), "index-cache", "tap_acme_limited_skills_.json"))).toBe(false);
    } finally {
      world.hub.overrides.delete("/gh/repos/acme/limited/contents/skills");
    }
    // Once the limit lifts, the listing is made once and then served from the cache for an hour.
    const first = await adapterById("github")?.search("", 10, { ...ctx, home });
    expect(first?.map((m) => m.identifier)).toContain("acme/limited/skills/a");
    const before = world.hub.requests.length;
    const again = await adapterById("github")?.search("", 10, { ...ctx, home });
    expect(again).toEqual(first);
    expect(world.hub.requests.slice(before).filter((r) => r.includes("acme/limited"))).toEqual([]);
    const fresh = await adapterById("github")?.search("", 10, {
      ...ctx,
      home,
      env: { ...world.env, HERMES_SKILLS_NO_CACHE: "1" },
    });
    expect(fresh).toEqual(first);
    expect(world.hub.requests.slice(before).some((r) => r.includes("acme/limited"))).toBe(true);
  });
});

describe("taps", () => {
  it.each([
    "file:///tmp/repo",
    "/tmp/repo",
    "./repo",
    "../x/y",
    "~/repo",
    "-rf/x",
    "https://evil.example/owner/repo",
    "git@github.com:owner/repo.git",
    "owner/repo/extra",
    "owner/..",
  ])("refuses %s as a tap", (bad) => {
    expect(() => parseTap(bad)).toThrow(HubError);
  });

  it("accepts owner/name and a github.com URL, and refuses a tap path that climbs out", () => {
    expect(parseTap("https://github.com/acme/skills.git")).toEqual({ repo: "acme/skills", path: "skills/" });
    expect(parseTap("acme/skills", "")).toEqual({ repo: "acme/skills", path: "" });
    expect(() => parseTap("acme/skills", "../../etc")).toThrow(/not a folder/);
  });

  it("ignores hand-edited taps.json entries that are not GitHub repositories", async () => {
    const home = tempDir();
    mkdirSync(hubDir(home), { recursive: true });
    writeFileSync(
      tapsPath(home),
      JSON.stringify({
        taps: [
          { repo: "file:///etc", path: "" },
          { repo: "acme/skills", path: "skills/" },
          { repo: "/tmp/x" },
        ],
      }),
    );
    expect(await readTaps(home)).toEqual([{ repo: "acme/skills", path: "skills/" }]);
    expect((await allTaps(home)).map((t) => t.repo)).toContain("acme/skills");
    writeFileSync(tapsPath(home), "{not json");
    await expect(readTaps(home)).rejects.toThrow(/not valid JSON/);
  });
});
