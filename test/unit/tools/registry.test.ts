import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { makeToolContext } from "../../support/tool-context.js";

const sum = defineTool({
  name: "sum",
  toolset: "math",
  description: "Adds numbers",
  parameters: Type.Object({
    a: Type.Integer(),
    b: Type.Integer({ default: 0 }),
    mode: Type.Optional(Type.Union([Type.Literal("x"), Type.Literal("y")])),
  }),
  handler: (args) => ({ total: args.a + args.b }),
});

describe("ToolRegistry", () => {
  it("validates, coerces, applies defaults and serialises", async () => {
    const registry = new ToolRegistry();
    registry.register(sum);
    const ctx = makeToolContext();
    expect(await registry.execute("sum", { a: "2" }, ctx)).toEqual({ content: '{"total":2}', ok: true });
    const bad = await registry.execute("sum", { b: 1, mode: "z" }, ctx);
    expect(bad.ok).toBe(false);
    expect(bad.error).toContain("`a` is required");
    expect(bad.error).toContain("`mode`");
  });

  it("refuses a tool that would shadow another toolset's tool, but replaces within a toolset", () => {
    const registry = new ToolRegistry();
    registry.register(sum);
    const gen = registry.generation;
    expect(() => registry.register({ ...sum, toolset: "other" })).toThrow(/cannot shadow/);
    registry.register({ ...sum, description: "Adds numbers (v2)" });
    expect(registry.generation).toBe(gen + 1);
    expect(registry.schemas(["sum"])[0]?.function.description).toBe("Adds numbers (v2)");
  });

  it("caches check results for 30 s and skips unknown names and missing env", async () => {
    let now = 0;
    let calls = 0;
    let ok = true;
    const registry = new ToolRegistry({ now: () => now });
    registry.register(
      defineTool({
        name: "checked",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        check: () => {
          calls++;
          return ok;
        },
        handler: () => "x",
      }),
    );
    registry.register(
      defineTool({
        name: "needs_key",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        requiresEnv: ["SOME_KEY"],
        handler: () => "x",
      }),
    );
    const ctx = { env: {}, config: {} };
    expect(await registry.available(["checked", "needs_key", "not_built"], ctx)).toEqual(["checked"]);
    ok = false;
    now = 29_000;
    expect(await registry.available(["checked"], ctx)).toEqual(["checked"]);
    now = 31_000;
    expect(await registry.available(["checked"], ctx)).toEqual([]);
    expect(calls).toBe(2);
    expect(await registry.available(["needs_key"], { env: { SOME_KEY: "1" }, config: {} })).toEqual([
      "needs_key",
    ]);
  });

  it("asks a check shared by several tools once per availability call, and again once it expires", async () => {
    let now = 0;
    let calls = 0;
    let ok = true;
    const shared = () => {
      calls++;
      return ok;
    };
    let other = 0;
    const registry = new ToolRegistry({ now: () => now });
    for (const name of ["b_one", "b_two", "b_three"]) {
      registry.register(
        defineTool({
          name,
          toolset: "b",
          description: "d",
          parameters: Type.Object({}),
          check: shared,
          handler: () => "x",
        }),
      );
    }
    registry.register(
      defineTool({
        name: "own",
        toolset: "b",
        description: "d",
        parameters: Type.Object({}),
        check: () => {
          other++;
          return true;
        },
        handler: () => "x",
      }),
    );
    const ctx = { env: {}, config: {} };
    expect(await registry.available(["b_one", "own", "b_two", "b_three"], ctx)).toEqual([
      "b_one",
      "own",
      "b_two",
      "b_three",
    ]);
    expect([calls, other]).toEqual([1, 1]);
    // Expired: asked again (once), and a changed answer holds for every tool that shares it.
    ok = false;
    now = 31_000;
    expect(await registry.available(["b_one", "own", "b_two", "b_three"], ctx)).toEqual(["own"]);
    expect([calls, other]).toEqual([2, 2]);
  });

  it("truncates large results and says so", async () => {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "big",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        handler: () => "line\n".repeat(5000),
      }),
    );
    const out = await registry.execute("big", {}, makeToolContext());
    expect(out.truncated).toBe(true);
    expect(out.content).toContain("lines omitted");
  });

  it("cuts over-long lines of text results but never a line of a JSON result", async () => {
    const registry = new ToolRegistry();
    const long = "x".repeat(5000);
    registry.registerAll([
      defineTool({
        name: "text",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        handler: () => long,
      }),
      defineTool({
        name: "json",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        handler: () => ({ entries: [long, "last"] }),
      }),
    ]);
    const text = await registry.execute("text", {}, makeToolContext());
    expect(text.truncated).toBe(true);
    expect(text.content).toContain("[line cut:");
    const json = await registry.execute("json", {}, makeToolContext());
    expect(json.truncated).toBeUndefined();
    expect(JSON.parse(json.content)).toEqual({ entries: [long, "last"] });
  });

  it("reports errors returned as values and unknown tools", async () => {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "soft",
        toolset: "t",
        description: "d",
        parameters: Type.Object({}),
        handler: () => ({ error: "nope" }),
      }),
    );
    expect(await registry.execute("soft", {}, makeToolContext())).toMatchObject({ ok: false, error: "nope" });
    expect((await registry.execute("ghost", {}, makeToolContext())).error).toContain('Unknown tool "ghost"');
  });

  it("a tool described per configuration keeps one schema object while its text stays, a new one when it changes", () => {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "limited",
        toolset: "t",
        description: "base",
        parameters: Type.Object({}),
        describe: (ctx) => `Up to ${String((ctx.config as { max?: number }).max ?? 3)} at once.`,
        handler: () => "x",
      }),
    );
    const ctx = (max: number) => ({ env: {}, config: { max } });
    const first = registry.schemas(["limited"], ctx(3))[0];
    const again = registry.schemas(["limited"], ctx(3))[0];
    expect(first?.function.description).toBe("Up to 3 at once.");
    expect(again).toBe(first);
    const changed = registry.schemas(["limited"], ctx(5))[0];
    expect(changed?.function.description).toBe("Up to 5 at once.");
    expect(changed).not.toBe(first);
    // The base schema is left as it was.
    expect(registry.schemas(["limited"])[0]?.function.description).toBe("base");
  });
});
