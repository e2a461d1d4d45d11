import { describe, expect, it } from "vitest";
import {
  markdownToSignal,
  splitSignalText,
  styleString,
} from "../../../src/gateway/platforms/signal-format.js";
import { SseParser } from "../../../src/gateway/platforms/signal-sse.js";

const render = (md: string) => {
  const r = markdownToSignal(md);
  return { text: r.text, styles: r.styles.map(styleString) };
};

describe("markdownToSignal", () => {
  it.each([
    ["**bold** and *it*", "bold and it", ["0:4:BOLD", "9:2:ITALIC"]],
    [
      "__bold__ _it_ ~~gone~~ ||secret||",
      "bold it gone secret",
      ["0:4:BOLD", "5:2:ITALIC", "8:4:STRIKETHROUGH", "13:6:SPOILER"],
    ],
    ["use `rm *.txt` carefully", "use rm *.txt carefully", ["4:8:MONOSPACE"]],
    ["# Title\nbody", "Title\nbody", ["0:5:BOLD"]],
    ["- one\n* two", "• one\n• two", []],
    ["see [docs](https://x.y/z)", "see docs (https://x.y/z)", []],
    ["[https://a.b](https://a.b)", "https://a.b", []],
    ["**bold _and italic_**", "bold and italic", ["0:15:BOLD", "5:10:ITALIC"]],
    ["snake_case_name and 2*3*4", "snake_case_name and 2*3*4", []],
    ["a\n\n\n\nb", "a\n\nb", []],
  ])("%j", (md, text, styles) => {
    expect(render(md)).toEqual({ text, styles });
  });

  it("keeps fenced code literal and monospace", () => {
    const r = render("Run:\n```bash\necho **not bold**\n```\ndone");
    expect(r.text).toBe("Run:\necho **not bold**\ndone");
    expect(r.styles).toEqual(["5:17:MONOSPACE"]);
  });

  it("counts offsets in UTF-16 units, as Signal does", () => {
    expect(render("😀 **hi**")).toEqual({ text: "😀 hi", styles: ["3:2:BOLD"] });
  });

  it("survives unbalanced markers and an unclosed fence", () => {
    expect(render("**half bold").text).toBe("**half bold");
    expect(render("```\nno end").text).toBe("no end");
  });
});

describe("splitSignalText", () => {
  it("cuts at spaces, keeps pieces within the limit and moves styles to each piece", () => {
    const input = markdownToSignal(`**${"word ".repeat(30).trim()}**`);
    const pieces = splitSignalText(input, 40);
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) {
      expect(p.text.length).toBeLessThanOrEqual(40);
      expect(p.text.startsWith("word")).toBe(true);
      expect(p.styles[0]).toMatchObject({ start: 0, style: "BOLD" });
      expect(p.styles[0]?.length).toBe(p.text.length);
    }
    expect(pieces.map((p) => p.text).join(" ")).toBe(input.text);
  });

  it("never cuts a surrogate pair", () => {
    const text = "😀".repeat(30);
    for (const p of splitSignalText({ text, styles: [] }, 17)) expect(p.text).toMatch(/^(😀)+$/u);
  });
});

describe("SseParser", () => {
  it("reads events split anywhere and remembers the last id", () => {
    const p = new SseParser();
    const wire =
      'id:1-1\nevent:receive\ndata:{"a":1}\n\n:\nid:1-2\r\nevent: receive\r\ndata: {"b":\r\ndata:2}\r\n\r\n';
    const events = [...wire].flatMap((c) => p.push(c));
    expect(events).toEqual([
      { event: "receive", data: '{"a":1}', id: "1-1" },
      { event: "receive", data: '{"b":\n2}', id: "1-2" },
    ]);
    expect(p.lastEventId).toBe("1-2");
  });

  it("ignores comments and blank lines and keeps a half event for later", () => {
    const p = new SseParser();
    expect(p.push(":keepalive\n\n\ndata:x")).toEqual([]);
    expect(p.lastEventId).toBeUndefined();
    expect(p.push("\n\n")).toEqual([{ event: "message", data: "x" }]);
  });
});
