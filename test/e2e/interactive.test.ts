/**
 * The interactive REPL, driven through a real terminal (test/support/terminal.ts: the built
 * `hermes` inside a private tmux server per test). Every wait polls the screen against a deadline.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, hang, reply, startFakeLlm } from "../support/fake-llm.js";
import { hasTmux, Terminal } from "../support/terminal.js";

/** Pids of live `sleep SECONDS` processes (Linux /proc); a unique duration names a test's command. */
function sleepers(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === `sleep\0${seconds}\0`) found.push(Number(entry));
    } catch {
      // gone already
    }
  }
  return found;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let llm: FakeLlm;
/** The auxiliary endpoint: interactive sessions ask it for a title after their first exchange. */
let titles: FakeLlm;
const terminals: Terminal[] = [];

// A fresh server per test, so a failing test cannot leave scripted replies for the next one.
beforeEach(async () => {
  llm = await startFakeLlm();
  titles = await startFakeLlm();
  titles.respondWith(() => reply().text("A test session"));
});
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  await llm.close();
  await titles.close();
});

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const lastMessage = (request: number) => (llm.chatRequests[request]!.body as ChatBody).messages.at(-1);

function open(
  extraConfig = "",
  env: Record<string, string> = {},
): { term: Terminal; home: string; cwd: string } {
  const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
  const { home, cwd } = tempHome(fakeProviderConfig(llm.url, `${extraConfig}${aux}`));
  const term = Terminal.start({ home, cwd, env });
  terminals.push(term);
  return { term, home, cwd };
}

