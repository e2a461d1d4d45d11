/**
 * What the interactive REPL shows, in a real terminal (tmux): the status line above the prompt,
 * a running command's output under its spinner row, /clear, notices wrapped at word boundaries,
 * and `hermes chat -q` rendering markdown when stdout is a terminal.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { hasTmux, Terminal } from "../support/terminal.js";

let llm: FakeLlm;
const terminals: Terminal[] = [];

beforeEach(async () => {
  llm = await startFakeLlm();
});
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  await llm.close();
});

function open(options: { args?: string[]; cols?: number; extra?: string } = {}) {
  const config = fakeProviderConfig(llm.url, options.extra ?? "").replace(
    "  default: fake-model\n",
    "  default: fake-model\n  context_length: 10000\n",
  );
  const { home, cwd } = tempHome(config);
  const term = Terminal.start({
    home,
    cwd,
    ...(options.args ? { args: options.args } : {}),
    ...(options.cols ? { cols: options.cols } : {}),
  });
  terminals.push(term);
  return { term, home, cwd };
}

/** The rows above the prompt line (`❯ `) on the visible screen. */
function aboveTheprompt(screen: string, rows = 3): string[] {
  const lines = screen.trimEnd().split("\n");
  const at = lines.findLastIndex((l) => l.startsWith("❯"));
  return lines.slice(Math.max(0, at - rows), at);
}

describe.skipIf(!hasTmux)("the REPL's display", () => {
  it("keeps a status line above the prompt with model, context %, tokens and cwd; /statusbar hides it", async () => {
    llm.enqueue(reply().text("Counted.").usage({ prompt: 1200, completion: 34 }));
    const { term, cwd } = open();
    await term.waitFor("/help for commands");
    // Before any call: the model, no tokens yet, and where the agent works.
    const idle = await term.waitFor(/fake-model · .*0 tokens/);
    expect(aboveTheprompt(idle, 1)[0]).toContain(cwd);

    term.type("count my tokens");
    term.keys("Enter");
    await term.waitFor("Counted.");
    const after = await term.waitFor(/fake-model · 12% · 1\.2k tokens/);
    expect(aboveTheprompt(after, 1)[0]).toMatch(/^fake-model · 12% · 1\.2k tokens( · \S+)? · \/.*work$/);
    // The status line is never left in the scrollback: only above the live prompt.
    expect(after.match(/fake-model · /g)?.length).toBe(1);

    term.type("/statusbar");
    term.keys("Enter");
    const hidden = await term.waitFor("Status line off");
    expect(hidden).not.toMatch(/fake-model · /);
    term.type("/sb");
    term.keys("Enter");
    await term.waitFor(/Status line on[\s\S]*fake-model · 12%/);
  });

  it("shows a running command's latest output under the spinner row, then only the tool line", async () => {
    llm.enqueue(
      reply().toolCall("terminal", {
        command: "for i in 1 2 3 4 5 6; do echo live-line-$i; done; sleep 41.3; echo finished",
        timeout: 60,
      }),
      reply().text("Stopped it."),
    );
    const { term } = open();
    await term.waitFor("/help for commands");
    term.type("run the slow thing");
    term.keys("Enter");
    // The spinner row names the command; under it, the last four lines it printed.
    const live = await term.waitFor("│ live-line-6");
    const rows = aboveTheprompt(live, 5);
    expect(rows[0]).toMatch(/terminal/);
    expect(rows.slice(1)).toEqual([
      "  │ live-line-3",
      "  │ live-line-4",
      "  │ live-line-5",
      "  │ live-line-6",
    ]);
    expect(live).not.toContain("│ live-line-2");

    term.keys("C-c");
    const done = await term.waitFor(/Interrupted|Stopped it\./);
    // The live rows went with the command; the scrollback holds the tool line, not the output.
    expect(done).not.toContain("│ live-line");
    expect(done).toMatch(/💻 .*terminal/);
  });

  it("/clear wipes the screen, shows the welcome again and starts a new session", async () => {
    llm.enqueue(reply().text("An answer worth clearing."));
    const { term } = open();
    const first = await term.waitFor(/session (\S+)/);
    const firstId = /session (\S+)/.exec(first)?.[1];
    term.type("hello");
    term.keys("Enter");
    await term.waitFor("An answer worth clearing.");
    term.type("/clear");
    term.keys("Enter");
    const cleared = await term.waitFor(/New session \S+/);
    expect(cleared).not.toContain("An answer worth clearing.");
    expect(cleared).not.toContain("❯ hello");
    expect(cleared).toContain("/help for commands");
    const newId = /New session (\S+)/.exec(cleared)?.[1];
    expect(newId).toBeTruthy();
    expect(newId).not.toBe(firstId);
  });

  it("wraps /help at word boundaries to a narrow terminal, continuation rows under the description", async () => {
    const { term } = open({ cols: 64 });
    await term.waitFor("/help for commands");
    term.type("/help");
    term.keys("Enter");
    const screen = await term.waitFor("/quit");
    const lines = screen.split("\n");
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(64);
    // Short entries keep one column for their descriptions.
    const title = lines.find((l) => l.startsWith("  /title [text]")) ?? "";
    const column = title.search(/\S\s{2,}\S/) + title.slice(title.search(/\S\s{2,}\S/)).search(/\s\S/) + 1;
    expect(title.slice(column)).toBe("show or set the session title");
    // A description too long for 64 columns continues on the next row, under its column.
    const resume = lines.findIndex((l) => l.startsWith("  /resume"));
    expect(lines[resume + 1]?.search(/\S/)).toBe(column);
    // A usage too long for the column has a row of its own; its description sits in the column.
    const curator = lines.findIndex((l) => l.startsWith("  /curator"));
    const description = lines
      .slice(curator + 1)
      .find((l) => !l.startsWith("  /") && l.trimStart().startsWith("the skill curator"));
    expect(description?.search(/\S/)).toBe(column);
    // No word was cut in two across rows: every row of /resume's help reads as whole words.
    const joined = lines
      .slice(resume, resume + 3)
      .map((l) => l.trim())
      .join(" ");
    expect(joined).toContain(
      "switch to an earlier session: its id, title or number in /sessions (none: pick",
    );
  });
});

describe.skipIf(!hasTmux)("hermes chat -q on a terminal", () => {
  it("renders the answer's markdown", async () => {
    llm.enqueue(
      reply().text("Here is **bold** text:\n\n- first item\n- second item\n\n```sh\nls -la\n```\n"),
    );
    const { term } = open({ args: ["chat", "-q", "show me"] });
    const screen = await term.waitFor("[exit 0]");
    expect(screen).toContain("Here is bold text:");
    expect(screen).not.toContain("**bold**");
    expect(screen).toMatch(/• first item/);
    expect(screen).toContain("ls -la");
    expect(screen).not.toContain("```");
  });
});
