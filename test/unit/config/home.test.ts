import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ProfileNameError } from "../../../src/config/errors.js";
import {
  authPath,
  configPath,
  cronDir,
  envPath,
  logsDir,
  memoriesDir,
  profilesRoot,
  resolveHome,
  skillsDir,
  stateDbPath,
  validateProfileName,
} from "../../../src/config/home.js";

const homedir = "/home/ada";

describe("resolveHome", () => {
  it("defaults to ~/.hermes", () => {
    expect(resolveHome({ env: {}, homedir })).toBe("/home/ada/.hermes");
  });

  it("uses HERMES_HOME when set, expanding ~", () => {
    expect(resolveHome({ env: { HERMES_HOME: "/srv/hermes" }, homedir })).toBe("/srv/hermes");
    expect(resolveHome({ env: { HERMES_HOME: "~/alt" }, homedir })).toBe("/home/ada/alt");
    expect(resolveHome({ env: { HERMES_HOME: "" }, homedir })).toBe("/home/ada/.hermes");
  });

  it("puts a profile under the HOME-anchored profiles root, even when HERMES_HOME is set", () => {
    expect(resolveHome({ env: {}, profile: "coder", homedir })).toBe("/home/ada/.hermes/profiles/coder");
    expect(resolveHome({ env: { HERMES_HOME: "/srv/hermes" }, profile: "coder", homedir })).toBe(
      "/home/ada/.hermes/profiles/coder",
    );
    expect(profilesRoot(homedir)).toBe("/home/ada/.hermes/profiles");
  });

  it("treats the profile 'default' as the root home", () => {
    expect(resolveHome({ env: { HERMES_HOME: "/srv/x" }, profile: "default", homedir })).toBe(
      "/home/ada/.hermes",
    );
  });

  it.each(["../evil", "a/b", "..", ".hidden", "", "Work", "a b", "x".repeat(65), "a\\b", "-dash"])(
    "rejects the profile name %j",
    (name) => {
      if (name === "") {
        // An empty profile means "no profile".
        expect(resolveHome({ env: {}, profile: name, homedir })).toBe("/home/ada/.hermes");
        return;
      }
      expect(() => resolveHome({ env: {}, profile: name, homedir })).toThrow(ProfileNameError);
    },
  );

  it("explains what a valid profile name is", () => {
    expect(() => validateProfileName("../evil")).toThrow(
      /invalid profile name "\.\.\/evil": .*not a path.*lowercase/,
    );
    expect(() => validateProfileName("my-profile_2")).not.toThrow();
  });
});

describe("standard paths", () => {
  it("match the Python Hermes layout", () => {
    const home = "/h";
    expect(configPath(home)).toBe(join(home, "config.yaml"));
    expect(envPath(home)).toBe(join(home, ".env"));
    expect(authPath(home)).toBe(join(home, "auth.json"));
    expect(stateDbPath(home)).toBe(join(home, "state.db"));
    expect(memoriesDir(home)).toBe(join(home, "memories"));
    expect(skillsDir(home)).toBe(join(home, "skills"));
    expect(cronDir(home)).toBe(join(home, "cron"));
    expect(logsDir(home)).toBe(join(home, "logs"));
  });
});
