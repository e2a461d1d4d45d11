import { describe, expect, it } from "vitest";
import {
  buildMessageBlocks,
  chatTypeOf,
  escapeSlackText,
  markdownToMrkdwn,
  mediaKindOf,
  SECTION_TEXT_LIMIT,
  slackCallError,
  slackToPlainText,
  splitForSections,
} from "../../../src/gateway/platforms/slack-format.js";

describe("markdownToMrkdwn", () => {
  const cases: [string, string, string][] = [
    ["bold", "a **b** c", "a *b* c"],
    ["bold with underscores", "__b__", "*b*"],
    ["italic with stars", "an *i* word", "an _i_ word"],
    ["italic with underscores", "an _i_ word", "an _i_ word"],
    ["bold italic", "***both***", "_*both*_"],
    ["strikethrough", "~~gone~~", "~gone~"],
    ["link", "[the docs](https://example.com/a)", "<https://example.com/a|the docs>"],
    ["link with query", "[q](https://x.io/?a=1&b=2)", "<https://x.io/?a=1&amp;b=2|q>"],
    ["link with a pipe in the URL", "[p](https://x.io/a|b)", "<https://x.io/a%7Cb|p>"],
    ["bare URL", "see https://example.com/x", "see <https://example.com/x>"],
    ["link whose label is the URL", "[https://e.com](https://e.com)", "<https://e.com>"],
    ["relative link", "[notes](./notes.md)", "notes (./notes.md)"],
    ["script link", "[x](javascript:alert(1))", "x (javascript:alert(1))"],
    ["image", "![chart](https://e.com/c.png)", "<https://e.com/c.png|chart>"],
    ["heading", "# Big title", "*Big title*"],
    ["heading with bold inside", "## The **real** title", "*The real title*"],
    ["heading then text", "### Steps\nDo it.", "*Steps*\n\nDo it."],
    ["code span kept", "run `npm *test*`", "run `npm *test*`"],
    ["code block kept, language dropped", "```ts\nconst a = **b**;\n```", "```\nconst a = **b**;\n```"],
    ["control characters escaped in prose", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"],
    [
      "control characters escaped in code",
      "`a<b>` and\n\n```\nx && y\n```",
      "`a&lt;b&gt;` and\n\n```\nx &amp;&amp; y\n```",
    ],
    ["already escaped entities are not doubled", "Q&amp;A &lt;here&gt;", "Q&amp;A &lt;here&gt;"],
    ["user mention kept", "ping <@U123ABC> now", "ping <@U123ABC> now"],
    ["channel mention kept", "see <#C024BE7LR|general>", "see <#C024BE7LR|general>"],
    ["special mention kept", "<!here> **deploy** done", "<!here> *deploy* done"],
    ["unknown tags escaped", "use <div> here", "use &lt;div&gt; here"],
    ["bullets", "- one\n- **two**", "• one\n• *two*"],
    ["nested bullets", "- a\n  - b\n    - c", "• a\n    ◦ b\n        ▪ c"],
    ["ordered list", "3. c\n4. d", "3. c\n4. d"],
    ["task list", "- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"],
    ["quote", "> wise *words*\n> indeed", "> wise _words_\n> indeed"],
    ["rule", "a\n\n---\n\nb", "a\n\n──────────\n\nb"],
    ["table becomes aligned code", "| k | v |\n|---|---|\n| **a** | 10 |", "```\nk | v\n--+---\na | 10\n```"],
    ["line breaks kept", "one\ntwo", "one\ntwo"],
    ["paragraphs kept", "one\n\ntwo", "one\n\ntwo"],
    ["unclosed bold stays literal", "**still typing", "**still typing"],
    ["unclosed fence runs to the end", "```\nlet x = 1 < 2", "```\nlet x = 1 &lt; 2\n```"],
    ["triple backticks inside code cannot close the fence", "````\na ``` b\n````", "```\na `\u200b`` b\n```"],
    ["unicode", "**héllo** 🌍 _日本_", "*héllo* 🌍 _日本_"],
    ["empty", "", ""],
  ];

  it.each(cases)("%s", (_name, input, expected) => {
    expect(markdownToMrkdwn(input)).toBe(expected);
  });

  it("never throws, even on odd input", () => {
    const odd = [
      "\u0000\u0001",
      "*".repeat(5000),
      "[".repeat(2000),
      "> ".repeat(500),
      "|a|\n|-|\n".repeat(50),
    ];
    for (const input of odd) expect(() => markdownToMrkdwn(input)).not.toThrow();
  });
});

describe("escapeSlackText", () => {
  it("escapes only &, < and >", () => {
    expect(escapeSlackText("*a* & <b> _c_")).toBe("*a* &amp; &lt;b&gt; _c_");
  });
});

describe("slackToPlainText", () => {
  const cases: [string, string][] = [
    ["Tom &amp; Jerry &lt;3 &gt;", "Tom & Jerry <3 >"],
    ["<https://example.com>", "https://example.com"],
    ["<https://example.com|example.com>", "https://example.com"],
    ["<https://example.com/a|the page>", "the page (https://example.com/a)"],
    ["<mailto:bob@example.com|bob@example.com>", "bob@example.com"],
    ["hi <@U123> in <#C1|general>", "hi <@U123> in <#C1|general>"],
    ["&amp;lt; stays literal", "&lt; stays literal"],
  ];
  it.each(cases)("%s", (input, expected) => {
    expect(slackToPlainText(input)).toBe(expected);
  });
});

describe("buildMessageBlocks", () => {
  it("puts the text in a section and each row of buttons in its own actions block", () => {
    const blocks = buildMessageBlocks("*Run it?*", [
      [
        { label: "Yes", data: "y", style: "primary" },
        { label: "No", data: "n", style: "danger" },
      ],
      [{ label: "Later", data: "l" }],
    ]);
    expect(blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: "*Run it?*" } },
      {
        type: "actions",
        block_id: "hermes_actions_0",
        elements: [
          {
            type: "button",
            action_id: "hermes_button_0_0",
            text: { type: "plain_text", text: "Yes", emoji: true },
            value: "y",
            style: "primary",
          },
          {
            type: "button",
            action_id: "hermes_button_0_1",
            text: { type: "plain_text", text: "No", emoji: true },
            value: "n",
            style: "danger",
          },
        ],
      },
      {
        type: "actions",
        block_id: "hermes_actions_1",
        elements: [
          {
            type: "button",
            action_id: "hermes_button_1_0",
            text: { type: "plain_text", text: "Later", emoji: true },
            value: "l",
          },
        ],
      },
    ]);
  });

  it("sends plain text as plain_text and splits long text over sections", () => {
    const long = `${"word ".repeat(1000)}end`;
    const blocks = buildMessageBlocks(long, [[{ label: "OK", data: "ok" }]], true);
    const sections = blocks.filter((b) => b.type === "section") as { text: { type: string; text: string } }[];
    expect(sections.length).toBeGreaterThan(1);
    expect(
      sections.every((s) => s.text.type === "plain_text" && s.text.text.length <= SECTION_TEXT_LIMIT),
    ).toBe(true);
    expect(sections.map((s) => s.text.text).join("")).toBe(long);
  });

  it("cuts over-long button labels to Slack's 75 characters", () => {
    const [actions] = buildMessageBlocks("", [[{ label: "x".repeat(200), data: "d" }]]) as {
      elements: { text: { text: string } }[];
    }[];
    expect(actions?.elements[0]?.text.text).toHaveLength(75);
  });
});

