import { describe, expect, it } from "vitest";
import {
  buildPromptLayers,
  DEFAULT_IDENTITY,
  needsToolUseEnforcement,
  type PromptLayersInput,
  platformHintNames,
  renderPrompt,
} from "../../../../src/agent/prompt/layers.js";
import { tokenCount } from "../../../../src/agent/prompt/size.js";
import { buildSystemPrompt } from "../../../../src/agent/prompt/system-prompt.js";

const GUIDED_TOOLS = [
  "terminal",
  "read_file",
  "patch",
  "todo",
  "memory",
  "session_search",
  "skills_list",
  "skill_view",
  "skill_manage",
];

function input(overrides: Partial<PromptLayersInput> = {}): PromptLayersInput {
  return {
    platform: "cli",
    os: "Linux 6.8.0",
    cwd: "/home/ada/project",
    shell: "/bin/bash",
    terminalBackend: "local",
    date: "2025-06-01",
    toolNames: ["read_file", "patch", "terminal"],
    ...overrides,
  };
}

describe("buildPromptLayers", () => {
  it("orders the layers identity, platform, environment, tool use, guidance, skills, context, memory", () => {
    const layers = buildPromptLayers(
      input({
        toolNames: GUIDED_TOOLS,
        personality: { name: "pirate", text: "Talk like a pirate." },
        skillsIndex: "## Skills\n- deploy: ship it",
        projectContext: { label: "AGENTS.md", content: "## Project context (AGENTS.md)\n\nUse pnpm." },
        memoryBlocks: ["USER PROFILE\nAda, likes tea", "MEMORY\nThe server is called atlas"],
      }),
    );
    expect(layers.map((l) => l.id)).toEqual([
      "identity",
      "platform",
      "environment",
      "tool_use",
      "guidance",
      "skills",
      "context",
      "memory",
    ]);
    expect(layers[0]?.text).toBe(`${DEFAULT_IDENTITY}\n\nTalk like a pirate.`);
    expect(layers[0]?.title).toBe("Identity (default) + personality pirate");
    expect(layers[7]?.text).toBe("USER PROFILE\nAda, likes tea\n\nMEMORY\nThe server is called atlas");
  });

  it("is byte-stable: the same input twice gives the same string", () => {
    const a = buildSystemPrompt(
      input({ toolNames: GUIDED_TOOLS, skillsIndex: "skills", memoryBlocks: ["m"] }),
    );
    const b = buildSystemPrompt(
      input({ toolNames: GUIDED_TOOLS, skillsIndex: "skills", memoryBlocks: ["m"] }),
    );
    expect(a).toBe(b);
    expect(a).toBe(
      renderPrompt(
        buildPromptLayers(input({ toolNames: GUIDED_TOOLS, skillsIndex: "skills", memoryBlocks: ["m"] })),
      ),
    );
  });

  it("joins layers with one blank line", () => {
    const layers = buildPromptLayers(input());
    expect(renderPrompt(layers)).toBe(layers.map((l) => l.text).join("\n\n"));
  });

  it("uses a caller's identity instead of the default", () => {
    const [identity] = buildPromptLayers(input({ identity: "You are Athena.", identitySource: "SOUL.md" }));
    expect(identity).toEqual({ id: "identity", title: "Identity (SOUL.md)", text: "You are Athena." });
    expect(buildPromptLayers(input({ identity: "   " }))[0]?.text).toBe(DEFAULT_IDENTITY);
  });

  it("leaves out tool guidance when there are no tools, and empty skills/context/memory layers", () => {
    const layers = buildPromptLayers(input({ toolNames: [], skillsIndex: "", memoryBlocks: ["  "] }));
    expect(layers.map((l) => l.id)).toEqual(["identity", "platform", "environment"]);
    expect(layers[2]?.text).toBe(
      "Environment: Linux 6.8.0; shell /bin/bash; working directory /home/ada/project. Today is 2025-06-01.",
    );
  });

  it("names the terminal backend only when the terminal tool is offered", () => {
    const env = (toolNames: string[]) =>
      buildPromptLayers(input({ toolNames, terminalBackend: "docker" })).find((l) => l.id === "environment")
        ?.text;
    expect(env(["terminal"])).toContain("terminal backend docker");
    expect(env(["read_file"])).not.toContain("backend");
  });

  it("gives guidance only for the tools offered", () => {
    const mentioned = (toolNames: string[]) => {
      const text = buildPromptLayers(input({ toolNames, model: "claude-sonnet-4" }))
        .filter((l) => l.id === "tool_use" || l.id === "guidance")
        .map((l) => l.text)
        .join("\n");
      return GUIDED_TOOLS.filter((name) => new RegExp(`\\b${name}\\b`).test(text));
    };
    expect(mentioned(["memory"])).toEqual(["memory"]);
    expect(mentioned(["session_search"])).toEqual(["session_search"]);
    expect(mentioned(["skill_view"])).toEqual(["skill_view"]);
    expect(mentioned(["skills_list", "skill_view", "skill_manage"])).toEqual([
      "skills_list",
      "skill_view",
      "skill_manage",
    ]);
    expect(mentioned(["read_file"])).toEqual([]);
    expect(mentioned(["read_file", "patch", "todo"])).toEqual(["patch", "todo"]);
    // Every subset: nothing outside the offered set is ever named.
    for (let mask = 0; mask < 1 << GUIDED_TOOLS.length; mask += 7) {
      const offered = GUIDED_TOOLS.filter((_, i) => mask & (1 << i));
      for (const name of mentioned(offered)) expect(offered).toContain(name);
    }
  });

  it("says 'procedures belong in skills' in the memory guidance only when skill_manage is offered", () => {
    const guidance = (toolNames: string[]) =>
      buildPromptLayers(input({ toolNames })).find((l) => l.id === "guidance")?.text;
    expect(guidance(["memory"])).not.toContain("skills");
    expect(guidance(["memory", "skill_manage"])).toContain("Procedures belong in skills");
  });

  it("adds the act-don't-describe enforcement for GPT-style models only", () => {
    const toolUse = (model: string, setting?: unknown) =>
      buildPromptLayers(
        input({ model, ...(setting !== undefined ? { toolUseEnforcement: setting } : {}) }),
      ).find((l) => l.id === "tool_use")?.text ?? "";
    expect(toolUse("openai/gpt-5")).toContain("make that tool call in the same reply");
    expect(toolUse("anthropic/claude-sonnet-4")).not.toContain("make that tool call in the same reply");
    expect(toolUse("anthropic/claude-sonnet-4", true)).toContain("make that tool call in the same reply");
    expect(toolUse("openai/gpt-5", false)).not.toContain("make that tool call in the same reply");
  });

  it("uses the platform's hint, a configured override, or none for an unknown platform", () => {
    const platform = (p: Partial<PromptLayersInput>) =>
      buildPromptLayers(input(p)).find((l) => l.id === "platform");
    expect(platform({ platform: "telegram" })?.text).toContain("Telegram");
    expect(platform({ platform: "cron" })?.text).toContain("nobody is watching");
    expect(platform({ platform: "telegram", platformHints: { telegram: "Custom hint." } })?.text).toBe(
      "Custom hint.",
    );
    expect(platform({ platform: "carrier-pigeon" })).toBeUndefined();
    for (const name of [
      "cli",
      "telegram",
      "discord",
      "slack",
      "whatsapp",
      "signal",
      "email",
      "cron",
      "api_server",
      "acp",
    ]) {
      expect(platformHintNames()).toContain(name);
    }
  });

  it("keeps the fixed text (no skills, context or memory) well under 600 tokens", () => {
    const text = buildSystemPrompt(
      input({ toolNames: GUIDED_TOOLS, model: "gpt-5", personality: { name: "x", text: "Be concise." } }),
    );
    expect(tokenCount(text)).toBeLessThan(600);
  });
});

