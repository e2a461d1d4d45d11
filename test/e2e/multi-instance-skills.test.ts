/**
 * Skill writes made by commands on one instance's home reach every instance (issue 27): two real
 * `hermes gateway run` processes share one PostgreSQL, each with its own home. A hub install on A
 * arrives in B's skills folder with its provenance (B lists it as a hub skill, not the user's own);
 * a snapshot import on A arrives on B; the curator archives it on B, lists and restores it on A;
 * an uninstall on B removes the hub skill from A's disk and lock.json. Nobody copies files between
 * the homes: each gateway's watch of the database brings its own copy up to date.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import {
  type ClusterInstance,
  type GatewayCluster,
  startCluster,
  waitUntil,
} from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

let pg: PostgresFixture;
let llm: FakeLlm;
let cluster: GatewayCluster;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  llm.respondWith(() => reply().text("ok"));
  cluster = await startCluster({ databaseUrl: await pg.createDatabase(), llmUrl: llm.url }, 2);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const md = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# Steps\n\n1. Look.\n2. Act.\n`;

/** `hermes ARGS` on `instance`'s home; fails the test with its output when it exits non-zero. */
async function hermes(instance: ClusterInstance, args: string[]): Promise<string> {
  const result = await runHermes(args, { home: instance.home, cwd: instance.cwd, timeoutMs: 60_000 });
  if (result.code !== 0) {
    throw new Error(`hermes ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

const skillFile = (instance: ClusterInstance, ...rel: string[]) => join(instance.home, "skills", ...rel);

function hubLock(instance: ClusterInstance): Record<string, { install_path?: string }> {
  try {
    return JSON.parse(readFileSync(skillFile(instance, ".hub", "lock.json"), "utf8")).installed ?? {};
  } catch {
    return {};
  }
}

describe.skipIf(postgresSkipReason)("skill writes across two PostgreSQL gateway instances", () => {
  it("a hub install on A is a hub skill on B; an uninstall on B leaves A's disk and provenance", async () => {
    const [a, b] = cluster.instances as [ClusterInstance, ClusterInstance];
    const source = mkdtempSync(join(tmpdir(), "hermes-e2e-skill-src-"));
    mkdirSync(join(source, "pg-vacuum-guide"));
    writeFileSync(
      join(source, "pg-vacuum-guide", "SKILL.md"),
      md("pg-vacuum-guide", "When and how to vacuum PostgreSQL tables.", "category: databases\n"),
    );
    await hermes(a, ["skills", "install", join(source, "pg-vacuum-guide"), "-y"]);

    await waitUntil(
      () =>
        existsSync(skillFile(b, "databases", "pg-vacuum-guide", "SKILL.md")) &&
        hubLock(b)["pg-vacuum-guide"] !== undefined,
      "B to mirror the hub skill and its provenance",
      15_000,
    );
    expect(hubLock(b)["pg-vacuum-guide"]?.install_path).toBe("databases/pg-vacuum-guide");
    const listed = await hermes(b, ["skills", "list", "--source", "hub"]);
    expect(listed).toContain("pg-vacuum-guide");

    await hermes(b, ["skills", "uninstall", "pg-vacuum-guide", "-y"]);
    await waitUntil(
      () =>
        !existsSync(skillFile(a, "databases", "pg-vacuum-guide")) &&
        hubLock(a)["pg-vacuum-guide"] === undefined,
      "A to drop the uninstalled skill",
      15_000,
    );
  }, 120_000);

  it("a snapshot import on A reaches B; the curator archives it on B and restores it on A", async () => {
    const [a, b] = cluster.instances as [ClusterInstance, ClusterInstance];
    const dir = mkdtempSync(join(tmpdir(), "hermes-e2e-snapshot-"));
    const file = join(dir, "skills.json");
    writeFileSync(
      file,
      JSON.stringify({
        format: "hermes-skills-snapshot",
        hermes_version: "0.1.0",
        exported_at: "2026-11-27T00:00:00+00:00",
        skills: [],
        skill_files: [
          {
            name: "pr-digest-e2e",
            category: "writing",
            origin: "user",
            files: { "SKILL.md": { content: md("pr-digest-e2e", "Write release notes from merged PRs.") } },
          },
        ],
      }),
    );
    const imported = await hermes(a, ["skills", "snapshot", "import", file]);
    expect(imported).toMatch(/installed +pr-digest-e2e/);
    await waitUntil(
      () => existsSync(skillFile(b, "writing", "pr-digest-e2e", "SKILL.md")),
      "B to mirror the imported skill",
      15_000,
    );

    await hermes(b, ["curator", "archive", "pr-digest-e2e"]);
    await waitUntil(
      () =>
        !existsSync(skillFile(a, "writing", "pr-digest-e2e")) &&
        existsSync(skillFile(a, ".archive", "pr-digest-e2e", "SKILL.md")),
      "A to archive it too",
      15_000,
    );
    expect(await hermes(a, ["curator", "list-archived"])).toContain("pr-digest-e2e");

    await hermes(a, ["curator", "restore", "pr-digest-e2e"]);
    await waitUntil(
      () =>
        existsSync(skillFile(b, "pr-digest-e2e", "SKILL.md")) ||
        existsSync(skillFile(b, "writing", "pr-digest-e2e", "SKILL.md")),
      "B to get it back",
      15_000,
    );
    await waitUntil(
      () => !existsSync(skillFile(b, ".archive", "pr-digest-e2e")),
      "B's archive to drop it",
      15_000,
    );
    expect(await hermes(b, ["curator", "list-archived"])).not.toContain("pr-digest-e2e");
  }, 120_000);
});
