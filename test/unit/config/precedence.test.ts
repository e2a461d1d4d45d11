import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { applyEnvironmentDefaults, isYoloMode } from "../../../src/config/precedence.js";

describe("applyEnvironmentDefaults", () => {
  const env = {
    HERMES_INFERENCE_MODEL: "openrouter/m",
    HERMES_MAX_ITERATIONS: "12",
    TERMINAL_TIMEOUT: "60",
    TERMINAL_CWD: "/work",
    TERMINAL_PERSISTENT_SHELL: "false",
    TERMINAL_ENV_PASSTHROUGH: "A, B",
  };

  it("fills keys from the environment", () => {
    const base = defaultConfig();
    const { config, applied, warnings } = applyEnvironmentDefaults(base, env);
    expect(config.model.default).toBe("openrouter/m");
    expect(config.agent.max_turns).toBe(12);
    expect(config.terminal).toMatchObject({
      timeout: 60,
      cwd: "/work",
      persistent_shell: false,
      env_passthrough: ["A", "B"],
    });
    expect(applied).toHaveLength(6);
    expect(warnings).toEqual([]);
    expect(base).toEqual(defaultConfig()); // input untouched
  });

  it("leaves keys the user set alone", () => {
    const { config, applied } = applyEnvironmentDefaults(
      defaultConfig(),
      env,
      new Set(["agent.max_turns", "terminal.cwd"]),
    );
    expect(config.agent.max_turns).toBe(90);
    expect(config.terminal.cwd).toBe(".");
    expect(applied).not.toContain("agent.max_turns");
  });

  it("ignores empty and unusable values with a warning", () => {
    const { config, warnings } = applyEnvironmentDefaults(defaultConfig(), {
      HERMES_MAX_ITERATIONS: "lots",
      HERMES_INFERENCE_MODEL: "",
    });
    expect(config.agent.max_turns).toBe(90);
    expect(config.model.default).toBe("");
    expect(warnings).toEqual([
      'ignoring HERMES_MAX_ITERATIONS: expected a number for agent.max_turns, got "lots"',
    ]);
  });
});

describe("isYoloMode", () => {
  it.each([
    ["1", true],
    ["true", true],
    ["YES", true],
    ["0", false],
    ["", false],
    [undefined, false],
  ])("HERMES_YOLO_MODE=%j → %s", (value, expected) => {
    expect(isYoloMode({ HERMES_YOLO_MODE: value })).toBe(expected);
  });
});