describe("needsToolUseEnforcement", () => {
  it.each([
    ["gpt-5", true],
    ["openai/gpt-4o-mini", true],
    ["gpt-5-codex", true],
    ["codex-mini-latest", true],
    ["google/gemini-2.5-pro", true],
    ["gemma-3-27b", true],
    ["x-ai/grok-4", true],
    ["qwen/qwen3-coder", true],
    ["deepseek-chat", true],
    ["o3-mini", true],
    ["openai/o4-mini", true],
    ["anthropic/claude-sonnet-4", false],
    ["nousresearch/hermes-4-405b", false],
    ["llama-3.3-70b", false],
    ["", false],
  ])("auto: %s → %s", (model, expected) => {
    expect(needsToolUseEnforcement("auto", model)).toBe(expected);
    expect(needsToolUseEnforcement(undefined, model)).toBe(expected);
  });

  it("forces on and off, and matches a list of model-id fragments", () => {
    expect(needsToolUseEnforcement(true, "claude-opus-4")).toBe(true);
    expect(needsToolUseEnforcement("on", "claude-opus-4")).toBe(true);
    expect(needsToolUseEnforcement(false, "gpt-5")).toBe(false);
    expect(needsToolUseEnforcement("false", "gpt-5")).toBe(false);
    expect(needsToolUseEnforcement(["claude", "llama"], "meta/llama-4")).toBe(true);
    expect(needsToolUseEnforcement(["claude"], "gpt-5")).toBe(false);
  });
});
