import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ProfileError, ProfileNameError } from "../../../src/config/errors.js";
import { resolveActiveHome, rootHome } from "../../../src/config/home.js";
import {
  activeProfile,
  CHANNEL_ENV_NAMES,
  createProfile,
  deleteProfile,
  listProfiles,
  renameProfile,
  setActiveProfile,
} from "../../../src/config/profiles.js";
import { PLATFORMS } from "../../../src/gateway/platforms/registry.js";

function userHome(): { home: string; root: string } {
  const home = mkdtempSync(join(tmpdir(), "hermes-profiles-unit-"));
  mkdirSync(join(home, ".hermes"));
  return { home, root: join(home, ".hermes") };
}

describe("resolveActiveHome", () => {
  it("follows the sticky profile only when neither -p nor a different HERMES_HOME says otherwise", () => {
    const { home, root } = userHome();
    createProfile({ name: "work", userHome: home });
    setActiveProfile("work", home);
    const work = join(root, "profiles/work");
    expect(resolveActiveHome({ env: {}, homedir: home })).toBe(work);
    expect(resolveActiveHome({ env: { HERMES_HOME: root }, homedir: home })).toBe(work);
    expect(resolveActiveHome({ env: {}, profile: "default", homedir: home })).toBe(root);
    expect(resolveActiveHome({ env: { HERMES_HOME: "/srv/h" }, homedir: home })).toBe("/srv/h");
  });

  it.each([
    ["../../etc", ProfileError],
    ["Work", ProfileError],
    ["gone", ProfileError],
  ])("refuses the sticky file naming %j", (name, type) => {
    const { home } = userHome();
    writeFileSync(join(home, ".hermes/active_profile"), `${name}\n`);
    expect(() => resolveActiveHome({ env: {}, homedir: home })).toThrow(type);
  });

  it("treats an empty file, 'default' and a BOM the way upstream does", () => {
    const { home, root } = userHome();
    for (const text of ["", "default\n", "\n\n"]) {
      writeFileSync(join(root, "active_profile"), text);
      expect(resolveActiveHome({ env: {}, homedir: home })).toBe(root);
    }
    createProfile({ name: "bom", userHome: home });
    writeFileSync(join(root, "active_profile"), "\uFEFFbom\r\n");
    expect(resolveActiveHome({ env: {}, homedir: home })).toBe(join(root, "profiles/bom"));
  });

  it("finds the root home above a profile-shaped HERMES_HOME", () => {
    expect(rootHome({ HERMES_HOME: "/h/.hermes/profiles/x" }, "/h")).toBe("/h/.hermes");
    expect(rootHome({ HERMES_HOME: "/srv/hermes" }, "/h")).toBe("/srv/hermes");
    expect(rootHome({}, "/h")).toBe("/h/.hermes");
  });
});

