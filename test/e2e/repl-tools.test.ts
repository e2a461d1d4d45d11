/**
 * `/tools enable|disable` in the running REPL (the built CLI in tmux): the change is saved to
 * config.yaml and the model gets the new tool list from the next message, in the same
 * conversation (history kept), with a system prompt rebuilt for the new tools.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";

const llm = useFakeLlm();
const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

type Body = {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: unknown }>;
};
/** The conversation's requests (they offer tools); the session-title request offers none. */
const main = () => llm.chatRequests.map((r) => r.body as Body).filter((b) => (b.tools ?? []).length > 0);
const body = (i: number) => main()[i] as Body;
const toolsOf = (i: number) => (body(i).tools ?? []).map((t) => t.function.name);
const userTexts = (i: number) =>
  body(i)
    .messages.filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

describe.skipIf(!hasTmux)("/tools in the running session", () => {
  it("disable and enable change the tools offered from the next message, keeping the conversation", async () => {
    const { home, cwd } = tempHome(`# kept\n${fakeProviderConfig(llm.url)}`);
    const term = Terminal.start({ home, cwd, env: { NO_COLOR: "1" } });
    terminals.push(term);
    await term.waitFor("Ctrl+D to exit");
    // The title request after the first exchange is answered apart from the conversation's replies.
    llm.respondWith((request) =>
      ((request.body as Body).tools ?? []).length === 0 ? reply().text("Tools session") : undefined,
    );
    const start = main().length;
    llm.enqueue(reply().text("first answer"), reply().text("second answer"), reply().text("third answer"));

    term.type("hello one");
    term.keys("Enter");
    await term.waitFor("first answer");
    expect(toolsOf(start)).toContain("web_extract");
    expect(toolsOf(start)).toContain("terminal");

    term.type("/tools disable web terminal");
    term.keys("Enter");
    await term.waitFor("prompt cache starts over once");
    expect(term.screen()).toContain("Disabled for cli: web, terminal");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toMatch(/# kept[\s\S]*platform_toolsets:/);

    term.type("hello two");
    term.keys("Enter");
    await term.waitFor("second answer");
    const second = toolsOf(start + 1);
    expect(second).toContain("read_file");
    expect(second).not.toContain("web_extract");
    expect(second).not.toContain("terminal");
    // The same conversation: the first exchange is still in the request.
    expect(userTexts(start + 1)).toEqual(["hello one", "hello two"]);

    term.type("/toolsets");
    term.keys("Enter");
    await term.waitFor(/● file/);

    term.type("/tools enable web");
    term.keys("Enter");
    await term.waitFor("Enabled for cli: web");
    term.type("hello three");
    term.keys("Enter");
    await term.waitFor("third answer");
    expect(toolsOf(start + 2)).toContain("web_extract");
    expect(toolsOf(start + 2)).not.toContain("terminal");
    expect(userTexts(start + 2)).toEqual(["hello one", "hello two", "hello three"]);

    // A name it does not know changes nothing and says so.
    term.type("/tools disable teleport");
    term.keys("Enter");
    await term.waitFor('Unknown toolset "teleport"');
  });
});
