import { describe, expect, it } from "vitest";
import {
  acpChildEnv,
  COPILOT_ACP_DEFAULT_ARGS,
  copilotAcpLaunch,
  splitArgs,
} from "../../../../src/ai/transports/acp-launch.js";
import { deprecatedHint } from "../../../../src/ai/transports/acp-process.js";
import {
  acpPromptBlocks,
  renderAcpPrompt,
  ToolCallTextSplitter,
} from "../../../../src/ai/transports/acp-prompt.js";

const KNOWN = new Set(["terminal", "read_file"]);

/** Pushes `pieces` in order; returns what streamed and what `finish` gave. */
function run(pieces: string[]) {
  const splitter = new ToolCallTextSplitter();
  const streamed = pieces.map((p) => splitter.push(p)).join("");
  const done = splitter.finish(KNOWN);
  return {
    streamed,
    ...done,
    names: done.calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
  };
}

describe("ToolCallTextSplitter", () => {
  it("streams plain text as it comes and drops only trailing whitespace", () => {
    const out = run(["Hello ", "world", ".\n"]);
    expect(out.streamed).toBe("Hello world.");
    expect(out.content).toBe("Hello world.");
    expect(out.calls).toEqual([]);
  });

  it("never streams a tool-call tag split across pieces, and returns the call", () => {
    const out = run([
      "Checking.\n<tool",
      "_call>",
      '{"name": "terminal", "arguments": {"command": "ls"}}',
      "</tool_call>",
    ]);
    expect(out.streamed).toBe("Checking.");
    expect(out.names).toEqual([["terminal", { command: "ls" }]]);
    expect(out.content).toBe("Checking.");
    expect(out.rest).toBe("");
  });

  it("takes the OpenAI function shape with arguments as a JSON string, and several blocks", () => {
    const block = (id: string, cmd: string) =>
      `<tool_call>${JSON.stringify({ id, type: "function", function: { name: "terminal", arguments: JSON.stringify({ command: cmd }) } })}</tool_call>`;
    const out = run([`${block("a", "pwd")}\n${block("b", "date")}`]);
    expect(out.streamed).toBe("");
    expect(out.names).toEqual([
      ["terminal", { command: "pwd" }],
      ["terminal", { command: "date" }],
    ]);
    expect(out.content).toBe("");
  });

  it("a look-alike that is not the tag still streams", () => {
    const out = run(["a <tool", "s> b <tool_cal", "ling>"]);
    expect(out.streamed).toBe("a <tools> b <tool_calling>");
    expect(out.calls).toEqual([]);
  });

  it("a broken block is kept as text, so nothing the agent wrote is lost", () => {
    const out = run(["Trying: <tool_call>{not json</tool_call>"]);
    expect(out.calls).toEqual([]);
    expect(out.streamed + out.rest).toBe("Trying: <tool_call>{not json</tool_call>");
    expect(out.content).toContain("<tool_call>{not json</tool_call>");
  });

  it("text after a call is kept as text", () => {
    const out = run([
      '<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>\nThen I will summarise.',
    ]);
    expect(out.names).toEqual([["read_file", { path: "a.txt" }]]);
    expect(out.content).toBe("Then I will summarise.");
  });

  it("an answer that is one bare JSON call to a known tool is a call; JSON about something else is an answer", () => {
    const call = run(['{"name": "terminal", ', '"arguments": {"command": "uptime"}}']);
    expect(call.streamed).toBe("");
    expect(call.names).toEqual([["terminal", { command: "uptime" }]]);
    const answer = run(['{"name": "Ada", "arguments": {"age": 36}}']);
    expect(answer.calls).toEqual([]);
    expect(answer.rest).toBe('{"name": "Ada", "arguments": {"age": 36}}');
    expect(answer.content).toBe('{"name": "Ada", "arguments": {"age": 36}}');
  });
});

