import { describe, expect, it } from "vitest";
import {
  escapeHtml,
  markdownToTelegramHtml,
  telegramHtmlVisibleText,
} from "../../../src/gateway/platforms/telegram-format.js";
import { parseTelegramHtml } from "../../support/telegram-emulator.js";

const cases: Array<[string, string, string]> = [
  ["plain text", "hello world", "hello world"],
  ["escapes & < >", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"],
  ["bold, italic, strikethrough", "**b** *i* _j_ ~~s~~", "<b>b</b> <i>i</i> <i>j</i> <s>s</s>"],
  ["nested emphasis", "**bold _and italic_**", "<b>bold <i>and italic</i></b>"],
  ["inline code is escaped, not formatted", "`<b>**x**</b>`", "<code>&lt;b&gt;**x**&lt;/b&gt;</code>"],
  [
    "fenced code with language",
    "```python\nif a < b:\n    pass\n```",
    '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>',
  ],
  ["fenced code without language", "```\nx & y\n```", "<pre>x &amp; y</pre>"],
  [
    "odd language names are cleaned",
    '```c++ "evil"\nx\n```',
    '<pre><code class="language-c++">x</code></pre>',
  ],
  [
    "link with query string",
    "[docs](https://e.com/?a=1&b=2)",
    '<a href="https://e.com/?a=1&amp;b=2">docs</a>',
  ],
  ["quote in href", '[x](https://e.com/"q")', '<a href="https://e.com/&quot;q&quot;">x</a>'],
  ["relative link becomes text", "[readme](docs/README.md)", "readme"],
  ["javascript link becomes text", "[click](javascript:alert(1))", "click"],
  [
    "bare URL",
    "see https://example.com now",
    'see <a href="https://example.com">https://example.com</a> now',
  ],
  ["image becomes a link", "![chart](https://e.com/c.png)", '<a href="https://e.com/c.png">chart</a>'],
  ["heading is bold", "# Title\n\nBody", "<b>Title</b>\n\nBody"],
  ["setext heading", "Title\n=====", "<b>Title</b>"],
  ["bullet list", "- one\n- two", "• one\n• two"],
  ["nested list", "- a\n  - b\n    - c", "• a\n  • b\n    • c"],
  ["numbered list keeps start", "3. three\n4. four", "3. three\n4. four"],
  ["task list", "- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"],
  ["list item with formatting", "- **key**: `value`", "• <b>key</b>: <code>value</code>"],
  ["blockquote", "> quoted *text*", "<blockquote>quoted <i>text</i></blockquote>"],
  ["nested blockquote flattened", "> a\n> > b", "<blockquote>a\nb</blockquote>"],
  ["horizontal rule", "a\n\n---\n\nb", "a\n\n——————\n\nb"],
  ["table as monospace", "| k | v |\n|---|---|\n| a | **1** |", "<pre>k | v\n--+--\na | 1</pre>"],
  [
    "raw html is shown literally",
    "<b>hi</b> <script>x</script>",
    "&lt;b&gt;hi&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;",
  ],
  ["html line break", "a<br>b", "a\nb"],
  ["unclosed bold stays literal", "**not closed", "**not closed"],
  [
    "unclosed code fence runs to the end",
    "```js\nlet a = 1 < 2",
    '<pre><code class="language-js">let a = 1 &lt; 2</code></pre>',
  ],
  ["stray asterisks and underscores", "2 * 3 * 4 and snake_case_name", "2 * 3 * 4 and snake_case_name"],
  ["backslash escapes", "\\*not italic\\*", "*not italic*"],
  ["line breaks inside a paragraph kept", "line one\nline two", "line one\nline two"],
  ["blank input", "  \n ", ""],
  ["unicode and emoji", "héllo 👋 **wörld**", "héllo 👋 <b>wörld</b>"],
  ["a line of asterisks is a rule", "****", "——————"],
];

describe("markdownToTelegramHtml", () => {
  it.each(cases)("%s", (_name, input, expected) => {
    expect(markdownToTelegramHtml(input)).toBe(expected);
  });

  it.each(cases)("%s: Telegram's HTML parser accepts the output", (_name, input) => {
    expect(parseTelegramHtml(markdownToTelegramHtml(input))).not.toHaveProperty("error");
  });

  it("never throws and stays balanced on hostile input", () => {
    const hostile = [
      "**_~~`",
      "[[[[]]]]((((",
      "<<<>>>&&&",
      "> > > > deep",
      "```\n```\n```",
      "- \n-\n  -",
      "| a |\n|---|\n| `|` |",
      "\u0000\u0001 control",
      "*".repeat(5000),
      "[x](https://e.com/<script>)",
      "&lt;already escaped&gt;",
    ];
    for (const input of hostile) {
      const html = markdownToTelegramHtml(input);
      expect(parseTelegramHtml(html), input).not.toHaveProperty("error");
    }
  });

  it("is checked by a parser that does reject broken HTML", () => {
    for (const bad of [
      "<b>open",
      "<i>x</b>",
      "<div>x</div>",
      "a < b",
      "<pre><b>x</b></pre>",
      "<a>no href</a>",
    ]) {
      expect(parseTelegramHtml(bad), bad).toHaveProperty("error");
    }
  });

  it("keeps already-escaped entities visible as written", () => {
    expect(telegramHtmlVisibleText(markdownToTelegramHtml("&lt;tag&gt;"))).toBe("&lt;tag&gt;");
  });
});

describe("helpers", () => {
  it("escapeHtml escapes only what Telegram needs", () => {
    expect(escapeHtml(`<a href="x">&'</a>`)).toBe(`&lt;a href="x"&gt;&amp;'&lt;/a&gt;`);
  });

  it("telegramHtmlVisibleText counts what the reader sees", () => {
    const html = markdownToTelegramHtml("**a** `<b>` [l](https://e.com)");
    expect(telegramHtmlVisibleText(html)).toBe("a <b> l");
  });
});
