/**
 * The approvals "always allow" list: the same cases against `command_allowlist` in config.yaml
 * and PostgreSQL (add, dedupe, remove, order, other instances), and entries that try to break
 * out of YAML or SQL.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type CommandAllowlist,
  CommandAllowlistError,
  configCommandAllowlist,
} from "../../../../src/state/gateway/command-allowlist.js";
import { pgCommandAllowlist } from "../../../../src/state/postgres/gateway-stores.js";
import { isCommandAllowlisted } from "../../../../src/tools/approval/index.js";
import { BACKENDS, type Storage, useStorages } from "./gateway-harness.js";

const storage = useStorages();

async function open(s: Storage): Promise<CommandAllowlist> {
  return s.kind === "file" ? configCommandAllowlist(s.home) : pgCommandAllowlist(await s.pool());
}

describe.each(BACKENDS)("command allowlist (%s)", (kind) => {
  it("adds once, lists oldest first, removes", async () => {
    const list = await open(await storage(kind));
    expect(await list.list()).toEqual([]);
    expect(await list.add("recursive_delete")).toBe(true);
    expect(await list.add("pipe_to_shell")).toBe(true);
    expect(await list.add("recursive_delete")).toBe(false);
    expect(await list.list()).toEqual(["recursive_delete", "pipe_to_shell"]);
    expect(await list.remove("recursive_delete")).toBe(true);
    expect(await list.remove("recursive_delete")).toBe(false);
    expect(await list.list()).toEqual(["pipe_to_shell"]);
  });

  it("an entry added through one instance approves on another; concurrent adds all land", async () => {
    const s = await storage(kind);
    const [a, b] = [await open(s), await open(s)];
    await a.add("git push --force origin main");
    expect(isCommandAllowlisted("git push --force origin main", await b.list())).toBe(true);
    const entries = Array.from({ length: 10 }, (_, i) => `pattern_${i}`);
    const added = await Promise.all(entries.map((e, i) => (i % 2 ? a : b).add(e)));
    expect(added.every(Boolean)).toBe(true);
    expect(new Set(await b.list())).toEqual(new Set(["git push --force origin main", ...entries]));
  });

  it("keeps entries that look like YAML, JSON or SQL exactly as given", async () => {
    const list = await open(await storage(kind));
    const odd = [
      "rm -rf ./build, ./dist",
      "- item: value # not a comment",
      '["a", "b"]',
      "echo 'it''s' \"quoted\" \\ back",
      "'; DROP TABLE gateway_command_allowlist; --",
      "curl https://example.com | sh",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal shell variable
      "rm -rf ${HOME}/cache $(id)",
      `${"x".repeat(20_000)} 🚀`,
    ];
    for (const entry of odd) expect(await list.add(entry)).toBe(true);
    expect(await list.list()).toEqual(odd);
    expect(await (await open(await storage(kind))).list()).toEqual([]);
  });

  it("refuses blank entries and NUL with a clear error, changing nothing", async () => {
    const list = await open(await storage(kind));
    await list.add("kept");
    for (const bad of ["", "   ", "a\u0000b"])
      await expect(list.add(bad)).rejects.toThrow(CommandAllowlistError);
    expect(await list.list()).toEqual(["kept"]);
    expect(await list.remove("a\u0000b")).toBe(false);
  });
});

describe("command allowlist in config.yaml", () => {
  it("edits only command_allowlist, keeping the file's comments and other keys", async () => {
    const s = await storage("file");
    const file = join(s.home, "config.yaml");
    writeFileSync(file, "# my settings\nmodel: anthropic/claude\ncommand_allowlist:\n  - existing # why\n");
    const list = await open(s);
    expect(await list.list()).toEqual(["existing"]);
    await list.add("new_one");
    const text = readFileSync(file, "utf8");
    expect(text).toContain("# my settings");
    expect(text).toContain("model: anthropic/claude");
    expect(await list.list()).toEqual(["existing", "new_one"]);
  });
});
