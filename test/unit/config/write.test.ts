// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ConfigError } from "../../../src/config/errors.js";
import { loadConfig } from "../../../src/config/load.js";
import { getConfigValue, setConfigValue } from "../../../src/config/write.js";
import { useTempHome, writeConfig } from "./helpers.js";

const COMMENTED = `# My Hermes setup
model:
  default: anthropic/claude-sonnet-4  # main model
  provider: openrouter

# Agent behaviour
agent:
  max_turns: 90 # keep it modest
  reasoning_effort: medium

toolsets:
- hermes-cli
- web
`;

describe("setConfigValue", () => {
  const tempHome = useTempHome();
  const read = (home: string) => readFileSync(join(home, "config.yaml"), "utf8");

  it("edits one value and keeps comments, blank lines and key order", () => {
    const home = tempHome();
    writeConfig(home, COMMENTED);
    const result = setConfigValue(home, "agent.max_turns", "50");
    expect(result).toMatchObject({ target: "config", key: "agent.max_turns", value: 50 });
    expect(read(home)).toBe(
      COMMENTED.replace("max_turns: 90 # keep it modest", "max_turns: 50 # keep it modest"),
    );
  });

  it("adds new keys and sections after the existing ones", () => {
    const home = tempHome();
    writeConfig(home, COMMENTED);
    setConfigValue(home, "agent.save_trajectories", "yes");
    setConfigValue(home, "terminal.env_passthrough", "GITHUB_TOKEN, NPM_TOKEN");
    const text = read(home);
    expect(
      text.startsWith(
        COMMENTED.slice(0, COMMENTED.indexOf("toolsets:")).replace(
          "medium\n",
          "medium\n  save_trajectories: true\n",
        ),
      ),
    ).toBe(true);
    expect(text.endsWith("terminal:\n  env_passthrough:\n  - GITHUB_TOKEN\n  - NPM_TOKEN\n")).toBe(true);
    const { config } = loadConfig({ home, env: {} });
    expect(config.agent.save_trajectories).toBe(true);
    expect(config.terminal.env_passthrough).toEqual(["GITHUB_TOKEN", "NPM_TOKEN"]);
  });

  it("leaves every other byte of an unusually formatted file as written", () => {
    const home = tempHome();
    const original = [
      "model:    'old/model'     # pinned",
      "agent:",
      "    max_turns:   90      # four-space indent",
      "    disabled_toolsets:",
      "        - web",
      "        - browser",
      "display: {compact: false}   # flow",
      "# trailing notes",
      "",
    ].join("\n");
    writeConfig(home, original);
    setConfigValue(home, "model", "new/model");
    setConfigValue(home, "agent.max_turns", "12");
    setConfigValue(home, "agent.clarify_timeout", "60");
    setConfigValue(home, "agent.disabled_toolsets", "tts");
    setConfigValue(home, "memory.memory_char_limit", "3000");
    expect(read(home)).toBe(
      [
        "model:    'new/model'     # pinned",
        "agent:",
        "    max_turns:   12      # four-space indent",
        "    disabled_toolsets:",
        "        - tts",
        "    clarify_timeout: 60",
        "display: {compact: false}   # flow",
        "memory:",
        "    memory_char_limit: 3000",
        "# trailing notes",
        "",
      ].join("\n"),
    );
    expect(loadConfig({ home, env: {} }).config.agent).toMatchObject({ max_turns: 12, clarify_timeout: 60 });
  });

  it("creates config.yaml when missing", () => {
    const home = join(tempHome(), "nested", "home");
    setConfigValue(home, "display.show_cost", "true");
    expect(read(home)).toBe("display:\n  show_cost: true\n");
  });

  it("parses values to the type of the key's default", () => {
    const home = tempHome();
    setConfigValue(home, "toolsets", "[web, file]");
    setConfigValue(home, "compression.threshold", "0.7");
    setConfigValue(home, "model.context_length", "128000");
    setConfigValue(home, "custom_toolsets", '{"mine": {"tools": ["read_file"]}}');
    setConfigValue(home, "terminal.cwd", "2024");
    setConfigValue(home, "approvals.mode", "off");
    setConfigValue(home, "mcp_servers.fs.enabled", "false");
    const { config } = loadConfig({ home, env: {} });
    expect(config.toolsets).toEqual(["web", "file"]);
    expect(config.compression.threshold).toBe(0.7);
    expect(config.model.context_length).toBe(128000);
    expect(config.custom_toolsets).toEqual({ mine: { tools: ["read_file"] } });
    expect(config.terminal.cwd).toBe("2024");
    expect(config.approvals.mode).toBe("off");
    expect(config["mcp_servers"]).toEqual({ fs: { enabled: false } });
    expect(read(home)).toContain('cwd: "2024"');
    expect(read(home)).toContain('mode: "off"');
  });

  it("stores a ${VAR} reference as written and resolves it on load", () => {
    const home = tempHome();
    setConfigValue(home, "agent.max_turns", "${TURNS:-40}");
    expect(read(home)).toBe("agent:\n  max_turns: ${TURNS:-40}\n");
    expect(loadConfig({ home, env: {} }).config.agent.max_turns).toBe(40);
    expect(loadConfig({ home, env: { TURNS: "7" } }).config.agent.max_turns).toBe(7);
  });

  it.each([
    ["agent.max_turns", "ninety", 'expected a number for agent.max_turns, got "ninety"'],
    ["display.compact", "maybe", 'expected true or false for display.compact, got "maybe"'],
    ["custom_toolsets", "[a]", 'expected a mapping for custom_toolsets, got "[a]"'],
    [
      "agent.max_turns.deep",
      "1",
      "cannot set agent.max_turns.deep: agent.max_turns holds a number, not a section",
    ],
    ["agent..x", "1", 'invalid config key "agent..x": use a dotted name like agent.max_turns'],
    ["a.__proto__.b", "1", 'invalid config key "a.__proto__.b": "__proto__" cannot be a key'],
  ])("rejects %s=%s and leaves the file alone", (key, value, message) => {
    const home = tempHome();
    writeConfig(home, COMMENTED);
    expect(() => setConfigValue(home, key, value)).toThrow(message);
    expect(read(home)).toBe(COMMENTED);
  });

  it("refuses to touch a config.yaml that does not parse", () => {
    const home = tempHome();
    const broken = "agent:\n  max_turns: 5\n max_retries: [\n";
    writeConfig(home, broken);
    const before = readFileSync(join(home, "config.yaml"));
    const error = (() => {
      try {
        setConfigValue(home, "agent.max_turns", "6");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).line).toBe(3);
    expect(readFileSync(join(home, "config.yaml")).equals(before)).toBe(true);
  });

  it("refuses duplicate keys instead of guessing which one to change", () => {
    const home = tempHome();
    writeConfig(home, "agent:\n  max_turns: 5\n  max_turns: 6\n");
    expect(() => setConfigValue(home, "agent.max_turns", "7")).toThrow(/line 3: duplicate key "max_turns"/);
  });

  it("routes an UPPER_CASE key to .env with mode 0600 and leaves config.yaml alone", () => {
    const home = tempHome();
    writeConfig(home, COMMENTED);
    const result = setConfigValue(home, "OPENROUTER_API_KEY", "sk-or-secret");
    expect(result).toMatchObject({ target: "env", path: join(home, ".env"), key: "OPENROUTER_API_KEY" });
    expect(readFileSync(join(home, ".env"), "utf8")).toBe("OPENROUTER_API_KEY=sk-or-secret\n");
    if (process.platform !== "win32") expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(read(home)).toBe(COMMENTED);
  });

  it("keeps model.api_key in config.yaml but hints at .env", () => {
    const home = tempHome();
    const result = setConfigValue(home, "model.api_key", "sk-123");
    expect(result.target).toBe("config");
    expect(result.hint).toMatch(/plain text.*\.env/);
    expect(existsSync(join(home, ".env"))).toBe(false);
  });

  it("sets `model` as model.default, or keeps a string-form model a string", () => {
    const home = tempHome();
    expect(setConfigValue(home, "model", "openai/gpt-5").key).toBe("model.default");
    expect(read(home)).toBe("model:\n  default: openai/gpt-5\n");
    writeConfig(home, "model: old/model # pinned\n");
    expect(setConfigValue(home, "model", "new/model").key).toBe("model");
    expect(read(home)).toBe("model: new/model # pinned\n");
    setConfigValue(home, "model.provider", "openrouter");
    expect(loadConfig({ home, env: {} }).config.model).toMatchObject({
      default: "new/model",
      provider: "openrouter",
    });
  });

  it("fills a blank section and keeps flow-style lists in flow style", () => {
    const home = tempHome();
    writeConfig(home, "agent:\ntoolsets: [hermes-cli]\n");
    setConfigValue(home, "agent.max_turns", "10");
    setConfigValue(home, "toolsets", "web,file");
    expect(read(home)).toBe("agent:\n  max_turns: 10\ntoolsets: [ web, file ]\n");
  });

  it("keeps indented lists indented", () => {
    const home = tempHome();
    writeConfig(home, "toolsets:\n  - web\n");
    setConfigValue(home, "agent.disabled_toolsets", "a,b");
    expect(read(home)).toBe("toolsets:\n  - web\nagent:\n  disabled_toolsets:\n    - a\n    - b\n");
  });

  it("refuses to overwrite a scalar that is in the way of a nested key", () => {
    const home = tempHome();
    writeFileSync(join(home, "config.yaml"), "extra: 5\n");
    expect(() => setConfigValue(home, "extra.inner", "1")).toThrow(
      "cannot set extra.inner: extra is 5 in config.yaml, not a section",
    );
  });
});

describe("getConfigValue", () => {
  it("reads nested keys and list items", () => {
    const config = defaultConfig();
    expect(getConfigValue(config, "tool_loop_guardrails.warn_after.exact_failure")).toBe(2);
    expect(getConfigValue(config, "agent")).toEqual(config.agent);
    expect(getConfigValue(config, "toolsets.0")).toBe("hermes-cli");
    expect(getConfigValue(config, "model.context_length")).toBeNull();
    expect(getConfigValue(config, "agent.nope")).toBeUndefined();
    expect(getConfigValue(config, "agent.max_turns.deeper")).toBeUndefined();
    expect(getConfigValue(config, "constructor")).toBeUndefined();
  });
});

describe("setConfigValue range checks", () => {
  const tempHome = useTempHome();

  it("refuses a guardrail threshold below 1 and leaves config.yaml as it was", () => {
    const home = tempHome();
    writeConfig(home, "tool_loop_guardrails:\n  warn_after:\n    exact_failure: 3\n");
    let error: unknown;
    try {
      setConfigValue(home, "tool_loop_guardrails.warn_after.exact_failure", "0");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      "tool_loop_guardrails.warn_after.exact_failure must be a whole number of at least 1, got 0",
    );
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(
      "tool_loop_guardrails:\n  warn_after:\n    exact_failure: 3\n",
    );
    setConfigValue(home, "tool_loop_guardrails.hard_stop_after.exact_failure", "1");
    expect(loadConfig({ home, env: {} }).config.tool_loop_guardrails.hard_stop_after.exact_failure).toBe(1);
  });
});
