import { describe, expect, it } from "vitest";
import { type MarkdownMode, MarkdownStream } from "../../../../src/cli/tui/markdown-stream.js";
import { stripAnsi } from "../../../../src/cli/tui/text-width.js";

function render(text: string, mode: MarkdownMode = "plain", width?: number): string[] {
  const md = new MarkdownStream({ mode, ...(width ? { width } : {}) });
  return [...md.push(text), ...md.flush()];
}

describe("MarkdownStream, plain mode (no colour)", () => {
  it.each<[string, string, string[]]>([
    ["paragraph", "Hello world", ["Hello world"]],
    ["emphasis markers dropped", "a **bold** and *it* and ~~gone~~ word", ["a bold and it and gone word"]],
    ["inline code keeps backticks", "run `npm test` now", ["run `npm test` now"]],
    ["link text and url", "see [docs](https://x.dev/a)", ["see docs (https://x.dev/a)"]],
    ["bare url once", "go to https://x.dev now", ["go to https://x.dev now"]],
    ["entities decoded", "a &amp; b &lt;c&gt;", ["a & b <c>"]],
    ["escapes", "not \\*emphasis\\*", ["not *emphasis*"]],
    ["heading keeps its marker", "## Setup **now**", ["## Setup now"]],
    ["hash without space is text", "#hashtag", ["#hashtag"]],
    ["rule", "---", ["─".repeat(40)]],
    ["setext underline drawn as rule", "Title\n===", ["Title", "─".repeat(40)]],
    ["quote", "> wise *words*", ["│ wise words"]],
    ["nested quote", ">> deeper", ["│ │ deeper"]],
    ["bullets by depth", "- a\n  - b\n    - c\n- d", ["  • a", "    ◦ b", "      ▪ c", "  • d"]],
    ["star and plus bullets", "* a\n+ b", ["  • a", "  • b"]],
    ["numbered", "1. one\n2) two", ["  1. one", "  2) two"]],
    ["tasks", "- [ ] todo\n- [x] done", ["  ☐ todo", "  ☑ done"]],
    ["list continuation", "- item\n  more text", ["  • item", "    more text"]],
    ["bold at line start is not a bullet", "**Note:** x", ["Note: x"]],
    ["blank lines collapse", "a\n\n\n\nb", ["a", "", "b"]],
    ["leading blank lines dropped", "\n\nhi", ["hi"]],
    [
      "code fence kept verbatim",
      "```py\nx = 1  # **not bold**\n\n  y\n```",
      ["```py", "x = 1  # **not bold**", "", "  y", "```"],
    ],
    ["tilde fence", "~~~\na | b\n~~~", ["~~~", "a | b", "~~~"]],
    ["unclosed fence at end", "```\ncode", ["```", "code"]],
    ["pipe line that is not a table", "a | b\nplain", ["a | b", "plain"]],
    ["CRLF line ends", "a\r\nb\r\n", ["a", "b"]],
  ])("%s", (_name, input, expected) => {
    expect(render(input)).toEqual(expected);
  });

  it("draws a table with aligned columns and box characters", () => {
    const out = render("| Name | Qty |\n|:-----|----:|\n| apple | 3 |\n| kiwi | 12 |\n\nafter");
    expect(out).toEqual([
      "┌───────┬─────┐",
      "│ Name  │ Qty │",
      "├───────┼─────┤",
      "│ apple │   3 │",
      "│ kiwi  │  12 │",
      "└───────┴─────┘",
      "",
      "after",
    ]);
  });

  it("sizes table columns by display width (CJK and emoji are two cells)", () => {
    const out = render("| k | v |\n|---|:-:|\n| 中文 | 😀 |\n| ab | x |");
    expect(out[1]).toBe("│ k    │ v  │");
    expect(out[3]).toBe("│ 中文 │ 😀 │");
    expect(out[4]).toBe("│ ab   │ x  │");
  });

  it("renders inline markup in cells and keeps escaped or code pipes", () => {
    const out = render("| a | b |\n|---|---|\n| **x** | `p|q` |\n| r \\| s | t |");
    expect(out[3]).toBe("│ x     │ `p|q` │");
    expect(out[4]).toBe("│ r | s │ t     │");
  });

  it("holds table rows until the table ends, then prints it at once", () => {
    const md = new MarkdownStream({ mode: "plain" });
    expect(md.push("| a | b |\n")).toEqual([]);
    expect(md.push("|---|---|\n| 1 | 2 |\n")).toEqual([]);
    const out = md.push("done\n");
    expect(out.at(-1)).toBe("done");
    expect(out[0]).toBe("┌───┬───┐");
  });

  it("emits each line as soon as it is complete, and the rest on flush", () => {
    const md = new MarkdownStream({ mode: "plain" });
    expect(md.push("Hello **wor")).toEqual([]);
    expect(md.push("ld**\nnext")).toEqual(["Hello world"]);
    expect(md.idle).toBe(false);
    expect(md.flush()).toEqual(["next"]);
    expect(md.idle).toBe(true);
  });

  it("wraps paragraphs and list items to the width with a hanging indent", () => {
    expect(render("one two three four five six", "plain", 12)).toEqual(["one two", "three four", "five six"]);
    expect(render("- alpha beta gamma delta", "plain", 14)).toEqual([
      "  • alpha beta",
      "    gamma",
      "    delta",
    ]);
  });

  it("shrinks a table wider than the terminal and wraps its cells", () => {
    const out = render("| a | b |\n|---|---|\n| one two three four | x |", "plain", 16);
    for (const line of out) expect(line.length).toBeLessThanOrEqual(16);
    expect(out.join("\n")).toContain("one");
    expect(out.join("\n")).toContain("four");
  });
});