describe.skipIf(!hasTmux)("interactive hermes in a terminal", () => {
  it("streams rendered markdown, shows tool lines, answers /help, and exits on Ctrl+D", async () => {
    llm.enqueue(
      reply().text(
        "Here is **bold** and a block:\n\n```js\nconsole.log(1)\n```\n\n| k | v |\n|---|---|\n| a | 1 |\n",
      ),
      reply().toolCall("terminal", { command: "echo hi-from-tool" }),
      reply().text("Tool done."),
      reply().text("Sent as a message."),
    );
    const { term, home, cwd } = open();
    await term.waitFor("/help for commands, Ctrl+C to interrupt, Ctrl+D to exit");

    term.type("hello");
    term.keys("Enter");
    // The table is the last block: it prints when the answer ends.
    const answer = await term.waitFor(/│ a +│ 1 +│/);
    expect(answer).toContain("Here is bold and a block:");
    expect(answer).not.toContain("**bold**");
    expect(answer).toContain("╭─ js");
    expect(answer).toContain("│ console.log(1)");
    expect(answer).toContain("╰─");
    expect(term.screen(true)).toContain("\x1b[1mbold");

    term.type("run the tool");
    term.keys("Enter");
    await term.waitFor("Tool done.");
    expect(term.screen()).toMatch(/💻 terminal echo hi-from-tool \d+\.\ds/);

    term.type("/help");
    term.keys("Enter");
    const help = await term.waitFor("/compress");
    for (const command of ["/resume [id|title]", "/undo [N]", "/steer <text>", "/usage", "/quit"]) {
      expect(help).toContain(command);
    }

    term.type("/frobnicate");
    term.keys("Enter");
    await term.waitFor("Unknown command /frobnicate. Type /help.");

    term.type("/tmp/notes.txt is big");
    term.keys("Enter");
    await term.waitFor("Sent as a message.");
    expect(lastMessage(3)).toEqual({ role: "user", content: "/tmp/notes.txt is big" });

    // Tab completes installed skill names as commands (read when Tab is pressed).
    const skill = join(home, "skills", "ops", "deploy-check");
    mkdirSync(skill, { recursive: true });
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: deploy-check\ndescription: Check a deploy.\n---\nBody\n",
    );
    term.type("/deploy-ch");
    term.keys("Tab");
    await term.waitFor("❯ /deploy-check ");
    term.keys("C-u");

    term.keys("C-d");
    await term.waitFor("[exit 0]");
    const history = readFileSync(join(home, ".hermes_history"), "utf8");
    expect(history).toContain("+hello\n");
    expect(history).toContain("+/help\n");
    // The first exchange got a title from the auxiliary endpoint, asked once.
    expect(titles.chatRequests).toHaveLength(1);
    expect(JSON.stringify(titles.chatRequests[0]?.body)).toContain("hello");
    const listed = await runHermes(["sessions", "list"], { home, cwd });
    expect(listed.stdout).toContain("A test session");

    // `hermes -c` continues it with a recap, and ↑ recalls the earlier input from the history file.
    const again = Terminal.start({ home, cwd, args: ["-c"] });
    terminals.push(again);
    const recap = await again.waitFor("─── earlier in this session ───");
    expect(recap).toContain("resumed");
    await again.waitFor("❯ /tmp/notes.txt is big");
    again.keys("Up");
    await again.waitFor(/❯ \/tmp\/notes\.txt is big\n[\s\S]*❯ \/tmp\/notes\.txt is big/);
    again.keys("C-u", "C-d");
    await again.waitFor("[exit 0]");
  });

  it("Ctrl+C interrupts a turn, keeps what streamed, and gives the prompt back; twice quits", async () => {
    llm.enqueue(
      reply()
        .text("Working on it now.")
        .toolCall("terminal", { command: "touch started; sleep 30.25; touch X" }),
      hang(),
      reply().text("Back again."),
      hang(),
    );
    const { term, cwd } = open();
    await term.waitFor("Ctrl+D to exit");

    term.type("do the slow thing");
    term.keys("Enter");
    await term.waitFor("Working on it now.");
    await waitUntil(() => existsSync(join(cwd, "started")), "the command to start");
    // `touch` has run; the shell may still be starting `sleep`.
    await waitUntil(() => sleepers("30.25").length > 0, "the sleep to start");
    term.keys("C-c");
    const after = await term.waitFor("⏹ Interrupted.");
    expect(after).toContain("Working on it now.");
    // Ctrl+C through the terminal ends the whole command line, not just the running sleep.
    await waitUntil(() => sleepers("30.25").length === 0, "the sleep to end");

    // The input is live while a turn runs: /status answers during a hanging model call.
    term.type("next question");
    term.keys("Enter");
    await llm.waitForRequests(2);
    term.type("/status");
    term.keys("Enter");
    await term.waitFor(/Turn\s+running/);
    term.keys("C-c");
    await term.waitFor(/⏹ Interrupted\.[\s\S]*⏹ Interrupted\./);

    term.type("and now?");
    term.keys("Enter");
    await term.waitFor("Back again.");
    // The interrupted turn's partial answer stayed in the conversation.
    const sent = (llm.chatRequests[2]!.body as ChatBody).messages;
    expect(sent.some((m) => m.role === "assistant" && (m.content ?? "").includes("Working on it now."))).toBe(
      true,
    );
    // The model was told the call was stopped, and the rest of the line (`touch X`) never ran.
    const result = String(sent.find((m) => m.role === "tool")?.content);
    expect(result).toMatch(/interrupt/i);
    expect(existsSync(join(cwd, "X"))).toBe(false);

    term.type("hang again");
    term.keys("Enter");
    await llm.waitForRequests(4);
    term.keys("C-c");
    term.keys("C-c");
    await term.waitFor("[exit 130]");
  });

  it("sends a pasted block as one message and asks approval on the same line (no colour)", async () => {
    llm.enqueue(
      reply().text("Got **three** lines.\n\n```\nkeep `this`\n```"),
      reply().toolCall("terminal", { command: "rm -rf ./junk" }),
      reply().text("Cleaned."),
    );
    const { term } = open("", { NO_COLOR: "1" });
    await term.waitFor("Ctrl+D to exit");

    term.paste("first line\nsecond line\nthird line");
    await term.waitFor("… third line");
    term.keys("Enter");
    // Without colour the markup is dropped but a code block keeps its fences, verbatim.
    await term.waitFor("Got three lines.\n\n```\nkeep `this`\n```");
    expect(lastMessage(0)).toEqual({ role: "user", content: "first line\nsecond line\nthird line" });
    const plain = term.screen(true);
    expect(plain).not.toMatch(/\x1b\[[0-9;]*m/);

    term.type("clean up");
    term.keys("Enter");
    await term.waitFor("Allow? once / session / always / Deny (60 s):");
    term.type("s");
    term.keys("Enter");
    await term.waitFor("Cleaned.");
    expect(term.screen()).toMatch(/💻 terminal rm -rf \.\/junk/);

    term.type("/quit");
    term.keys("Enter");
    await term.waitFor("[exit 0]");
  });

  it("a due background review saves after the answer and shows one line (display.memory_notifications)", async () => {
    // The reviewer's requests (told apart by their system prompt): save, then close.
    llm.respondWith((request) => {
      const messages = (request.body as ChatBody).messages;
      if (!String(messages[0]?.content ?? "").includes("learning reviewer")) return undefined;
      return messages.some((m) => m.role === "tool")
        ? reply().text("Saved.")
        : reply().toolCall("memory", { action: "add", target: "user", content: "Goes by Ada." });
    });
    llm.enqueue(reply().text("Hello Ada!"));
    const { term, home } = open("memory:\n  nudge_interval: 1\n");
    await term.waitFor("Ctrl+D to exit");
    term.type("Call me Ada.");
    term.keys("Enter");
    await term.waitFor("Hello Ada!");
    await term.waitFor("💾 Learned from this conversation: user profile");
    expect(readFileSync(join(home, "memories", "USER.md"), "utf8")).toContain("Goes by Ada.");
    term.type("/quit");
    term.keys("Enter");
    await term.waitFor("[exit 0]");
  });

  it("with busy_input_mode queue, text typed during a turn runs after it; /steer reaches the turn", async () => {
    llm.enqueue(
      reply().toolCall("terminal", { command: "sleep 3" }),
      reply().text("First done."),
      reply().text("Second done."),
    );
    const { term } = open("display:\n  busy_input_mode: queue\n");
    await term.waitFor("Ctrl+D to exit");

    term.type("first");
    term.keys("Enter");
    await term.waitFor("terminal sleep 3");
    term.type("/steer use tabs");
    term.keys("Enter");
    await term.waitFor("↪ Steering: use tabs");
    term.type("second");
    term.keys("Enter");
    await term.waitFor("⏳ Queued (1 waiting)");
    await term.waitFor("Second done.");
    const screen = term.screen();
    expect(screen.indexOf("First done.")).toBeLessThan(screen.indexOf("Second done."));
    expect(JSON.stringify(llm.chatRequests[1]!.body)).toContain("use tabs");
    expect(lastMessage(2)).toEqual({ role: "user", content: "second" });
  });

  it("an interrupted conversation is saved and found later by `hermes sessions search` and by session_search", async () => {
    llm.enqueue(
      reply().text("Filing the periwinkle launch notes.").toolCall("terminal", { command: "sleep 30" }),
    );
    const { term, home, cwd } = open();
    await term.waitFor("Ctrl+D to exit");
    term.type("The launch codename is periwinkle");
    term.keys("Enter");
    await term.waitFor("Filing the periwinkle launch notes.");
    await llm.waitForRequests(1);
    term.keys("C-c");
    await term.waitFor("⏹ Interrupted.");
    term.keys("C-d");
    await term.waitFor("[exit 0]");

    const found = await runHermes(["sessions", "search", "periwinkle"], { home, cwd });
    expect(found.code).toBe(0);
    expect(found.stdout).toContain("periwinkle");
    const listed = await runHermes(["sessions", "list", "--json"], { home, cwd });
    const [saved] = JSON.parse(listed.stdout) as Array<{ id: string }>;

    llm.enqueue(
      reply().toolCall("session_search", { query: "periwinkle" }),
      reply().text("It was periwinkle."),
    );
    const asked = await runHermes(["-q", "What was the launch codename?"], { home, cwd });
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain("It was periwinkle.");
    const toolResult = (llm.chatRequests.at(-1)!.body as ChatBody).messages.find((m) => m.role === "tool");
    expect(toolResult?.content).toContain(saved?.id ?? "missing");
    expect(toolResult?.content).toContain("periwinkle");
  });
});
