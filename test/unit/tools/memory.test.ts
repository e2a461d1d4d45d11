import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { memoryTool } from "../../../src/tools/memory.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { makeToolContext } from "../../support/tool-context.js";

function setup(memory: Record<string, unknown> = {}) {
  const registry = new ToolRegistry();
  registry.register(memoryTool);
  const base = defaultConfig();
  const config = { ...base, memory: { ...base.memory, ...memory } } as unknown as Record<string, unknown>;
  const ctx = makeToolContext({ config });
  const call = async (args: Record<string, unknown>, context: ToolContext = ctx) => {
    const outcome = await registry.execute("memory", args, context);
    return { ...outcome, result: JSON.parse(outcome.content) as Record<string, unknown> };
  };
  return { registry, ctx, config, call, file: (name: string) => join(ctx.home, "memories", name) };
}

describe("memory tool", () => {
  it("is a serial tool in the memory toolset with a lean schema", () => {
    expect(memoryTool).toMatchObject({ name: "memory", toolset: "memory", emoji: "🧠", parallelSafe: false });
    const schema = JSON.stringify(setup().registry.schemas(["memory"])[0]);
    expect(schema.length).toBeLessThanOrEqual(1400);
    expect(schema).toContain("NEXT session");
  });

  it("adds to memory by default and to the user profile with target user", async () => {
    const { call, file } = setup();
    const added = await call({ action: "add", content: "Repo uses pnpm" });
    expect(added.ok).toBe(true);
    expect(added.result).toEqual({
      success: true,
      target: "memory",
      message: "Entry added. Saved for future sessions.",
      usage: "0% — 14/2,200 chars",
      entry_count: 1,
    });
    await call({ action: "add", target: "user", content: "Prefers terse answers" });
    expect(readFileSync(file("MEMORY.md"), "utf8")).toBe("Repo uses pnpm");
    expect(readFileSync(file("USER.md"), "utf8")).toBe("Prefers terse answers");
  });

  it("reads, replaces and removes", async () => {
    const { call } = setup();
    await call({ action: "add", content: "Node 20" });
    await call({ action: "add", content: "Uses vitest" });
    expect((await call({ action: "replace", old_text: "Node", content: "Node 22" })).ok).toBe(true);
    expect((await call({ action: "remove", old_text: "vitest" })).ok).toBe(true);
    const read = await call({ action: "read" });
    expect(read.result).toMatchObject({ success: true, entry_count: 1, current_entries: ["Node 22"] });
  });

  it("applies a batch without action", async () => {
    const { call } = setup();
    await call({ action: "add", content: "old fact" });
    const batch = await call({
      operations: [
        { action: "remove", old_text: "old" },
        { action: "add", content: "new fact" },
      ],
    });
    expect(batch.result).toMatchObject({ success: true, entry_count: 1 });
    expect((await call({ action: "read" })).result.current_entries).toEqual(["new fact"]);
  });

  it("reports store errors as tool errors the model can act on", async () => {
    const { call } = setup({ memory_char_limit: 20 });
    await call({ action: "add", content: "0123456789" });
    const over = await call({ action: "add", content: "abcdefghijk" });
    expect(over.ok).toBe(false);
    expect(over.result.error).toMatch(/10\/20/);
    expect(over.result.current_entries).toEqual(["0123456789"]);
    const missing = await call({ action: "replace", content: "x" });
    expect(missing.ok).toBe(false);
    expect(missing.result.error).toMatch(/old_text is required for replace/);
    expect(missing.result.current_entries).toEqual(["0123456789"]);
    expect((await call({ action: "add" })).result.error).toMatch(/content is required for add/);
  });

  it("rejects malformed arguments before touching the store", async () => {
    const { call, file } = setup();
    const badAction = await call({ action: "delete", content: "x" });
    expect(badAction.ok).toBe(false);
    expect(badAction.error).toMatch(/`action` must be one of "add", "replace", "remove", "read"/);
    expect((await call({ action: "add", target: "team", content: "x" })).error).toMatch(
      /`target` must be one of/,
    );
    expect((await call({ operations: [{ content: "x" }] })).error).toMatch(/`action` is required/);
    const nothing = await call({});
    expect(nothing.error).toMatch(/Pass action/);
    expect((await call({ operations: [] })).error).toMatch(/operations is empty/);
    expect(existsSync(file("MEMORY.md"))).toBe(false);
  });

  it("refuses a target that is switched off and keeps the other working", async () => {
    const { call, file } = setup({ user_profile_enabled: false });
    const off = await call({ action: "add", target: "user", content: "Name: Ada" });
    expect(off.ok).toBe(false);
    expect(off.result.error).toMatch(
      /user profile \(USER\.md\) is switched off.*user_profile_enabled: false/,
    );
    expect(existsSync(file("USER.md"))).toBe(false);
    expect((await call({ action: "add", content: "fact" })).ok).toBe(true);

    const memoryOff = setup({ memory_enabled: false });
    expect((await memoryOff.call({ action: "read" })).result.error).toMatch(
      /Memory \(MEMORY\.md\) is switched off/,
    );
  });

  it("is offered only while at least one target is enabled", async () => {
    for (const [memory, available] of [
      [{}, true],
      [{ memory_enabled: false }, true],
      [{ user_profile_enabled: false }, true],
      [{ memory_enabled: false, user_profile_enabled: false }, false],
    ] as const) {
      const { registry, config } = setup(memory);
      expect(await registry.available(["memory"], { env: {}, config })).toEqual(available ? ["memory"] : []);
    }
  });
});
