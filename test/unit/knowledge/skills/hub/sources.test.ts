import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatGitSpec, parseGitSpec } from "../../../../../src/knowledge/skills/hub/git.js";
import { httpGet } from "../../../../../src/knowledge/skills/hub/http.js";
import {
  fetchSkill,
  parseSourceArgument,
  specFromLock,
} from "../../../../../src/knowledge/skills/hub/sources.js";
import {
  git,
  gitCommit,
  gitRepo,
  hasGit,
  skillMd,
  startServer,
  type TestServer,
  tempDir,
  writeTree,
} from "./helpers.js";

describe("parseSourceArgument", () => {
  const cwd = tempDir();
  writeTree(cwd, { "my-skill/SKILL.md": skillMd("my-skill") });
  it.each([
    ["https://example.com/repo.git", { kind: "git", url: "https://example.com/repo.git" }],
    ["git@github.com:org/repo.git", { kind: "git", url: "git@github.com:org/repo.git" }],
    [
      "file:///tmp/r.git#v1:skills/x",
      { kind: "git", url: "file:///tmp/r.git", ref: "v1", subdir: "skills/x" },
    ],
    [
      "https://h.example/r.git#:skills/x",
      { kind: "git", url: "https://h.example/r.git", subdir: "skills/x" },
    ],
    ["https://h.example/r.git:skills/x", { kind: "git", url: "https://h.example/r.git", subdir: "skills/x" }],
    ["https://h.example/skills/x/SKILL.md", { kind: "url", url: "https://h.example/skills/x/SKILL.md" }],
    [
      "https://h.example/.well-known/skills/index.json#pdf",
      { kind: "well-known", indexUrl: "https://h.example/.well-known/skills/index.json", name: "pdf" },
    ],
    [
      "https://h.example/.well-known/skills/pdf/SKILL.md",
      { kind: "well-known", indexUrl: "https://h.example/.well-known/skills/index.json", name: "pdf" },
    ],
    [
      "https://h.example",
      { kind: "well-known", indexUrl: "https://h.example/.well-known/skills/index.json" },
    ],
    [
      "well-known:https://h.example/.well-known/skills/pdf",
      { kind: "well-known", indexUrl: "https://h.example/.well-known/skills/index.json", name: "pdf" },
    ],
  ])("%s", (arg, expected) => {
    expect(parseSourceArgument(arg, { cwd })).toEqual(expected);
  });
  it("a relative folder", () => {
    expect(parseSourceArgument("my-skill", { cwd })).toEqual({ kind: "local", path: join(cwd, "my-skill") });
  });
  it("--git forces git", () => {
    expect(parseSourceArgument("https://h.example/plain#main", { git: true })).toEqual({
      kind: "git",
      url: "https://h.example/plain",
      ref: "main",
    });
  });
  it.each([
    ["nowhere-at-all", /no folder or file/],
    ["ftp://x.example/a", /unsupported source/],
  ])("refuses %s", (arg, message) => {
    expect(() => parseSourceArgument(arg, { cwd })).toThrow(message);
  });
  it("refuses option-looking and helper git URLs", () => {
    expect(() => parseGitSpec("--upload-pack=touch /tmp/x")).toThrow(/not a git URL/);
    expect(() => parseGitSpec("ext::sh -c touch% /tmp/pwned")).toThrow(/not a git URL/);
    expect(() => parseGitSpec("https://h.example/r.git#--bad")).toThrow(/not a valid git ref/);
    expect(() => parseGitSpec("https://h.example/r.git#main:../../etc")).toThrow(/not a safe folder/);
  });
  it("round-trips git specs through the lock identifier", () => {
    for (const s of ["file:///r.git", "file:///r.git#v2", "file:///r.git#:a/b", "file:///r.git#v2:a/b"]) {
      expect(formatGitSpec(parseGitSpec(s))).toBe(s);
    }
  });
  it("rebuilds specs from lock entries and refuses unknown sources", () => {
    expect(specFromLock("url", "https://x.example/SKILL.md")).toEqual({
      kind: "url",
      url: "https://x.example/SKILL.md",
    });
    expect(specFromLock("clawhub", "foo")).toEqual({ kind: "hub", source: "clawhub", identifier: "foo" });
    expect(specFromLock("skills.sh", "skills-sh/a/b/c")).toEqual({
      kind: "hub",
      source: "skills-sh",
      identifier: "skills-sh/a/b/c",
    });
    expect(() => specFromLock("pypi", "foo")).toThrow(/cannot fetch from source "pypi"/);
  });
});

