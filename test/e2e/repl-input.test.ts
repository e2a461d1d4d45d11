/**
 * The REPL's input side in a real terminal (tmux): `@` references expanded into the message the
 * model gets, Tab completion after `@`, `/image`, an image path dropped into the chat, and
 * `/paste` from a real X clipboard (Xvfb + xclip).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { PNG_1X1, PNG_1X1_URL } from "../support/images.js";
import { hasTmux, Terminal } from "../support/terminal.js";

const llm = useFakeLlm();
const terminals: Terminal[] = [];
beforeAll(() => {
  // Interactive sessions ask for a title after the first exchange: answered here, never from the queue.
  llm.respondWith((request) => (isTitle(request.body) ? reply().text("A test session") : undefined));
});
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

type Body = { model?: string; messages: Array<{ role: string; content: unknown }> };
const isTitle = (body: unknown) => (body as Body).model === "title-model";
const turns = () => llm.chatRequests.filter((r) => !isTitle(r.body));
const lastUser = () => (turns().at(-1)?.body as Body | undefined)?.messages.at(-1)?.content;

function open(env: Record<string, string> = {}) {
  const aux = `auxiliary:\n  title_generation:\n    base_url: ${llm.url}\n    model: title-model\n`;
  const h = tempHome(fakeProviderConfig(llm.url, aux));
  writeFileSync(join(h.cwd, "notes.md"), "remember the milk\n");
  writeFileSync(join(h.cwd, "shot.png"), PNG_1X1);
  const term = Terminal.start({ ...h, env });
  terminals.push(term);
  return { term, ...h };
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!hasTmux)("the REPL's input", () => {
  it("completes @file: paths with Tab and sends the file's text with the message", async () => {
    llm.enqueue(reply().text("Milk noted."));
    const { term } = open();
    await term.waitFor("Ctrl+D to exit");
    term.type("summarise @fi");
    term.keys("Tab");
    await term.waitFor("summarise @file:");
    term.type("no");
    term.keys("Tab");
    await term.waitFor("summarise @file:notes.md");
    term.keys("Enter");
    await term.waitFor("Milk noted.");
    const sent = lastUser() as string;
    expect(sent.startsWith("summarise @file:notes.md\n\n--- Attached Context ---")).toBe(true);
    expect(sent).toContain("remember the milk");
    expect(term.screen()).toMatch(/@ attached 1 reference \(about \d+ tokens\)/);
  });

  it("sends /image and dropped image paths as image parts, and says why a bad one was not attached", async () => {
    llm.enqueue(reply().text("One pixel."), reply().text("Same pixel."));
    const { term, cwd } = open();
    await term.waitFor("Ctrl+D to exit");
    term.type("/image notes.md");
    term.keys("Enter");
    await term.waitFor("is a text file, not an image");
    term.type("/image sh");
    term.keys("Tab");
    await term.waitFor("/image shot.png");
    term.keys("Enter");
    await term.waitFor("it goes with your next message");
    term.type("what is this?");
    term.keys("Enter");
    await term.waitFor("One pixel.");
    expect(lastUser()).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: PNG_1X1_URL } },
    ]);

    term.type(`${cwd}/shot.png is it the same?`);
    term.keys("Enter");
    await term.waitFor("Same pixel.");
    expect(lastUser()).toEqual([
      { type: "text", text: "is it the same?" },
      { type: "image_url", image_url: { url: PNG_1X1_URL } },
    ]);
    expect(turns()).toHaveLength(2);
  });
});

const hasX = spawnSync("sh", ["-c", "command -v Xvfb && command -v xclip"]).status === 0;

describe.skipIf(!hasTmux || !hasX)("/paste from the X clipboard", () => {
  let xvfb: ChildProcess | undefined;
  let display = "";
  beforeAll(async () => {
    for (let n = 100 + (process.pid % 400); !xvfb; n++) {
      if (existsSync(`/tmp/.X11-unix/X${n}`) || existsSync(`/tmp/.X${n}-lock`)) continue;
      display = `:${n}`;
      xvfb = spawn("Xvfb", [display, "-nolisten", "tcp"], { stdio: "ignore" });
    }
    await waitUntil(() => existsSync(`/tmp/.X11-unix/X${display.slice(1)}`), "Xvfb to start");
  });
  afterAll(() => {
    xvfb?.kill();
  });

  it("attaches the clipboard's image, and says so when the clipboard holds none", async () => {
    llm.enqueue(reply().text("Pasted pixel."));
    const { term, cwd } = open({ DISPLAY: display });
    await term.waitFor("Ctrl+D to exit");
    term.type("/paste");
    term.keys("Enter");
    await term.waitFor(/No image pasted: .*(no image|could not be read)/);

    const source = join(cwd, "clip-source.png");
    writeFileSync(source, PNG_1X1);
    // -quiet keeps xclip in the foreground, serving the selection until it is killed.
    const owner = spawn("xclip", ["-quiet", "-selection", "clipboard", "-t", "image/png", "-i", source], {
      env: { ...process.env, DISPLAY: display },
      stdio: "ignore",
    });
    try {
      await waitUntil(
        () =>
          spawnSync("xclip", ["-selection", "clipboard", "-t", "TARGETS", "-o"], {
            env: { ...process.env, DISPLAY: display },
            encoding: "utf8",
          }).stdout.includes("image/png"),
        "xclip to own the clipboard",
      );
      term.type("/paste");
      term.keys("Enter");
      await term.waitFor(/Attached .*images\/clip_.*\.png/);
      term.type("and this?");
      term.keys("Enter");
      await term.waitFor("Pasted pixel.");
      expect(lastUser()).toEqual([
        { type: "text", text: "and this?" },
        { type: "image_url", image_url: { url: PNG_1X1_URL } },
      ]);
    } finally {
      owner.kill();
    }
  });
});