describe("createProfile", () => {
  it("--clone-all copies everything but history, runtime files, cron jobs, other profiles and OAuth grants", () => {
    const { home, root } = userHome();
    writeFileSync(join(root, "config.yaml"), "model:\n  default: m\n");
    writeFileSync(
      join(root, ".env"),
      "SLACK_BOT_TOKEN=xoxb-1234567890\nOPENAI_API_KEY=sk-12345678901234567890\n",
    );
    writeFileSync(
      join(root, "auth.json"),
      JSON.stringify({
        version: 1,
        providers: { nous: { refresh_token: "r" } },
        credential_pool: { openai: [{ key: "k" }] },
      }),
    );
    for (const dir of ["sessions", "cron", "checkpoints", "pairing", "memories", "profiles/other"])
      mkdirSync(join(root, dir), { recursive: true });
    for (const file of [
      "state.db",
      "gateway.pid",
      "cron/jobs.json",
      "pairing/telegram-approved.json",
      "memories/USER.md",
      "sessions/saved.json",
    ]) {
      writeFileSync(join(root, file), "x");
    }
    const created = createProfile({ name: "twin", userHome: home, cloneFrom: root, cloneAll: true });
    const twin = created.path;
    expect(readFileSync(join(twin, "config.yaml"), "utf8")).toContain("default: m");
    expect(readFileSync(join(twin, "memories/USER.md"), "utf8")).toBe("x");
    for (const gone of [
      "state.db",
      "gateway.pid",
      "cron/jobs.json",
      "pairing",
      "profiles",
      "sessions/saved.json",
    ]) {
      expect(existsSync(join(twin, gone)), gone).toBe(false);
    }
    // The bootstrap directories exist even where history was left out.
    expect(existsSync(join(twin, "cron"))).toBe(true);
    expect(readFileSync(join(twin, ".env"), "utf8")).not.toContain("SLACK_BOT_TOKEN");
    const auth = JSON.parse(readFileSync(join(twin, "auth.json"), "utf8"));
    expect(auth.providers).toEqual({});
    expect(auth.credential_pool.openai).toHaveLength(1);
    expect(created.strippedChannels).toEqual(expect.arrayContaining(["SLACK_BOT_TOKEN", "pairing"]));
    // The source is untouched.
    expect(readFileSync(join(root, ".env"), "utf8")).toContain("SLACK_BOT_TOKEN");
  });

  it("drops every chat platform's account from a clone, whichever platform it is", () => {
    const { home, root } = userHome();
    const lines = CHANNEL_ENV_NAMES.map((name) => `export ${name}=value-of-${name.toLowerCase()}`);
    writeFileSync(join(root, ".env"), `${lines.join("\n")}\nOPENAI_API_KEY=sk-kept-1234567890\n`);
    createProfile({ name: "twin", userHome: home, cloneFrom: root });
    const cloned = readFileSync(join(root, "profiles/twin/.env"), "utf8");
    for (const name of CHANNEL_ENV_NAMES) expect(cloned, name).not.toContain(name);
    expect(cloned).toContain("OPENAI_API_KEY=sk-kept-1234567890");
  });

  it("knows every variable that switches a gateway platform on", () => {
    // A platform added to the gateway without its variable here would follow a clone to a second profile.
    for (const [name, spec] of Object.entries(PLATFORMS))
      expect(CHANNEL_ENV_NAMES, name).toContain(spec.token);
  });

  it("never edits the source through a symlinked .env", () => {
    const { home, root } = userHome();
    const real = join(home, "shared.env");
    writeFileSync(real, "TELEGRAM_BOT_TOKEN=123:abcdefghijkl\n");
    symlinkSync(real, join(root, ".env"));
    createProfile({ name: "linked", userHome: home, cloneFrom: root, cloneAll: true });
    expect(readFileSync(real, "utf8")).toContain("TELEGRAM_BOT_TOKEN");
    expect(readFileSync(join(root, "profiles/linked/.env"), "utf8")).not.toContain("TELEGRAM_BOT_TOKEN");
  });

  it("leaves no half-built profile behind when a clone fails, and refuses names that are taken or unsafe", () => {
    const { home, root } = userHome();
    expect(() => createProfile({ name: "x", userHome: home, cloneFrom: join(home, "missing") })).toThrow(
      ProfileError,
    );
    const left = existsSync(join(root, "profiles")) ? readdirSync(join(root, "profiles")) : [];
    expect(left).toEqual([]);
    createProfile({ name: "x", userHome: home });
    expect(() => createProfile({ name: "x", userHome: home })).toThrow(/already exists/);
    expect(() => createProfile({ name: "sudo", userHome: home })).toThrow(/reserved/);
    expect(() => createProfile({ name: "a/b", userHome: home })).toThrow(ProfileNameError);
  });

  it("rename and delete carry the sticky profile along", () => {
    const { home } = userHome();
    createProfile({ name: "a", userHome: home });
    setActiveProfile("a", home);
    renameProfile("a", "b", home);
    expect(activeProfile(home)).toBe("b");
    expect(listProfiles(home).map((p) => [p.name, p.isActive])).toEqual([
      ["default", false],
      ["b", true],
    ]);
    expect(() => renameProfile("default", "c", home)).toThrow(ProfileError);
    expect(deleteProfile("b", home).wasActive).toBe(true);
    expect(activeProfile(home)).toBe("default");
    expect(() => setActiveProfile("b", home)).toThrow(/does not exist/);
  });
});