describe("local folder source", () => {
  it("reads one skill, skipping .git and symlinks", async () => {
    const dir = writeTree(tempDir(), {
      "SKILL.md": skillMd("solo"),
      "references/a.md": "A",
      ".git/HEAD": "ref",
    });
    symlinkSync("/etc/passwd", join(dir, "references", "link.md"));
    const bundle = await fetchSkill({ kind: "local", path: dir });
    expect(bundle.name).toBe("solo");
    expect([...bundle.files.keys()].sort()).toEqual(["SKILL.md", "references/a.md"]);
    expect(bundle.warnings).toEqual(["skipped symlink references/link.md"]);
    expect(bundle).toMatchObject({ source: "local", identifier: dir });
  });
  it("lists the skills of a collection when none is named, and installs the named one", async () => {
    const dir = writeTree(tempDir(), {
      "one/SKILL.md": skillMd("one", "First."),
      "nested/two/SKILL.md": skillMd("two", "Second."),
    });
    await expect(fetchSkill({ kind: "local", path: dir })).rejects.toThrow(
      /holds 2 skills; pick one with --name[\s\S]*one — First\.[\s\S]*two — Second\./,
    );
    const two = await fetchSkill({ kind: "local", path: dir }, { select: "two" });
    expect(two.identifier).toBe(join(dir, "nested", "two"));
    await expect(fetchSkill({ kind: "local", path: dir }, { select: "three" })).rejects.toThrow(
      /no skill named "three"/,
    );
  });
  it("refuses a binary outside assets/", async () => {
    const dir = writeTree(tempDir(), {
      "SKILL.md": skillMd("b"),
      "scripts/tool": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0]),
    });
    await expect(fetchSkill({ kind: "local", path: dir })).rejects.toThrow(/binary file/);
  });
});

describe("HTTP sources (127.0.0.1)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("fetches a SKILL.md URL with the linked files beside it, and warns about missing ones", async () => {
    server.routes.set(
      "/skills/weather/SKILL.md",
      skillMd("weather", "Forecasts.", "", "See references/api.md and scripts/get.sh.\n"),
    );
    server.routes.set("/skills/weather/scripts/get.sh", "#!/bin/sh\necho forecast\n");
    const bundle = await fetchSkill(parseSourceArgument(`${server.url}/skills/weather/SKILL.md`));
    expect(bundle).toMatchObject({
      name: "weather",
      source: "url",
      identifier: `${server.url}/skills/weather/SKILL.md`,
    });
    expect([...bundle.files.keys()]).toEqual(["SKILL.md", "scripts/get.sh"]);
    expect(bundle.warnings[0]).toMatch(/references\/api\.md, which could not be fetched/);
  });

  it("names a URL skill without frontmatter name from the URL", async () => {
    server.routes.set("/raw/notes/SKILL.md", "# Notes\n");
    expect((await fetchSkill({ kind: "url", url: `${server.url}/raw/notes/SKILL.md` })).name).toBe("notes");
  });

  it("reports a 404 with the URL", async () => {
    await expect(fetchSkill({ kind: "url", url: `${server.url}/missing/SKILL.md` })).rejects.toThrow(
      /HTTP 404/,
    );
  });

  it("installs from a well-known index, with its listed files, and names the skill as Python does", async () => {
    server.routes.set(
      "/.well-known/skills/index.json",
      JSON.stringify({
        skills: [
          { name: "pdf", description: "Read PDFs.", files: ["SKILL.md", "references/api.md"] },
          { name: "csv", description: "Read CSVs." },
          { name: "Bad Name", description: "skipped" },
        ],
      }),
    );
    server.routes.set("/.well-known/skills/pdf/SKILL.md", skillMd("pdf", "Read PDFs."));
    server.routes.set("/.well-known/skills/pdf/references/api.md", "API");
    server.routes.set("/.well-known/skills/csv/SKILL.md", skillMd("csv"));
    const pdf = await fetchSkill(parseSourceArgument(server.url), { select: "pdf" });
    expect(pdf.identifier).toBe(`well-known:${server.url}/.well-known/skills/pdf`);
    expect([...pdf.files.keys()].sort()).toEqual(["SKILL.md", "references/api.md"]);
    expect(pdf.files.get("references/api.md")?.toString()).toBe("API");
    const csv = await fetchSkill(parseSourceArgument(`well-known:${server.url}/.well-known/skills/csv`));
    expect([...csv.files.keys()]).toEqual(["SKILL.md"]);
    await expect(fetchSkill(parseSourceArgument(server.url))).rejects.toThrow(
      /lists 2 skills; pick one with --name/,
    );
  });

  it("refuses traversal and absolute paths in an index file list", async () => {
    server.routes.set(
      "/evil/.well-known/skills/index.json",
      JSON.stringify({
        skills: [
          { name: "climb", files: ["SKILL.md", "../../secrets.txt"] },
          { name: "abs", files: ["SKILL.md", "/etc/passwd"] },
        ],
      }),
    );
    server.routes.set("/evil/.well-known/skills/climb/SKILL.md", skillMd("climb"));
    const index = `${server.url}/evil/.well-known/skills/index.json`;
    await expect(fetchSkill({ kind: "well-known", indexUrl: index, name: "climb" })).rejects.toThrow(
      /unsafe file path "\.\.\/\.\.\/secrets\.txt"/,
    );
    await expect(fetchSkill({ kind: "well-known", indexUrl: index, name: "abs" })).rejects.toThrow(
      /unsafe file path/,
    );
    expect(server.requests).not.toContain("/evil/.well-known/secrets.txt");
  });

  // The tests' loopback server is a URL the user typed at this machine (see http.ts).
  const local = { typedLocally: true };

  it("bounds redirects and body size", async () => {
    server.routes.set("/loop", (_req, res) => {
      res.writeHead(302, { location: "/loop" });
      res.end();
    });
    await expect(httpGet(`${server.url}/loop`, { maxBytes: 100, guard: local })).rejects.toThrow(
      /redirected more than 5 times/,
    );
    server.routes.set("/hop", (_req, res) => {
      res.writeHead(301, { location: "/target" });
      res.end();
    });
    server.routes.set("/target", "landed");
    expect((await httpGet(`${server.url}/hop`, { maxBytes: 100, guard: local })).body.toString()).toBe(
      "landed",
    );
    server.routes.set("/big", (_req, res) => {
      res.writeHead(200);
      res.write("x".repeat(600));
      res.end("y".repeat(600));
    });
    await expect(httpGet(`${server.url}/big`, { maxBytes: 1000, guard: local })).rejects.toThrow(
      /larger than 1000 bytes/,
    );
  });

  it("times out a server that never answers", async () => {
    server.routes.set("/hang", () => {});
    await expect(
      httpGet(`${server.url}/hang`, { maxBytes: 10, timeoutMs: 200, guard: local }),
    ).rejects.toThrow(/no answer within/);
  });

  it("refuses a public URL redirecting to a private address", async () => {
    const fakeFetch: typeof fetch = async () =>
      new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data" } });
    await expect(
      httpGet("https://public.example/skill.md", { maxBytes: 10, fetch: fakeFetch }),
    ).rejects.toThrow(/redirects to a private address/);
  });
});

