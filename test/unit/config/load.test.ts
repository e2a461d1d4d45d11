// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ConfigError } from "../../../src/config/errors.js";
import { loadConfig, parseConfigText } from "../../../src/config/load.js";
import { useTempHome, writeConfig } from "./helpers.js";

const file = "/h/config.yaml";
const parse = (text: string, env: Record<string, string | undefined> = {}) =>
  parseConfigText(text, { file, env });

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  const tempHome = useTempHome();

  it("gives the defaults when config.yaml is missing", () => {
    const home = tempHome();
    const loaded = loadConfig({ home, env: {} });
    expect(loaded.exists).toBe(false);
    expect(loaded.config).toEqual(defaultConfig());
    expect(loaded.userKeys.size).toBe(0);
    expect(loaded.warnings).toEqual([]);
  });

  it("gives the defaults for an empty or comment-only file", () => {
    const home = tempHome();
    writeConfig(home, "# nothing yet\n");
    const loaded = loadConfig({ home, env: {} });
    expect(loaded.exists).toBe(true);
    expect(loaded.config).toEqual(defaultConfig());
  });

  it("applies flags over config.yaml over environment over defaults", () => {
    const home = tempHome();
    writeConfig(home, "agent:\n  max_turns: 40\n");
    const env = { HERMES_MAX_ITERATIONS: "10", HERMES_INFERENCE_MODEL: "env/model", TERMINAL_TIMEOUT: "30" };
    const loaded = loadConfig({ home, env, overrides: { terminal: { timeout: 5, cwd: undefined } } });
    expect(loaded.config.agent.max_turns).toBe(40); // config.yaml beats env
    expect(loaded.config.model.default).toBe("env/model"); // env beats defaults
    expect(loaded.config.terminal.timeout).toBe(5); // flag beats env
    expect(loaded.config.terminal.cwd).toBe("."); // undefined flag ignored
    expect(loaded.envKeys.sort()).toEqual(["model.default", "terminal.timeout"]);
  });

  it("does not read the environment layer when asked not to", () => {
    const home = tempHome();
    const loaded = loadConfig({ home, env: { HERMES_MAX_ITERATIONS: "10" }, applyEnvironment: false });
    expect(loaded.config.agent.max_turns).toBe(90);
  });
});

