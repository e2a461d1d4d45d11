/**
 * Bundled data and productivity skills followed end to end through the built CLI. The fake model
 * behaves like a model that follows the skill: it loads it with skill_view, then runs the exact
 * commands the skill's Procedure gives (taken from the skill_view result, with SKILL_DIR replaced
 * by the folder skill_view printed), so a skill whose instructions are wrong fails here. The
 * scripts run for real on fixtures in a temporary folder; outcomes are checked on disk and in the
 * answer the user sees.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, type ReplyBuilder, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
afterEach(() => {
  llm.respondWith(undefined);
});

const hasPython = spawnSync("python3", ["-c", "pass"]).status === 0;

type Msg = { role: string; content: string | null; tool_calls?: Array<{ function: { name: string } }> };
const messagesOf = (request: RecordedRequest) => (request.body as { messages: Msg[] }).messages;
/** The text of every tool result so far, oldest first. */
const toolResults = (request: RecordedRequest): string[] =>
  messagesOf(request)
    .filter((m) => m.role === "tool")
    .map((m) => m.content ?? "");

/** The folder skill_view printed, and the skill's body. */
function parseSkillView(result: string): { folder: string; body: string } {
  const folder = /^Folder: (.+)$/m.exec(result)?.[1]?.trim();
  const body = result.split("\nSKILL.md:\n")[1];
  if (!folder || !body) throw new Error(`not a skill_view result:\n${result.slice(0, 400)}`);
  return { folder, body };
}

/**
 * The first inline command in the skill's Procedure that starts with `prefix` (backticks around
 * it), SKILL_DIR replaced by the skill's folder, as a model following the skill would run it.
 */
function commandFromSkill(viewResult: string, prefix: string): string {
  const { folder, body } = parseSkillView(viewResult);
  const procedure = body.split("## Procedure")[1]?.split("\n## ")[0] ?? "";
  const inline = [...procedure.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "");
  const fenced = [...procedure.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) =>
    (m[1] ?? "").replace(/\\\n\s*/g, "").trim(),
  );
  const found = [...inline, ...fenced].find((c) => c.startsWith(prefix));
  if (!found) throw new Error(`the skill's Procedure gives no command starting with ${prefix}`);
  return found.replaceAll("SKILL_DIR", folder);
}

/** The text of a read_file result (JSON or plain), line-number prefixes removed. */
function fileText(result: string): string {
  let text = result;
  try {
    const parsed = JSON.parse(result) as { content?: unknown };
    if (typeof parsed.content === "string") text = parsed.content;
  } catch {
    // plain text result
  }
  return text.replace(/^\s*\d+\|/gm, "");
}

/** A scripted model that follows `steps`: step i answers once the conversation holds i tool results. */
function follow(steps: Array<(results: string[]) => ReplyBuilder>): void {
  llm.respondWith((request) => {
    const results = toolResults(request);
    // One step per assistant turn: count assistant messages already in the conversation.
    const turn = messagesOf(request).filter((m) => m.role === "assistant").length;
    const step = steps[turn];
    if (!step) return reply().text("(no further step scripted)");
    return step(results);
  });
}

function home(): { home: string; cwd: string } {
  const h = tempHome(fakeProviderConfig(llm.url));
  return h;
}

