/**
 * Skill usage is shared through PostgreSQL (issue 27): with two real `hermes gateway run`
 * processes over one database, each with its own home and its own mirror of the shared skills, a
 * skill the agent views through instance A's API server and the user pins with `hermes curator pin`
 * on A's home is ranked by that use in instance B's next prompt index (its description kept in a
 * budget that names most skills only), and `hermes skills list --json` and the dashboard on B's
 * home show its count and pin. B's agent cannot delete the pinned skill, even after a usage file
 * forged into B's home claims it is not pinned; unpinned from B's dashboard, A's home sees it so.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgSkillLibrary } from "../../src/knowledge/postgres/skill-library.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { migrate } from "../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../src/state/postgres/migrations/index.js";
import { runHermes } from "../support/cli.js";
import { dashboardClient, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import { CLUSTER_API_KEY, type GatewayCluster, startCluster } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

let pg: PostgresFixture;
let llm: FakeLlm;
let cluster: GatewayCluster;
let dashboard: RunningDashboard | undefined;

/** The target's line when the index describes it (the budget names most of the 90 others only). */
const DESCRIBED = "zz-target: Ranks the harbour ferries";

/** 90 filler skills and the target, stored in the database before any instance starts. */
async function seedSkills(url: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "hermes-seed-skills-"));
  const add = (name: string, description: string) => {
    mkdirSync(join(dir, "tools", name), { recursive: true });
    writeFileSync(
      join(dir, "tools", name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\nFollow the steps.\n`,
    );
  };
  for (let i = 0; i < 90; i++) {
    const n = String(i).padStart(2, "0");
    add(`skill-${n}`, `Walks through the routine chores of area ${n} with care and detail for everyone.`);
  }
  add("zz-target", "Ranks the harbour ferries by punctuality with a marker phrase.");
  const db = await openPgDatabase(url, { max: 2 });
  try {
    await migrate(db, MIGRATIONS);
    const report = await pgSkillLibrary(
      db,
      mkdtempSync(join(tmpdir(), "hermes-seed-mirror-")),
    ).importDirectory(dir);
    expect(report.imported).toHaveLength(91);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  const databaseUrl = await pg.createDatabase();
  await seedSkills(databaseUrl);
  cluster = await startCluster({ databaseUrl, llmUrl: llm.url }, 2);
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
  await cluster?.close();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const client = (apiUrl: string) =>
  new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: CLUSTER_API_KEY, maxRetries: 0 });

/** The messages of one model request (none when there was no request). */
function messagesOf(request: RecordedRequest | undefined): Array<{ role: string; content: unknown }> {
  return ((request?.body ?? {}) as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
}

/** The system prompt of one model request. */
function systemPrompt(request: RecordedRequest | undefined): string {
  return String(messagesOf(request).find((m) => m.role === "system")?.content ?? "");
}

describe.skipIf(postgresSkipReason)("skill usage across two gateway instances over one PostgreSQL", () => {
  it("a use and a pin on A show in B's prompt index, skills list and dashboard; B cannot delete it", async () => {
    const [a, b] = cluster.instances;

    // B before any use: the target is only named, among many.
    llm.enqueue(reply().text("Hello from B."));
    await client(b!.apiUrl).responses.create({ model: "hermes-agent", input: "Hi." });
    const before = systemPrompt(llm.chatRequests.at(-1));
    expect(before).toContain("zz-target");
    expect(before).not.toContain(DESCRIBED);

    // The agent on A views the skill (from A's own mirror of the shared library).
    llm.enqueue(reply().toolCall("skill_view", { name: "zz-target" }), reply().text("Viewed it."));
    const viewed = await client(a!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "Check the ferries.",
    });
    expect(viewed.output_text).toBe("Viewed it.");
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("Follow the steps.");

    // The user pins it from A's home (a CLI command, not an instance).
    const pin = await runHermes(["curator", "pin", "zz-target"], { home: a!.home, cwd: a!.cwd });
    expect(pin.stderr).toBe("");
    expect(pin.stdout).toContain('pinned "zz-target"');

    // B's next session ranks the target by A's use: it is described now.
    llm.enqueue(reply().text("Hello again from B."));
    await client(b!.apiUrl).responses.create({ model: "hermes-agent", input: "Hi again." });
    expect(systemPrompt(llm.chatRequests.at(-1))).toContain(DESCRIBED);

    // `hermes skills list --json` on B's home: A's count and pin.
    const listed = await runHermes(["skills", "list", "--json"], { home: b!.home, cwd: b!.cwd });
    expect(listed.code).toBe(0);
    const target = (JSON.parse(listed.stdout) as Array<Record<string, unknown>>).find(
      (s) => s["name"] === "zz-target",
    );
    expect(target).toMatchObject({ view_count: 1, pinned: true });

    // The dashboard on B's home reads the same.
    dashboard = await startDashboardProcess({ home: b!.home, cwd: b!.cwd });
    const api = dashboardClient(dashboard, dashboard.token ?? "");
    const all = (await api.get("/api/skills")).json() as { skills: Array<Record<string, unknown>> };
    expect(all.skills.find((s) => s["name"] === "zz-target")).toMatchObject({ view_count: 1, pinned: true });
    const one = (await api.get("/api/skills/zz-target")).json() as { skill: Record<string, unknown> };
    expect(one.skill).toMatchObject({ view_count: 1, pinned: true });

    // A usage file forged into B's home (as a model with file tools might) does not unpin it.
    writeFileSync(
      join(b!.home, "skills", ".usage.json"),
      JSON.stringify({ "zz-target": { pinned: false, created_by: "agent" } }),
    );
    llm.enqueue(
      reply().toolCall("skill_manage", { action: "delete", name: "zz-target" }),
      reply().text("It is pinned."),
    );
    await client(b!.apiUrl).responses.create({ model: "hermes-agent", input: "Delete the ferry skill." });
    const sent = messagesOf(llm.chatRequests.at(-1));
    expect(String(sent.find((m) => m.role === "tool")?.content)).toContain('\\"zz-target\\" is pinned');
    const still = await runHermes(["skills", "list", "--json"], { home: b!.home, cwd: b!.cwd });
    expect(JSON.parse(still.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "zz-target", pinned: true })]),
    );

    // Unpinned from B's dashboard: A's home sees it unpinned, with its count kept.
    expect((await api.send("POST", "/api/skills/zz-target/unpin")).status).toBe(200);
    const fromA = await runHermes(["skills", "list", "--json"], { home: a!.home, cwd: a!.cwd });
    expect(JSON.parse(fromA.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "zz-target", pinned: false, view_count: 1 })]),
    );
  }, 120_000);
});