describe("parseConfigText", () => {
  it("deep-merges over the defaults: mappings merge, lists and scalars replace, unknown keys stay", () => {
    const { config, userKeys } = parse(
      [
        "agent:",
        "  max_turns: 12",
        "toolsets: [web]",
        "tool_loop_guardrails:",
        "  warn_after:",
        "    exact_failure: 7",
        "mcp_servers:",
        "  fs: {command: npx, args: [-y, server]}",
        "agent_extra: true",
      ].join("\n"),
    );
    expect(config.agent.max_turns).toBe(12);
    expect(config.agent.api_max_retries).toBe(3);
    expect(config.toolsets).toEqual(["web"]);
    expect(config.tool_loop_guardrails.warn_after).toEqual({
      exact_failure: 7,
      same_tool_failure: 3,
      idempotent_no_progress: 2,
    });
    expect(config["mcp_servers"]).toEqual({ fs: { command: "npx", args: ["-y", "server"] } });
    expect(config["agent_extra"]).toBe(true);
    expect([...userKeys].sort()).toEqual(
      [
        "agent",
        "agent.max_turns",
        "agent_extra",
        "mcp_servers",
        "mcp_servers.fs",
        "mcp_servers.fs.args",
        "mcp_servers.fs.command",
        "tool_loop_guardrails",
        "tool_loop_guardrails.warn_after",
        "tool_loop_guardrails.warn_after.exact_failure",
        "toolsets",
      ].sort(),
    );
  });

  it("normalises a string model to {default}", () => {
    const { config, userKeys } = parse('model: "anthropic/claude-sonnet-4"\n');
    expect(config.model).toEqual({ ...defaultConfig().model, default: "anthropic/claude-sonnet-4" });
    expect(userKeys.has("model.default")).toBe(true);
  });

  it("treats a blank value as unset", () => {
    const { config, userKeys } = parse("agent:\nterminal:\n  cwd:\n");
    expect(config.agent).toEqual(defaultConfig().agent);
    expect(config.terminal.cwd).toBe(".");
    expect(userKeys.has("terminal.cwd")).toBe(false);
  });

  it("substitutes ${VAR} and ${VAR:-default} from the environment", () => {
    const { config, warnings } = parse(
      [
        "model:",
        "  default: ${MODEL}",
        "  base_url: http://${HOST:-localhost}:8080/v1",
        "  api_key: ${MISSING_KEY}",
        "agent:",
        "  max_turns: ${TURNS}",
      ].join("\n"),
      { MODEL: "openrouter/x", TURNS: "33" },
    );
    expect(config.model.default).toBe("openrouter/x");
    expect(config.model.base_url).toBe("http://localhost:8080/v1");
    expect(config.model.api_key).toBe("");
    expect(config.agent.max_turns).toBe(33);
    expect(warnings).toEqual([
      "/h/config.yaml line 4: ${MISSING_KEY} in model.api_key is not set; using an empty string",
    ]);
  });

  it("reports broken YAML with the file and the right line", () => {
    const text = [
      "model:",
      "  default: x",
      "agent:",
      "  max_turns: 5",
      "  toolsets: [a, b",
      "display:",
      "  compact: true",
    ];
    const error = errorOf(() => parse(text.join("\n")));
    expect(error.file).toBe(file);
    expect(error.line).toBeGreaterThanOrEqual(5);
    expect(error.message).toMatch(/^\/h\/config\.yaml line \d+: invalid YAML: /);
    const badIndent = errorOf(() => parse("agent:\n  max_turns: 5\n max_retries: 3\n"));
    expect(badIndent.line).toBe(3);
    expect(badIndent.message).toContain("config.yaml line 3:");
  });

  it("names the line and dotted key of a value with the wrong type", () => {
    const text = ["# comment", "model: x", "", "agent:", "  max_turns: ninety"].join("\n");
    const error = errorOf(() => parse(text));
    expect(error.message).toBe('/h/config.yaml line 5: expected a number for agent.max_turns, got "ninety"');
    expect(error).toMatchObject({ line: 5, column: 14, key: "agent.max_turns" });
  });

  it.each([
    ["toolsets: hermes-cli", 1, 'expected a list for toolsets, got "hermes-cli"'],
    ["agent:\n  disabled_toolsets: {a: 1}", 2, "expected a list for agent.disabled_toolsets, got a mapping"],
    ["display:\n  compact: maybe", 2, 'expected true or false for display.compact, got "maybe"'],
    ["agent: 5", 1, "expected a mapping for agent, got 5"],
    ["terminal:\n  cwd: [a]", 2, "expected a string for terminal.cwd, got a list"],
    ["model:\n  context_length: lots", 2, 'expected a number or null for model.context_length, got "lots"'],
    [
      "limits:\n  tool_output: {max_bytes: true}",
      2,
      "expected a number for limits.tool_output.max_bytes, got true",
    ],
  ])("rejects %j", (text, line, message) => {
    const error = errorOf(() => parse(text));
    expect(error.line).toBe(line);
    expect(error.detail).toBe(message);
  });

  it("coerces where only the spelling differs", () => {
    const { config } = parse(
      [
        "agent:",
        '  max_turns: "25"',
        "display:",
        "  compact: yes",
        '  streaming: "off"',
        "approvals:",
        "  mode: off",
        "terminal:",
        "  cwd: 2024",
        "model:",
        "  context_length: 200000",
        "  max_tokens: null",
      ].join("\n"),
    );
    expect(config.agent.max_turns).toBe(25);
    expect(config.display.compact).toBe(true);
    expect(config.display.streaming).toBe(false);
    expect(config.approvals.mode).toBe("off");
    expect(config.terminal.cwd).toBe("2024");
    expect(config.model.context_length).toBe(200000);
    expect(config.model.max_tokens).toBeNull();
  });

  it("reads scalars as PyYAML does", () => {
    const { config } = parse("extra:\n  a: y\n  b: on\n  c: 2024-01-01\n  d: 0755\n");
    expect(config["extra"]).toEqual({ a: "y", b: true, c: "2024-01-01", d: 493 });
  });

  it("rejects a top-level list or scalar", () => {
    expect(errorOf(() => parse("- a\n- b\n")).message).toBe(
      "/h/config.yaml line 1: the top level must be a mapping of sections (key: value), got a list",
    );
    expect(errorOf(() => parse("just text\n")).detail).toMatch(/got a single value/);
  });

  it("accepts duplicate keys as PyYAML does (last wins) with a warning", () => {
    const { config, warnings } = parse("agent:\n  max_turns: 5\n  max_turns: 6\n");
    expect(config.agent.max_turns).toBe(6);
    expect(warnings).toEqual(['/h/config.yaml line 3: duplicate key "max_turns"; the last value wins']);
  });

  it("resolves anchors and merge keys", () => {
    const { config } = parse("base: &b\n  command: npx\nmcp_servers:\n  one:\n    <<: *b\n    args: [x]\n");
    expect(config["mcp_servers"]).toEqual({ one: { command: "npx", args: ["x"] } });
  });

  it("keeps a __proto__ key as data, never as a prototype", () => {
    const { config } = parse('custom_toolsets:\n  "__proto__": {tools: [x]}\n');
    expect(Object.getPrototypeOf(config.custom_toolsets)).toBe(Object.prototype);
    expect(Object.hasOwn(config.custom_toolsets, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>)["tools"]).toBeUndefined();
  });
});

describe("tool_loop_guardrails thresholds", () => {
  it.each([
    ["warn_after", "exact_failure", "0"],
    ["warn_after", "same_tool_failure", "-1"],
    ["hard_stop_after", "idempotent_no_progress", "0"],
    ["hard_stop_after", "exact_failure", "2.5"],
  ])("%s.%s: %s is an error naming the key, the value and its line", (threshold, signal, value) => {
    const error = errorOf(() =>
      parse(["tool_loop_guardrails:", `  ${threshold}:`, `    ${signal}: ${value}`].join("\n")),
    );
    expect(error.key).toBe(`tool_loop_guardrails.${threshold}.${signal}`);
    expect(error.message).toContain(
      `tool_loop_guardrails.${threshold}.${signal} must be a whole number of at least 1`,
    );
    expect(error.message).toContain(`got ${value}`);
    expect(error.line).toBe(3);
  });

  it("accepts 1 and larger", () => {
    const { config } = parse("tool_loop_guardrails:\n  hard_stop_after:\n    exact_failure: 1\n");
    expect(config.tool_loop_guardrails.hard_stop_after.exact_failure).toBe(1);
  });

  it("checks command-line overrides too", () => {
    const error = errorOf(() =>
      loadConfig({
        home: "/nonexistent-hermes-home",
        env: {},
        overrides: { tool_loop_guardrails: { warn_after: { exact_failure: 0 } } } as never,
      }),
    );
    expect(error.key).toBe("tool_loop_guardrails.warn_after.exact_failure");
  });
});