describe.skipIf(!hasPython)("bundled data skills, followed by the agent", () => {
  it("csv-analysis: the profile command from the skill reports correct stats for a messy CSV", async () => {
    const h = home();
    writeFileSync(
      join(h.cwd, "data.csv"),
      [
        "order_id,region,amount,order_date",
        '1, North ,"1,200",2026-01-05',
        "2,South,$30,2026-02-10",
        "3,north,N/A,2026/03/01",
        "4,East, 45.5 ,",
        "5,South,abc,2026-04-01",
        "5,South,abc,2026-04-01",
        "",
      ].join("\n"),
    );
    let command = "";
    follow([
      () => reply().toolCall("skill_view", { name: "csv-analysis" }),
      (results) => {
        command = commandFromSkill(results.at(-1) ?? "", "python3 ");
        return reply().toolCall("terminal", { command });
      },
      (results) => {
        const out = results.at(-1) ?? "";
        const amount = /\[amount\][^\n]*\n\s+(min=[^\n]+)/.exec(out)?.[1] ?? "(amount stats missing)";
        const rows = /rows: (\d+)/.exec(out)?.[1] ?? "?";
        const unparsed = /unparsed values: ([^\n]+)/.exec(out)?.[1] ?? "none";
        return reply().text(`data.csv has ${rows} rows. amount: ${amount}; unparsed: ${unparsed}`);
      },
    ]);
    const result = await runHermes(["-q", "What's in data.csv? Give me the amount stats."], h);
    expect(result.code, result.stderr).toBe(0);
    expect(command).toMatch(
      /^python3 \/.+\/skills\/data-science\/csv-analysis\/scripts\/csv_profile\.py data\.csv$/,
    );
    const terminalOut = toolResults(llm.chatRequests.at(-1) as RecordedRequest).at(-1) ?? "";
    expect(terminalOut).toContain("rows: 6");
    expect(terminalOut).toContain("duplicate rows: 1");
    expect(terminalOut).toMatch(/\[amount\] type=number missing=1 distinct=4/);
    expect(terminalOut).toMatch(/\[order_date\] type=date missing=1/);
    // 1200, 30, 45.5 and the duplicated unparsable "abc" left out: mean (1200+30+45.5)/3.
    expect(result.stdout).toContain("data.csv has 6 rows.");
    expect(result.stdout).toContain("min=30 max=1200 mean=425.1667 median=45.5");
    expect(result.stdout).toContain("unparsed: 'abc'");
  });

  it("summarize-document: a long report is chunked and the summary cites each section", async () => {
    const h = home();
    const topics = [
      ["Revenue", "Revenue grew 12% to 4.1 million EUR."],
      ["Costs", "Cloud costs fell 8% after the storage migration."],
      ["Hiring", "Headcount reached 240 by the end of the year."],
      ["Risks", "The main supplier contract ends in March."],
      ["Outlook", "The board expects flat revenue in the first half."],
    ] as const;
    const filler = (topic: string) =>
      `${`The ${topic.toLowerCase()} team reviewed the quarter in detail and wrote down every figure. `.repeat(18)}\n`;
    const parts = ["# Annual report 2026", "", "Prepared by the finance office.", ""];
    for (const [title, fact] of topics) {
      parts.push(`## ${title}`, "", filler(title), `Key fact: ${fact}`, "", filler(title), filler(title));
    }
    writeFileSync(join(h.cwd, "doc.md"), parts.join("\n"));
    const docLines = parts.join("\n").replace(/\n$/, "").split("\n").length;
    let chunkNames: string[] = [];
    follow([
      () => reply().toolCall("skill_view", { name: "summarize-document" }),
      (results) =>
        reply().toolCall("terminal", { command: commandFromSkill(results.at(-1) ?? "", "python3 ") }),
      (results) => {
        chunkNames = [...(results.at(-1) ?? "").matchAll(/^(chunk-\d+\.md) /gm)].map((m) => m[1] ?? "");
        const next = reply();
        for (const name of chunkNames) next.toolCall("read_file", { path: `doc-chunks/${name}` });
        return next;
      },
      (results) => {
        // Map: one note per key fact, tagged with the section the chunk header names for it.
        const notes: string[] = [];
        for (const text of results.slice(-chunkNames.length).map(fileText)) {
          const sections = /sections: ([^>]+?) -->/.exec(text)?.[1]?.split(" | ") ?? [];
          for (const fact of text.matchAll(/Key fact: (.+)/g)) {
            const before = text.slice(0, fact.index);
            const heading = [...before.matchAll(/^## (.+)$/gm)].at(-1)?.[1];
            const tag = sections.find((s) => heading && s.endsWith(` ${heading}`)) ?? sections.at(-1);
            notes.push(`- ${fact[1]} (${tag})`);
          }
        }
        return reply().toolCall("write_file", {
          path: "doc-chunks/notes.md",
          content: `${notes.join("\n")}\n`,
        });
      },
      () => reply().toolCall("read_file", { path: "doc-chunks/notes.md" }),
      (results) => reply().text(`Summary of doc.md:\n${fileText(results.at(-1) ?? "").trim()}`),
    ]);
    const result = await runHermes(["-q", "Summarise doc.md with section references"], h);
    expect(result.code, result.stderr).toBe(0);
    const chunkDir = join(h.cwd, "doc-chunks");
    const files = readdirSync(chunkDir).filter((f) => f.startsWith("chunk-"));
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(chunkNames.sort()).toEqual(files.sort());
    for (const f of files) {
      const body = readFileSync(join(chunkDir, f), "utf8").split("\n").slice(1).join("\n");
      expect(body.length).toBeLessThanOrEqual(6001);
    }
    const index = readFileSync(join(chunkDir, "index.tsv"), "utf8").trim().split("\n");
    expect(Number(index.at(-1)?.split("\t")[2])).toBe(docLines);
    topics.forEach(([title, fact], i) => {
      expect(result.stdout).toContain(`- ${fact} (§${i + 1} ${title})`);
    });
  });

  it("meeting-notes: the transcript shortlist and template give notes with owners and dates", async () => {
    const h = home();
    writeFileSync(
      join(h.cwd, "transcript.txt"),
      [
        "[00:00:05] Alice Martin: Morning all. First item is the launch date.",
        "[00:01:10] Bob: Marketing needs two more weeks for the campaign.",
        "[00:02:30] Alice Martin: Then we agreed to move the launch to December 8.",
        "[00:03:00] Carol: I'll update the release calendar by Friday.",
        "[00:04:12] Alice Martin: Bob, can you send the revised budget to finance?",
        "[00:04:40] Bob: Sure, I will send it before Wednesday.",
        "[00:05:00] Carol: Nice weather today.",
        "",
      ].join("\n"),
    );
    follow([
      () => reply().toolCall("skill_view", { name: "meeting-notes" }),
      (results) =>
        reply().toolCall("terminal", { command: commandFromSkill(results.at(-1) ?? "", "python3 ") }),
      () =>
        reply().toolCall("skill_view", { name: "meeting-notes", file_path: "templates/meeting-notes.md" }),
      (results) => {
        const candidates = results.at(-2) ?? "";
        const template = results.at(-1) ?? "";
        expect(template).toContain("## Action items");
        const decisions = [...candidates.matchAll(/^decision\s+L(\d+)\s+[^:]+: (.+)$/gm)].map(
          (m) => `- ${m[2]} (line ${m[1]})`,
        );
        // Actions by owner: a later line by the addressed person confirms the earlier request.
        const actions = new Map<string, string>();
        for (const m of candidates.matchAll(
          /^action\s+L(\d+)\s+[^:]+: (.+?) {2}\[owner: ([^\]]+)\](?: \[due: ([^\]]+)\])?/gm,
        )) {
          const [, line, text, owner, due] = m;
          if (owner) actions.set(owner, `| ${owner} | ${text} | ${due ?? "none set"} | ${line} |`);
        }
        const notes = [
          "# Weekly sync - 2026-11-24",
          "",
          "## Decisions",
          ...decisions,
          "",
          "## Action items",
          "| Owner | Task | Due | Transcript line |",
          "|---|---|---|---|",
          ...actions.values(),
          "",
        ].join("\n");
        return reply().toolCall("write_file", { path: "meeting-notes-2026-11-24.md", content: notes });
      },
      () => reply().text("Notes saved to meeting-notes-2026-11-24.md."),
    ]);
    const result = await runHermes(["-q", "Turn transcript.txt into meeting notes"], h);
    expect(result.code, result.stderr).toBe(0);
    const notes = readFileSync(join(h.cwd, "meeting-notes-2026-11-24.md"), "utf8");
    expect(notes).toContain("- Then we agreed to move the launch to December 8. (line 3)");
    expect(notes).toContain("| Carol | I'll update the release calendar by Friday. | by Friday | 4 |");
    expect(notes).toContain("| Bob | Sure, I will send it before Wednesday. | before Wednesday | 6 |");
    expect(notes).not.toContain("Nice weather");
  });

  it("todo-management: the skill's done and add commands update todo.md and nothing else", async () => {
    const h = home();
    const before = [
      "# Todo",
      "",
      "## Work",
      "- [ ] Send the Q4 report (due: 2026-12-01) #finance",
      "- [ ] Review the hiring plan",
      "",
      "## Home",
      "- [ ] Fix the bike",
      "",
    ].join("\n");
    writeFileSync(join(h.cwd, "todo.md"), before);
    const prefix = "python3 SKILL_DIR/scripts/todo_md.py";
    let view = "";
    follow([
      () => reply().toolCall("skill_view", { name: "todo-management" }),
      (results) => {
        view = results.at(-1) ?? "";
        return reply().toolCall("terminal", {
          command: commandFromSkill(view, `${prefix} done todo.md --match`),
        });
      },
      () => reply().toolCall("terminal", { command: commandFromSkill(view, `${prefix} add todo.md`) }),
      () => reply().toolCall("terminal", { command: commandFromSkill(view, `${prefix} list todo.md`) }),
      (results) => reply().text(`Updated your list:\n${results.at(-1) ?? ""}`),
    ]);
    const result = await runHermes(["-q", "The Q4 report is sent; add booking the team dinner"], h);
    expect(result.code, result.stderr).toBe(0);
    const after = readFileSync(join(h.cwd, "todo.md"), "utf8");
    // The script dates tasks in the machine's local time zone, as the CLI's terminal sees it.
    const today = spawnSync("python3", ["-c", "import datetime; print(datetime.date.today())"], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    }).stdout.trim();
    expect(after).toBe(
      [
        "# Todo",
        "",
        "## Work",
        `- [x] Send the Q4 report (due: 2026-12-01) #finance (done: ${today})`,
        "- [ ] Review the hiring plan",
        "- [ ] Book the team dinner (due: 2026-12-12)",
        "",
        "## Home",
        "- [ ] Fix the bike",
        "",
      ].join("\n"),
    );
    expect(result.stdout).toMatch(/3\. \[ \] Book the team dinner \(due: 2026-12-12\)\s+\(Work\)/);
    expect(result.stdout).toContain("3 open, 1 done");
    expect(existsSync(join(h.cwd, "todo.md.tmp"))).toBe(false);
  });

  it("data-cleaning: the skill's cleaner writes a clean copy and leaves the original as it was", async () => {
    const h = home();
    const original = [
      "order_id,city,amount,price,order_date",
      '1, paris ,"1,200",$3.50,03/04/2026',
      "2,LYON,N/A,(2),25/12/2026",
      "3,paris,7,4,2026-01-09",
      "3,paris,7,4,2026-01-09",
      "4,Nice,lots,1,31.01.2026",
      "",
    ].join("\n");
    writeFileSync(join(h.cwd, "data.csv"), original);
    follow([
      () => reply().toolCall("skill_view", { name: "data-cleaning" }),
      (results) =>
        reply().toolCall("terminal", { command: commandFromSkill(results.at(-1) ?? "", "python3 ") }),
      (results) => reply().text(results.at(-1) ?? ""),
    ]);
    const result = await runHermes(["-q", "Clean data.csv"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(h.cwd, "data.csv"), "utf8")).toBe(original);
    expect(readFileSync(join(h.cwd, "data.clean.csv"), "utf8")).toBe(
      [
        "order_id,city,amount,price,order_date",
        "1,Paris,1200,3.50,2026-04-03",
        "2,Lyon,,-2,2026-12-25",
        "3,Paris,7,4,2026-01-09",
        "4,Nice,lots,1,2026-01-31",
        "",
      ].join("\r\n"),
    );
    expect(result.stdout).toContain("wrote data.clean.csv: 4 rows (from 5)");
    expect(result.stdout).toContain("duplicate rows dropped: 1");
    expect(result.stdout).toContain("amount: left unchanged, not convertible: 'lots'");
  });

  it("charts: without matplotlib the skill's SVG writer draws bars that match the data", async () => {
    const h = home();
    writeFileSync(join(h.cwd, "sales.csv"), "month,revenue\nJan,100\nFeb,250\nMar,n/a\nApr,175\n");
    follow([
      () => reply().toolCall("skill_view", { name: "charts" }),
      (results) => {
        // No matplotlib here: the skill's fallback command, switched to bars as step 2 advises for months.
        const command = commandFromSkill(results.at(-1) ?? "", "python3 SKILL_DIR/scripts/svg_chart.py");
        return reply().toolCall("terminal", { command: command.replace("--kind line", "--kind bar") });
      },
      (results) => reply().text(results.at(-1) ?? ""),
    ]);
    const result = await runHermes(["-q", "Chart revenue by month from sales.csv"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("wrote revenue.svg: bar chart, 4 categories, 1 series");
    const svg = readFileSync(join(h.cwd, "revenue.svg"), "utf8");
    expect(svg).toContain("<title>Feb: 250</title>");
    expect(svg).toContain(">Revenue by month</text>");
    const heights = Object.fromEntries(
      [...svg.matchAll(/height="([\d.]+)" fill="[^"]+"><title>(\w+): /g)].map((m) => [m[2], Number(m[1])]),
    );
    expect(Object.keys(heights)).toEqual(["Jan", "Feb", "Apr"]);
    expect((heights.Feb ?? 0) / (heights.Jan ?? 1)).toBeCloseTo(2.5, 1);
    const parsed = spawnSync(
      "python3",
      ["-c", "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])", "revenue.svg"],
      {
        cwd: h.cwd,
      },
    );
    expect(parsed.status).toBe(0);
  });

  it("sqlite-queries: a CSV imported and queried read-only with the skill's commands", async () => {
    const h = home();
    writeFileSync(join(h.cwd, "orders.csv"), "id,city,amount\n1,Paris,10.5\n2,Lyon,4\n3,Paris,2\n4,Nice,\n");
    let view = "";
    follow([
      () => reply().toolCall("skill_view", { name: "sqlite-queries" }),
      (results) => {
        view = results.at(-1) ?? "";
        return reply().toolCall("terminal", {
          command: commandFromSkill(view, "python3 SKILL_DIR/scripts/sqlite_tool.py import"),
        });
      },
      () =>
        reply().toolCall("terminal", {
          command: commandFromSkill(view, "python3 SKILL_DIR/scripts/sqlite_tool.py query"),
        }),
      () => {
        const write = commandFromSkill(view, "python3 SKILL_DIR/scripts/sqlite_tool.py query").replace(
          /"SELECT[^"]+"/,
          '"DELETE FROM orders"',
        );
        return reply().toolCall("terminal", { command: write });
      },
      (results) => reply().text(results.slice(-3).join("\n---\n")),
    ]);
    const result = await runHermes(["-q", "Total order amount per city from orders.csv"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("imported 4 rows into orders (id INTEGER, city TEXT, amount REAL)");
    expect(result.stdout).toMatch(/Paris\s+\| 12\.5\s*\nLyon\s+\| 4\.0\s*\nNice\s+\| NULL/);
    // The query path is read-only: the DELETE fails and the rows stay.
    expect(result.stdout).toContain("attempt to write a readonly database");
    const count = spawnSync(
      "python3",
      [
        "-c",
        "import sqlite3; print(sqlite3.connect('work.db').execute('select count(*) from orders').fetchone()[0])",
      ],
      {
        cwd: h.cwd,
        encoding: "utf8",
      },
    );
    expect(count.stdout.trim()).toBe("4");
  });

  it("markdown-notes: the vault check finds the broken link, the orphan and the backlinks", async () => {
    const h = home();
    const vault = join(h.cwd, "vault");
    spawnSync("mkdir", ["-p", join(vault, "daily"), join(vault, ".obsidian")]);
    writeFileSync(
      join(vault, "Project Alpha.md"),
      "---\ntags: [project]\n---\n# Alpha\nSee [[Budget]] and [[Roadmap|the plan]].\n",
    );
    writeFileSync(join(vault, "Budget.md"), "# Budget\nFor [[project alpha#Goals]]. #finance\n");
    writeFileSync(join(vault, "Lonely.md"), "# Nobody links here\n");
    writeFileSync(join(vault, "daily", "2026-11-26.md"), "# Today\nWorked on [[Project Alpha]].\n");
    writeFileSync(join(vault, ".obsidian", "Ignored.md"), "[[Nowhere]]\n");
    let view = "";
    follow([
      () => reply().toolCall("skill_view", { name: "markdown-notes" }),
      (results) => {
        view = results.at(-1) ?? "";
        const check = commandFromSkill(view, "python3 SKILL_DIR/scripts/vault_check.py <vault>");
        return reply().toolCall("terminal", { command: check.replace(/ <vault>.*$/, " vault") });
      },
      () => {
        const back = commandFromSkill(view, "python3 SKILL_DIR/scripts/vault_check.py <vault> --backlinks");
        return reply().toolCall("terminal", {
          command: back.replace("<vault>", "vault").replace("Note Title", "Project Alpha"),
        });
      },
      (results) => reply().text(results.slice(-2).join("\n---\n")),
    ]);
    const result = await runHermes(["-q", "Check my notes vault for problems"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("4 notes, 4 links");
    expect(result.stdout).toMatch(/broken links: 1\n\s+Project Alpha\.md:5 -> \[\[Roadmap\]\]/);
    expect(result.stdout).toMatch(/orphans \(no links in or out\): 1\n\s+Lonely\.md/);
    expect(result.stdout).not.toContain("Nowhere");
    expect(result.stdout).toContain("2 links to Project Alpha");
  });

  it("inbox-triage: the skill's mail reader lists an mbox export and shows one message", async () => {
    const h = home();
    const message = (from: string, date: string, subject: string, extra: string, body: string) =>
      `From MAILER-DAEMON ${date}\nFrom: ${from}\nDate: ${date}\nSubject: ${subject}\n${extra}Content-Type: text/plain\n\n${body}\n\n`;
    writeFileSync(
      join(h.cwd, "inbox.mbox"),
      message("Ann Lee <ann@example.org>", "Thu, 19 Nov 2026 09:00:00 +0000", "Old thread", "", "Too old.") +
        message(
          "Dana <dana@example.org>",
          "Mon, 23 Nov 2026 10:00:00 +0000",
          "Invoice 42 overdue",
          "",
          "Please pay by Friday.",
        ) +
        message(
          "News <news@example.com>",
          "Sat, 21 Nov 2026 08:00:00 +0000",
          "Weekly digest",
          "List-Id: <weekly.example.com>\n",
          "Hello.",
        ) +
        message(
          "Bob <bob@example.org>",
          "Tue, 24 Nov 2026 11:00:00 +0000",
          "Re: plans",
          "In-Reply-To: <x@example.org>\n",
          "Sounds good.",
        ),
    );
    let view = "";
    follow([
      () => reply().toolCall("skill_view", { name: "inbox-triage" }),
      (results) => {
        view = results.at(-1) ?? "";
        return reply().toolCall("terminal", {
          command: commandFromSkill(view, "python3 SKILL_DIR/scripts/mail_list.py inbox.mbox --since"),
        });
      },
      (results) => {
        // Open the message that looks like it needs action, by the number the listing gave it.
        const invoice = /^\s*(\d+) .*Invoice/m.exec(results.at(-1) ?? "")?.[1] ?? "?";
        const show = commandFromSkill(view, "python3 SKILL_DIR/scripts/mail_list.py inbox.mbox --show");
        return reply().toolCall("terminal", { command: show.replace(/--show \d+/, `--show ${invoice}`) });
      },
      (results) => reply().text(results.slice(-2).join("\n---\n")),
    ]);
    const result = await runHermes(["-q", "Triage my inbox since the 20th"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("Old thread");
    expect(result.stdout).toMatch(/2 2026-11-21 08:00 L- News\s+Weekly digest/);
    expect(result.stdout).toMatch(/3 2026-11-23 10:00 -- Dana\s+Invoice 42 overdue/);
    expect(result.stdout).toMatch(/4 2026-11-24 11:00 -R Bob\s+Re: plans/);
    expect(result.stdout).toContain("3 messages");
    expect(result.stdout).toContain("Subject: Invoice 42 overdue");
    expect(result.stdout).toContain("Please pay by Friday.");
  });

  it("arxiv-papers: a saved API answer is listed, with BibTeX, by the skill's parser", async () => {
    const h = home();
    // What the skill's curl step saves (no network in tests): an arXiv API Atom answer.
    writeFileSync(
      join(h.cwd, "arxiv.xml"),
      `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <opensearch:totalResults>137</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/2401.01234v2</id>
    <updated>2024-03-02T10:00:00Z</updated>
    <published>2024-01-03T09:00:00Z</published>
    <title>Tool Use in Small
      Language Agents</title>
    <summary>We study how small models call tools.</summary>
    <author><name>Grace Hopper</name></author>
    <author><name>Alan Turing</name></author>
    <arxiv:doi>10.1000/xyz123</arxiv:doi>
    <arxiv:primary_category term="cs.CL"/>
    <category term="cs.CL"/><category term="cs.AI"/>
    <link href="http://arxiv.org/abs/2401.01234v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2401.01234v2" rel="related" type="application/pdf"/>
  </entry>
</feed>
`,
    );
    let view = "";
    follow([
      () => reply().toolCall("skill_view", { name: "arxiv-papers" }),
      (results) => {
        view = results.at(-1) ?? "";
        const list = commandFromSkill(view, "python3 SKILL_DIR/scripts/arxiv_feed.py arxiv.xml");
        return reply().toolCall("terminal", { command: `${list} --abstracts` });
      },
      () => {
        const list = commandFromSkill(view, "python3 SKILL_DIR/scripts/arxiv_feed.py arxiv.xml");
        return reply().toolCall("terminal", { command: `${list} --bibtex` });
      },
      (results) => reply().text(results.slice(-2).join("\n---\n")),
    ]);
    const result = await runHermes(["-q", "Find recent papers on tool use by small language agents"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("1. [2401.01234v2] Tool Use in Small Language Agents");
    expect(result.stdout).toContain(
      "Grace Hopper, Alan Turing | 2024-01-03 (revised 2024-03-02) | cs.CL, cs.AI",
    );
    expect(result.stdout).toContain("We study how small models call tools.");
    expect(result.stdout).toContain("1 papers shown; 137 matched the query");
    expect(result.stdout).toMatch(
      /@misc\{hopper2024tool,[\s\S]*eprint = \{2401\.01234\}[\s\S]*doi = \{10\.1000\/xyz123\}/,
    );
  });
});