describe("renderAcpPrompt", () => {
  it("carries the tools, every turn with its calls and results, and the instruction to use Hermes's tools", () => {
    const prompt = renderAcpPrompt({
      tools: [
        {
          type: "function",
          function: { name: "terminal", description: "Run a command", parameters: { type: "object" } },
        },
      ],
      messages: [
        { role: "system", content: "You are Hermes." },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:x" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", name: "terminal", content: "a.txt" },
      ],
    });
    expect(prompt).toContain('<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>');
    expect(prompt).toContain(
      '[{"name":"terminal","description":"Run a command","parameters":{"type":"object"}}]',
    );
    expect(prompt).toContain("System:\nYou are Hermes.");
    expect(prompt).toContain("User:\nlook\n[an image, not shown to this model]");
    expect(prompt).toContain(
      'Assistant:\n<tool_call>{"id":"c1","name":"terminal","arguments":{"command":"ls"}}</tool_call>',
    );
    expect(prompt).toContain("Tool result (terminal, call c1):\na.txt");
    expect(prompt.trimEnd().endsWith("answer the latest message.")).toBe(true);
  });

  it("sends data-URL images as image blocks when the agent takes images, and says so in the text", () => {
    const messages = [
      {
        role: "user" as const,
        content: [
          { type: "text" as const, text: "what is this?" },
          { type: "image_url" as const, image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url" as const, image_url: { url: "https://example.com/cat.png" } },
        ],
      },
    ];
    const blocks = acpPromptBlocks({ messages }, true);
    expect(blocks.slice(1)).toEqual([{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }]);
    expect(blocks[0]?.type === "text" && blocks[0].text).toContain(
      "what is this?\n[image 1, attached after this text]\n[an image, not shown to this model]",
    );
    const textOnly = acpPromptBlocks({ messages }, false);
    expect(textOnly).toHaveLength(1);
    expect(textOnly[0]?.type === "text" && textOnly[0].text).not.toContain("attached");
  });

  it("says so when there are no tools", () => {
    expect(renderAcpPrompt({ messages: [{ role: "user", content: "hi" }] })).toContain("offers no tools");
  });
});

describe("acp-launch", () => {
  it("defaults to copilot --acp --stdio; the HERMES_ variable beats COPILOT_CLI_PATH", () => {
    expect(copilotAcpLaunch({})).toEqual({ command: "copilot", args: [...COPILOT_ACP_DEFAULT_ARGS] });
    expect(copilotAcpLaunch({ COPILOT_CLI_PATH: "/opt/copilot" }).command).toBe("/opt/copilot");
    expect(
      copilotAcpLaunch({
        COPILOT_CLI_PATH: "/opt/copilot",
        HERMES_COPILOT_ACP_COMMAND: " /usr/local/bin/cp2 ",
      }).command,
    ).toBe("/usr/local/bin/cp2");
    expect(copilotAcpLaunch({ HERMES_COPILOT_ACP_ARGS: "   " }).args).toEqual(["--acp", "--stdio"]);
  });

  it("splits arguments as a shell would, without expanding anything", () => {
    expect(splitArgs(`--acp --model "gpt 5" 'a b' c\\ d $HOME "x\\"y"`)).toEqual([
      "--acp",
      "--model",
      "gpt 5",
      "a b",
      "c d",
      "$HOME",
      'x"y',
    ]);
    expect(splitArgs(`--x '' ""`)).toEqual(["--x", "", ""]);
  });

  it("the child's environment keeps PATH, HOME, locale and the CLI's own token, and drops every other secret", () => {
    const env = acpChildEnv({
      PATH: "/usr/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      COPILOT_GITHUB_TOKEN: "gho_abc",
      GH_TOKEN: "ghp_1",
      GITHUB_TOKEN: "ghp_2",
      NOUS_API_KEY: "k",
      DATABASE_PASSWORD: "p",
      SLACK_SIGNING_SECRET: "s",
      HERMES_DASHBOARD_SESSION_TOKEN: "t",
      SSH_AUTH_SOCK: "/tmp/agent.sock",
      MAX_TOKENS: "100",
      UNSET: undefined,
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      COPILOT_GITHUB_TOKEN: "gho_abc",
      SSH_AUTH_SOCK: "/tmp/agent.sock",
      MAX_TOKENS: "100",
    });
  });
});

describe("deprecatedHint", () => {
  it("names the deprecated gh copilot extension only when its banner says so", () => {
    expect(
      deprecatedHint("The gh-copilot extension has been deprecated in favor of the new Copilot CLI"),
    ).toMatch(/npm install -g @github\/copilot/);
    expect(deprecatedHint("gh-copilot: no commands will be executed")).not.toBe("");
    expect(deprecatedHint("migrated from gh-copilot; welcome")).toBe("");
    expect(deprecatedHint("this flag is deprecated")).toBe("");
  });
});
