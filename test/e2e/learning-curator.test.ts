/**
 * The learning loop's bookkeeping through the built CLI: skill usage counts move when the model
 * loads a skill, the curator stales, archives, restores, leaves pinned/bundled/hub skills alone,
 * backs up and rolls back, `--dry-run` changes nothing, a due run starts by itself after a chat,
 * and `hermes journey` lists what was learned. Old activity is written into `.usage.json` with
 * past dates instead of waiting.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().replace("Z", "+00:00");
const skill = (name: string) =>
  `---\nname: ${name}\ndescription: Does ${name} things.\n---\n\n# ${name}\n\n1. Step.\n`;

function setup(extra = "") {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url, extra));
  const root = join(h.home, "skills");
  for (const name of ["deploy", "aging", "ancient", "pinned-old", "mine-old", "seeded", "from-hub"]) {
    mkdirSync(join(root, name), { recursive: true });
    writeFileSync(join(root, name, "SKILL.md"), skill(name));
  }
  const agent = (last: number, more = {}) => ({
    created_by: "agent",
    created_at: daysAgo(300),
    last_used_at: daysAgo(last),
    use_count: 1,
    view_count: 0,
    patch_count: 0,
    state: "active",
    ...more,
  });
  writeFileSync(
    join(root, ".usage.json"),
    JSON.stringify({
      deploy: agent(1),
      aging: agent(40),
      ancient: agent(120),
      "pinned-old": agent(400, { pinned: true }),
      "mine-old": { ...agent(400), created_by: null },
    }),
  );
  // Bundled and hub-installed: never curated, whatever their age.
  writeFileSync(join(root, ".bundled_manifest"), "seeded:\n");
  mkdirSync(join(root, ".hub"), { recursive: true });
  writeFileSync(
    join(root, ".hub", "lock.json"),
    JSON.stringify({ version: 1, installed: { "from-hub": { install_path: "from-hub" } } }),
  );
  return { ...h, root };
}

const usage = (root: string) => JSON.parse(readFileSync(join(root, ".usage.json"), "utf8"));
const exists = (root: string, name: string) => existsSync(join(root, name, "SKILL.md"));

describe("skill usage", () => {
  it("counts the model loading a skill and shows it in hermes skills list", async () => {
    const h = setup();
    llm.enqueue(reply().toolCall("skill_view", { name: "deploy" }), reply().text("Deployed."));
    const run = await runHermes(["-q", "deploy the app"], h);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("Deployed.");
    expect(usage(h.root).deploy.view_count).toBe(1);
    const list = await runHermes(["skills", "list"], h);
    expect(list.stdout).toMatch(/^NAME\s+CATEGORY\s+ORIGIN\s+USES\s+LAST ACTIVE/m);
    expect(list.stdout).toMatch(/deploy\s+—\s+agent\s+2\s+just now/);
    expect(list.stdout).toMatch(/from-hub\s+—\s+hub\s+—\s+—/);
  });
});

describe("hermes curator", () => {
  it("dry-run changes nothing; run stales and archives only agent-made skills; restore and rollback undo it", async () => {
    const h = setup();
    const before = readFileSync(join(h.root, ".usage.json"), "utf8");
    const dry = await runHermes(["curator", "run", "--dry-run"], h);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("aging: active → stale (would be)");
    expect(dry.stdout).toContain("ancient: active → archived (would be)");
    expect(readFileSync(join(h.root, ".usage.json"), "utf8")).toBe(before);
    expect(existsSync(join(h.root, ".curator_backups"))).toBe(false);

    const run = await runHermes(["curator", "run"], h);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/curator: auto: 1 marked stale, 1 archived/);
    expect(exists(h.root, "ancient")).toBe(false);
    expect(existsSync(join(h.root, ".archive", "ancient", "SKILL.md"))).toBe(true);
    for (const kept of ["pinned-old", "mine-old", "seeded", "from-hub", "deploy"])
      expect(exists(h.root, kept)).toBe(true);
    expect(usage(h.root).aging.state).toBe("stale");

    const status = await runHermes(["curator", "status"], h);
    expect(status.stdout).toMatch(/curator: ENABLED/);
    expect(status.stdout).toMatch(/runs:\s+1/);
    expect(status.stdout).toMatch(/pinned: pinned-old/);
    expect((await runHermes(["curator", "list-archived"], h)).stdout).toMatch(/ancient\s+archived just now/);

    const refused = await runHermes(["curator", "archive", "seeded"], h);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bundled with Hermes; the curator never archives it/);
    const pinned = await runHermes(["curator", "archive", "pinned-old"], h);
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toMatch(/pinned; unpin it first/);

    const restore = await runHermes(["curator", "restore", "ancient"], h);
    expect(restore.code).toBe(0);
    expect(exists(h.root, "ancient")).toBe(true);

    const list = await runHermes(["curator", "rollback", "--list"], h);
    const id = /^(\S+Z)\s+pre-curator-run/m.exec(list.stdout)?.[1];
    expect(id).toBeDefined();
    // Back to before the run: the stale mark is gone too.
    const rollback = await runHermes(["curator", "rollback", "--id", id as string], h);
    expect(rollback.code).toBe(0);
    expect(usage(h.root).aging.state).toBe("active");
    expect(exists(h.root, "ancient")).toBe(true);

    const journey = await runHermes(["journey", "--json"], h);
    expect(journey.code).toBe(0);
    const events = JSON.parse(journey.stdout) as {
      kind: string;
      action: string;
      subject: string;
      source: string;
    }[];
    expect(events).toContainEqual(
      expect.objectContaining({ kind: "skill", action: "archived", subject: "ancient", source: "curator" }),
    );
  });

  it("starts a due run by itself, detached, after a chat command finished", async () => {
    const h = setup("curator:\n  interval_hours: 1\n  min_idle_hours: 0\n");
    writeFileSync(
      join(h.root, ".curator_state"),
      JSON.stringify({ last_run_at: daysAgo(1), paused: false, run_count: 0 }),
    );
    llm.enqueue(reply().text("Hi."));
    const chat = await runHermes(["-q", "hello"], h);
    expect(chat.code).toBe(0);
    expect(chat.stdout.trim()).toBe("Hi.");
    // The detached run finishes on its own: wait for its report to appear.
    const deadline = Date.now() + 15_000;
    const state = () => JSON.parse(readFileSync(join(h.root, ".curator_state"), "utf8"));
    while (state().run_count !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(state().run_count).toBe(1);
    expect(exists(h.root, "ancient")).toBe(false);
  });
});

describe("hermes journey", () => {
  it("lists memories and skills the agent saved, with their session", async () => {
    const h = setup();
    llm.enqueue(
      reply().toolCall("memory", { action: "add", target: "user", content: "Prefers pnpm over npm." }),
      reply().toolCall("skill_manage", {
        action: "create",
        name: "pnpm-setup",
        content: skill("pnpm-setup"),
      }),
      reply().text("Noted."),
    );
    expect((await runHermes(["-q", "I use pnpm; remember how to set it up"], h)).code).toBe(0);
    const text = await runHermes(["journey"], h);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/user\s+added\s+Prefers pnpm over npm\.\s+\(cli session \S+\)/);
    expect(text.stdout).toMatch(/skill\s+created\s+pnpm-setup\s+\(cli session \S+\)/);
    const json = JSON.parse((await runHermes(["journey", "--json"], h)).stdout) as {
      sessionId?: string;
      subject: string;
    }[];
    expect(json.find((e) => e.subject === "pnpm-setup")?.sessionId).toMatch(/\S/);
  });
});
