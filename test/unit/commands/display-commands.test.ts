/** /clear and /statusbar against the surface-neutral context, as the REPL runs them. */
import { describe, expect, it } from "vitest";
import { fakeContext, registry } from "../../support/command-context.js";

async function run(text: string, c = fakeContext()) {
  const parsed = registry.parse(text);
  if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
  await parsed.command.run(parsed.args, c.ctx);
  return c;
}

describe("/clear", () => {
  it("starts a new session, then clears the screen, then says which session is current", async () => {
    const c = fakeContext();
    const order: string[] = [];
    c.ctx.clearScreen = () => order.push(`clear after ${c.events.join(",")}`);
    await run("/clear", c);
    expect(order).toEqual(["clear after newSession"]);
    expect(c.printed.join("\n")).toMatch(/New session/);
  });

  it("is a terminal command: chats are not offered it, and it waits for a running turn", () => {
    const clear = registry.get("clear");
    expect(clear?.surfaces).toBe("repl");
    expect(clear?.availableWhileRunning ?? false).toBe(false);
    expect(registry.all("chat").map((c) => c.name)).not.toContain("clear");
  });
});

describe("/statusbar", () => {
  it("toggles the status line, /sb too, and on/off set it", async () => {
    const c = fakeContext();
    c.ctx.settings.statusBar = true;
    await run("/statusbar", c);
    expect(c.ctx.settings.statusBar).toBe(false);
    await run("/sb", c);
    expect(c.ctx.settings.statusBar).toBe(true);
    await run("/statusbar on", c);
    expect(c.ctx.settings.statusBar).toBe(true);
    await run("/statusbar OFF", c);
    expect(c.ctx.settings.statusBar).toBe(false);
    expect(c.printed.at(-1)).toMatch(/Status line off/);
  });

  it("refuses an argument it does not know, changing nothing", async () => {
    const c = fakeContext();
    c.ctx.settings.statusBar = true;
    await expect(run("/statusbar maybe", c)).rejects.toThrow(/Unknown \/statusbar argument "maybe"/);
    expect(c.ctx.settings.statusBar).toBe(true);
  });

  it("completes on and off, and runs while a turn runs", async () => {
    const c = fakeContext();
    expect((await registry.complete("/statusbar o", c.ctx))[0]).toEqual(["on", "off"]);
    expect((await registry.complete("/statusbar of", c.ctx))[0]).toEqual(["off"]);
    expect(registry.get("statusbar")?.availableWhileRunning).toBe(true);
  });
});
