/** /profile: the active profile and its home, on the REPL and in a chat; it never switches. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createProfileCommand } from "../../../src/commands/profile-commands.js";
import { profileNameForHome } from "../../../src/config/profiles.js";
import { fakeContext, fakeSession, registry } from "../../support/command-context.js";

function setup() {
  const user = mkdtempSync(join(tmpdir(), "hermes-slash-profile-"));
  const work = join(user, ".hermes/profiles/work");
  mkdirSync(work, { recursive: true });
  return { user, work, command: createProfileCommand({ userHome: () => user }) };
}

function contextAt(home: string, kind: "repl" | "chat" = "repl") {
  const base = fakeSession();
  const session = fakeSession({ agent: { ...base.agent, home } });
  return fakeContext({ session, surface: { kind } });
}

describe("/profile", () => {
  it("is in the registry for both surfaces and may run during a turn", () => {
    const def = registry.get("profile");
    expect(def?.category).toBe("Info");
    expect(registry.all("chat").map((c) => c.name)).toContain("profile");
    expect(registry.all("repl").map((c) => c.name)).toContain("profile");
    expect(def?.availableWhileRunning).toBe(true);
    // It prints the host's paths: in a chat only admins may ask.
    expect(def?.adminOnly).toBe(true);
  });

  it("names the profile and its home, with its description", async () => {
    const { work, command } = setup();
    writeFileSync(join(work, "profile.yaml"), "description: Reads code.\n");
    for (const kind of ["repl", "chat"] as const) {
      const c = contextAt(work, kind);
      await command.run("", c.ctx);
      const text = c.printed.join("\n");
      expect(text).toMatch(/Profile:\s+work/);
      expect(text).toContain(`Home:`);
      expect(text).toContain(work);
      expect(text).toMatch(/About:\s+Reads code\./);
      // Not the sticky one: says which is.
      expect(text).toMatch(/Sticky:\s+default/);
    }
  });

  it("shows default for ~/.hermes and custom for any other home", async () => {
    const { user, command } = setup();
    const root = contextAt(join(user, ".hermes"));
    await command.run("", root.ctx);
    expect(root.printed.join("\n")).toMatch(/Profile:\s+default/);
    expect(root.printed.join("\n")).not.toMatch(/Sticky/);
    const custom = contextAt(join(user, "elsewhere"));
    await command.run("", custom.ctx);
    expect(custom.printed.join("\n")).toMatch(/Profile:\s+custom/);
  });

  it("refuses to switch, saying how to run another profile on each surface", async () => {
    const { work, command } = setup();
    const repl = contextAt(work);
    await expect(async () => command.run("other", repl.ctx)).rejects.toThrow(/hermes -p other/);
    const chat = contextAt(work, "chat");
    await expect(async () => command.run("other", chat.ctx)).rejects.toThrow(
      /serves "work".*hermes -p other gateway run/,
    );
    expect(repl.printed).toEqual([]);
  });
});

describe("profileNameForHome", () => {
  it.each([
    ["/u/.hermes", "default"],
    ["/u/.hermes/", "default"],
    ["/u/.hermes/profiles/work", "work"],
    ["/u/.hermes/profiles/work/../coder", "coder"],
    ["/u/.hermes/profiles/Bad Name", undefined],
    ["/u/.hermes/profiles/work/sub", undefined],
    ["/u/.hermes/profiles", undefined],
    ["/opt/data", undefined],
  ])("%s is %s", (home, name) => {
    expect(profileNameForHome(home, "/u")).toBe(name);
  });
});
