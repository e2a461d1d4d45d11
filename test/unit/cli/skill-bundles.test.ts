// Skill bundles: `hermes bundles …` and the message `/<bundle> [request]` sends.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { beforeEach, describe, expect, it } from "vitest";
import { bundlesCommand } from "../../../src/cli/commands/skills/bundles.js";
import { loadBundleMessage } from "../../../src/knowledge/skills/skill-bundles.js";
import { sink } from "../../support/text-sink.js";
import { tempDir, writeTree } from "../knowledge/skills/hub/helpers.js";
import { goodSkill } from "./skills-mgmt/run.js";

let home: string;

async function bundles(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await bundlesCommand.run(args, {
    env: { HERMES_HOME: home, NO_COLOR: "1" },
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    stdout,
    stderr,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

beforeEach(() => {
  home = join(tempDir("hermes-bundles-"), "home");
  mkdirSync(home);
  writeTree(join(home, "skills", "devops", "docker-ops"), { "SKILL.md": goodSkill("docker-ops", "devops") });
  writeTree(join(home, "skills", "devops", "systemd-ops"), {
    "SKILL.md": goodSkill("systemd-ops", "devops"),
    "references/units.md": "# units\n",
  });
});

describe("hermes bundles", () => {
  it("create, list, show, delete", async () => {
    const made = await bundles([
      "create",
      "server-day",
      "--skill",
      "docker-ops",
      "--skill",
      "systemd-ops",
      "--skill",
      "not-yet",
      "-d",
      "Keep the server healthy",
      "--instruction",
      "Check the disk first.",
    ]);
    expect(made.code).toBe(0);
    expect(made.stderr).toContain("not installed yet: not-yet");
    expect(readFileSync(join(home, "skill-bundles", "server-day.yaml"), "utf8")).toBe(
      "name: server-day\ndescription: Keep the server healthy\nskills:\n  - docker-ops\n  - systemd-ops\n  - not-yet\ninstruction: Check the disk first.\n",
    );
    const list = await bundles(["list"]);
    expect(list.stdout).toBe(
      "/server-day  docker-ops, systemd-ops, not-yet — Keep the server healthy  (not installed: not-yet)\n",
    );
    const shown = JSON.parse((await bundles(["show", "server-day", "--json"])).stdout);
    expect(shown).toMatchObject({
      slug: "server-day",
      missing: ["not-yet"],
      instruction: "Check the disk first.",
    });
    expect((await bundles(["create", "server-day", "--skill", "docker-ops"])).code).toBe(1);
    expect((await bundles(["create", "server-day", "--skill", "docker-ops", "--force"])).code).toBe(0);
    expect((await bundles(["delete", "server-day"])).code).toBe(0);
    expect((await bundles(["delete", "server-day"])).code).toBe(1);
  });

  it.each(["../evil", "a/b", "Big", ".hidden"])("refuses the bundle name %j", async (name) => {
    const out = await bundles(["create", name, "--skill", "docker-ops"]);
    expect(out.code).toBe(2);
  });

  it("counts the bundled skills as installed on a fresh home (they are seeded first)", async () => {
    const made = await bundles(["create", "ship", "--skill", "release-notes", "--skill", "git-bisect"]);
    expect(made.code).toBe(0);
    expect(made.stderr).not.toContain("not installed");
    expect((await bundles(["list"])).stdout).toBe("/ship  release-notes, git-bisect\n");
  });

  it("refuses a skill name that is a path", async () => {
    expect((await bundles(["create", "ok", "--skill", "../../etc/passwd"])).code).toBe(2);
  });

  it("reload and list report a broken file; it is never loaded", async () => {
    mkdirSync(join(home, "skill-bundles"), { recursive: true });
    writeFileSync(join(home, "skill-bundles", "broken.yaml"), "skills: docker-ops\n");
    writeFileSync(join(home, "skill-bundles", "sneaky.yaml"), "skills: [../../secret]\n");
    const reload = await bundles(["reload"]);
    expect(reload.code).toBe(1);
    expect(reload.stderr).toContain("broken: skills must be a non-empty list");
    expect(reload.stderr).toContain("sneaky: Invalid skill name");
    expect(await loadBundleMessage(home, "broken")).toBeUndefined();
    expect(await loadBundleMessage(home, "sneaky")).toBeUndefined();
  });
});

describe("/<bundle> message", () => {
  it("holds the instruction, every skill's instructions and the request; names missing skills", async () => {
    await bundles([
      "create",
      "server-day",
      "--skill",
      "docker-ops",
      "--skill",
      "systemd-ops",
      "--skill",
      "gone",
      "--instruction",
      "Check the disk first.",
    ]);
    const text =
      (await loadBundleMessage(home, "server-day", undefined, { instruction: "restart nginx" })) ?? "";
    expect(text).toContain('[Skill bundle "server-day" loaded by the user: docker-ops, systemd-ops.');
    expect(text).toContain("Bundle instruction: Check the disk first.");
    expect(text).toContain('[Skill "docker-ops" loaded by the user');
    expect(text).toContain('[Skill "systemd-ops" loaded by the user');
    expect(text).toContain("- references/units.md");
    expect(text).toContain("Not available here (not installed or disabled): gone.");
    expect(text.endsWith("User request: restart nginx")).toBe(true);
    expect(text.match(/User request:/g)).toHaveLength(1);
  });

  it("is undefined for an unknown bundle, a path, or a bundle of missing skills", async () => {
    expect(await loadBundleMessage(home, "nope")).toBeUndefined();
    expect(await loadBundleMessage(home, "../skills/devops/docker-ops/SKILL")).toBeUndefined();
    await bundles(["create", "empty-one", "--skill", "gone"]);
    expect(await loadBundleMessage(home, "empty-one")).toBeUndefined();
  });

  it("respects skills.disabled", async () => {
    await bundles(["create", "pair", "--skill", "docker-ops", "--skill", "systemd-ops"]);
    const text = (await loadBundleMessage(home, "pair", { disabled: ["docker-ops"] })) ?? "";
    expect(text).not.toContain('[Skill "docker-ops"');
    expect(text).toContain("Not available here (not installed or disabled): docker-ops.");
  });
});
