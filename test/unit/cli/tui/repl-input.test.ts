/**
 * What the REPL sends for a typed message (images from /image and /paste, dropped image paths,
 * `@` references), and the /image and /paste commands against it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ReplInput } from "../../../../src/cli/tui/attachments.js";
import type { CommandContext } from "../../../../src/commands/types.js";
import { fakeContext, fakeSession, registry } from "../../../support/command-context.js";
import { PNG_1X1, PNG_1X1_URL as pngUrl } from "../../../support/images.js";

let cwd: string;
let home: string;
let input: ReplInput;

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), "hermes-repl-input-"));
  cwd = join(root, "work");
  home = join(root, "home");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(cwd, "shot.png"), PNG_1X1);
  writeFileSync(join(cwd, "notes.md"), "remember the milk\n");
  input = new ReplInput({
    home,
    env: { HOME: home, PATH: "" },
    cwd: () => cwd,
    contextLength: () => 100_000,
  });
});

describe("ReplInput.compose", () => {
  it("sends plain text as it is", async () => {
    expect(await input.compose("hello")).toEqual({ content: "hello", notices: [] });
  });

  it("sends waiting images with the next message only", async () => {
    await input.attach("shot.png");
    const first = await input.compose("what is this?");
    expect(first.content).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: pngUrl } },
    ]);
    expect(input.pending()).toEqual([]);
    expect((await input.compose("and now?")).content).toBe("and now?");
  });

  it("attaches an image path dropped at the start of the message", async () => {
    const turn = await input.compose(`${cwd}/shot.png what colour is it?`);
    expect(turn.content).toEqual([
      { type: "text", text: "what colour is it?" },
      { type: "image_url", image_url: { url: pngUrl } },
    ]);
    expect(turn.notices).toEqual([`📎 Attached ${join(cwd, "shot.png")}`]);
  });

  it("expands @ references and says how much they add", async () => {
    const turn = await input.compose("summarise @file:notes.md");
    expect(turn.content).toContain("--- Attached Context ---");
    expect(turn.content).toContain("remember the milk");
    expect(turn.notices[0]).toMatch(/^@ attached 1 reference \(about \d+ tokens\)$/);
  });

  it("sends nothing when the references are too large, and keeps the waiting images", async () => {
    writeFileSync(join(cwd, "a.txt"), "a".repeat(4000));
    writeFileSync(join(cwd, "b.txt"), "b".repeat(4000));
    const small = new ReplInput({ home, env: { HOME: home }, cwd: () => cwd, contextLength: () => 2400 });
    await small.attach("shot.png");
    const turn = await small.compose("@file:a.txt @file:b.txt");
    expect(turn.content).toBeNull();
    expect(turn.notices.at(-1)).toBe("Nothing was sent.");
    expect(turn.notices.some((n) => /refused/.test(n))).toBe(true);
    expect(small.pending()).toHaveLength(1);
  });

  it("completes @ words and leaves other lines to the commands", async () => {
    expect(await input.complete("read @file:no")).toEqual([["@file:notes.md"], "@file:no"]);
    expect(await input.complete("/he")).toBeNull();
  });
});

describe("/image and /paste", () => {
  function context(): { ctx: CommandContext; printed: string[] } {
    const c = fakeContext({ session: fakeSession() });
    return { ctx: { ...c.ctx, attachments: input }, printed: c.printed };
  }

  async function run(text: string, ctx: CommandContext): Promise<void> {
    const parsed = registry.parse(text);
    if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
    await parsed.command.run(parsed.args, ctx);
  }

  it("attaches, lists and clears images", async () => {
    const { ctx, printed } = context();
    await run(`/image ${cwd}/shot.png`, ctx);
    expect(printed.at(-1)).toMatch(
      /^📎 Attached .*shot\.png \(0\.1 KiB\): it goes with your next message\.$/,
    );
    await run(`/image '${cwd}/shot.png'`, ctx);
    expect(printed.at(-1)).toMatch(/\(2 images wait\)/);
    await run("/image", ctx);
    expect(printed).toContain("2 images go with your next message:");
    await run("/image clear", ctx);
    expect(printed.at(-1)).toBe("Dropped 2 images.");
    expect(input.pending()).toEqual([]);
  });

  it("refuses what is not an image with the reason", async () => {
    const { ctx } = context();
    await expect(run(`/image ${cwd}/notes.md`, ctx)).rejects.toThrow(/is a text file, not an image/);
    await expect(run("/image nowhere.png", ctx)).rejects.toThrow(/No such file/);
    expect(input.pending()).toEqual([]);
  });

  it("says why nothing was pasted when there is no graphical session", async () => {
    const { ctx } = context();
    await expect(run("/paste", ctx)).rejects.toThrow(/No image pasted: there is no graphical session here/);
  });

  it("is offered in the REPL only, and says so where there are no attachments", async () => {
    const image = registry.get("image");
    expect(image?.surfaces).toBe("repl");
    expect(registry.get("paste")?.surfaces).toBe("repl");
    const c = fakeContext();
    await expect(run("/image x.png", c.ctx)).rejects.toThrow(/cannot be attached here/);
  });
});