describe("MarkdownStream, ansi mode", () => {
  it("styles emphasis, code, links and headings", () => {
    const [line] = render("a **b** *c* `d` [e](http://f)", "ansi");
    expect(line).toContain("\x1b[1mb\x1b[22m");
    expect(line).toContain("\x1b[3mc\x1b[23m");
    expect(line).toContain("\x1b[36md\x1b[39m");
    expect(line).toContain("\x1b[4me\x1b[24m");
    expect(stripAnsi(line ?? "")).toBe("a b c d e (http://f)");
    const [heading] = render("# Title", "ansi");
    expect(stripAnsi(heading ?? "")).toBe("Title");
    expect(heading).toContain("\x1b[1m");
  });

  it("draws code blocks with a labelled gutter and keeps the code verbatim", () => {
    const out = render("```ts\nconst a = **1**;\n```", "ansi").map(stripAnsi);
    expect(out).toEqual(["╭─ ts", "│ const a = **1**;", "╰─"]);
  });

  it("closes an unfinished code block on flush", () => {
    expect(render("```\nx", "ansi").map(stripAnsi)).toEqual(["╭─", "│ x", "╰─"]);
  });

  it("closes colours at every wrapped row end", () => {
    const out = render("**one two three four**", "ansi", 10);
    expect(out.length).toBeGreaterThan(1);
    for (const row of out) expect(row.endsWith("\x1b[0m") || row.endsWith("\x1b[22m")).toBe(true);
    expect(out.map(stripAnsi).join(" ")).toBe("one two three four");
  });
});

describe("MarkdownStream, raw mode", () => {
  it("passes lines through untouched", () => {
    expect(render("# **x**\n| a |\n|---|", "raw")).toEqual(["# **x**", "| a |", "|---|"]);
  });
});

const DOCUMENTS = [
  "# Title\n\nSome **bold** text, `code` and a [link](https://a.b).\n\n- one\n  - two\n\n```js\nlet x = 1;\n```\n\n| a | b |\n|---|:-:|\n| 中文 | 😀 |\n\n> quote\n---\nend",
  "plain line without newline",
  "| x |\n|---|\n| 1 |",
  "a\r\nb\r\n\r\n```\r\ncode\r\n```\r\n",
];

describe("MarkdownStream gives the same output however the text is split", () => {
  for (const mode of ["plain", "ansi", "raw"] as const) {
    it.each(DOCUMENTS.map((d, i) => [i, d] as const))(`${mode} document %i`, (_i, doc) => {
      const whole = render(doc, mode, 30);
      const chars = Array.from(doc);
      for (let cut = 1; cut < chars.length; cut++) {
        const md = new MarkdownStream({ mode, width: 30 });
        const out = [
          ...md.push(chars.slice(0, cut).join("")),
          ...md.push(chars.slice(cut).join("")),
          ...md.flush(),
        ];
        expect(out, `split at ${cut}`).toEqual(whole);
      }
      const md = new MarkdownStream({ mode, width: 30 });
      const oneByOne = [...chars.flatMap((c) => md.push(c)), ...md.flush()];
      expect(oneByOne).toEqual(whole);
    });
  }
});