describe("splitForSections", () => {
  it("prefers line breaks and never splits an entity", () => {
    expect(splitForSections("", 10)).toEqual([]);
    expect(splitForSections("aaaa\nbbbb\ncccc", 10)).toEqual(["aaaa\nbbbb", "cccc"]);
    const pieces = splitForSections(`${"x".repeat(8)}&amp;yyyy`, 10);
    expect(pieces[0]).toBe("xxxxxxxx");
    expect(pieces.join("")).toBe(`${"x".repeat(8)}&amp;yyyy`);
  });
});

describe("Slack payload mappings", () => {
  it("maps channel_type to Hermes's chat type", () => {
    expect(["im", "mpim", "group", "channel", "app_home", undefined].map(chatTypeOf)).toEqual([
      "dm",
      "dm",
      "group",
      "group",
      undefined,
      undefined,
    ]);
  });

  it("maps files to media kinds, voice clips included", () => {
    const cases: [string | undefined, string | undefined, string][] = [
      ["image/png", undefined, "photo"],
      ["image/svg+xml", undefined, "document"],
      ["audio/webm", "slack_audio", "voice"],
      ["audio/mpeg", undefined, "audio"],
      ["video/mp4", undefined, "video"],
      ["application/pdf", undefined, "document"],
      [undefined, undefined, "document"],
    ];
    for (const [mime, subtype, kind] of cases) expect(mediaKindOf(mime, subtype)).toBe(kind);
  });
});

describe("slackCallError", () => {
  it("names the call, Slack's code and what to do", () => {
    const limited = slackCallError(
      { code: "slack_webapi_rate_limited_error", retryAfter: 30 },
      "chat.postMessage to C1",
    );
    expect(limited.retryAfterMs).toBe(30_000);
    expect(limited.message).toBe("Slack rate-limited chat.postMessage to C1; retry in 30s.");

    const scope = {
      code: "slack_webapi_platform_error",
      data: { error: "missing_scope", needed: "chat:write" },
    };
    expect(slackCallError(scope, "chat.postMessage to C1").message).toBe(
      "Slack refused chat.postMessage to C1: missing_scope (add the chat:write scope to the Slack app and reinstall it).",
    );

    const token = { code: "slack_webapi_platform_error", data: { error: "invalid_auth" } };
    expect(slackCallError(token, "apps.connections.open", "SLACK_APP_TOKEN").message).toMatch(
      /^Slack refused SLACK_APP_TOKEN: apps\.connections\.open answered invalid_auth\. Use an app-level token/,
    );

    const offline = new Error("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    expect(
      slackCallError({ code: "slack_webapi_request_error", original: offline }, "auth.test").message,
    ).toBe("Could not reach Slack for auth.test: fetch failed: ECONNREFUSED.");
    expect(slackCallError(new Error("boom"), "chat.update").message).toBe("Slack chat.update failed: boom.");
  });
});