describe.skipIf(!hasGit())("git source (local bare repository over file://)", () => {
  it("clones shallowly and takes the skill at the root", async () => {
    const repo = gitRepo({ "SKILL.md": skillMd("gitty"), "scripts/run.sh": "echo hi\n" });
    const bundle = await fetchSkill(parseSourceArgument(repo.url));
    expect(bundle).toMatchObject({ name: "gitty", source: "git", identifier: repo.url });
    expect([...bundle.files.keys()].sort()).toEqual(["SKILL.md", "scripts/run.sh"]);
    expect(bundle.metadata["commit"]).toMatch(/^[0-9a-f]{40}$/);
  });

  it("picks a skill from a collection and records its subfolder", async () => {
    const repo = gitRepo({ "skills/a/SKILL.md": skillMd("a"), "skills/b/SKILL.md": skillMd("b") });
    await expect(fetchSkill(parseSourceArgument(repo.url))).rejects.toThrow(/holds 2 skills/);
    const b = await fetchSkill(parseSourceArgument(repo.url), { select: "b" });
    expect(b.identifier).toBe(`${repo.url}#:skills/b`);
    const again = await fetchSkill(specFromLock("git", b.identifier));
    expect(again.name).toBe("b");
  });

  it("honours #ref and :subdir", async () => {
    const repo = gitRepo({ "skills/a/SKILL.md": skillMd("a", "v1") });
    const v1 = git(repo.work, "rev-parse", "HEAD").trim();
    gitCommit(repo, { "skills/a/SKILL.md": skillMd("a", "v2") });
    const atV1 = await fetchSkill(parseSourceArgument(`${repo.url}#${v1}:skills/a`));
    expect(atV1.files.get("SKILL.md")?.toString()).toContain("v1");
    const atMain = await fetchSkill(parseSourceArgument(`${repo.url}#main:skills/a`));
    expect(atMain.files.get("SKILL.md")?.toString()).toContain("v2");
  });

  it("reports a missing repository", async () => {
    await expect(fetchSkill(parseSourceArgument(`file://${tempDir()}/none.git`))).rejects.toThrow(
      /git failed/,
    );
  });
});
