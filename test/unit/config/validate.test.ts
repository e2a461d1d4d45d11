import { describe, expect, it } from "vitest";
import {
  checkKey,
  checkValue,
  configTextProblems,
  findConfigProblems,
} from "../../../src/config/validate.js";

describe("checkKey", () => {
  it.each([
    ["agent.max_turn", "agent.max_turns"],
    ["agnet", "agent"],
    ["agnet.max_turns", "agent"],
    ["display.show_reasonig", "display.show_reasoning"],
    ["tool_loop_guardrails.warn_after.exact_falure", "tool_loop_guardrails.warn_after.exact_failure"],
    ["limits.tool_output.max_byte", "limits.tool_output.max_bytes"],
    ["curator.backup.kep", "curator.backup.keep"],
  ])("%s is unknown, did you mean %s", (key, suggestion) => {
    expect(checkKey(key)).toMatchObject({ kind: "unknown_key", suggestion });
  });

  it("an unknown key with nothing close says so without guessing", () => {
    expect(checkKey("agent.zzzzzz")).toEqual({
      key: "agent.zzzzzz",
      kind: "unknown_key",
      message: 'unknown key "agent.zzzzzz": Hermes has no such setting in agent',
    });
    expect(checkKey("foo")?.suggestion).toBeUndefined();
  });

  it.each([
    "agent.max_turns",
    "agent.gateway_timeout",
    "agent.personalities.pirate",
    "model",
    "model.default",
    "mcp_servers.anything.deep.down",
    "providers.mine.base_url",
    "platform_toolsets.telegram",
    "display.runtime_footer.enabled",
    "display.platforms.telegram.streaming",
    "terminal.docker_env.FOO",
    "terminal.ssh_known_hosts",
    "browser.executable_path",
    "auxiliary.vision.model",
  ])("%s is known (or inside an open section)", (key) => {
    expect(checkKey(key)).toBeUndefined();
  });

  it("prototype names are not known keys", () => {
    expect(checkKey("agent.constructor")?.kind).toBe("unknown_key");
    expect(checkKey("__proto__")?.kind).toBe("unknown_key");
    expect(checkKey("agent.hasOwnProperty")?.kind).toBe("unknown_key");
  });
});

describe("checkValue", () => {
  it("words are compared trimmed and in any case", () => {
    expect(checkValue("approvals.mode", " Smart ")).toBeUndefined();
    expect(checkValue("terminal.backend", "apptainer")).toBeUndefined();
    expect(checkValue("logging.level", "WARNING")).toBeUndefined();
  });

  it("a wrong word names the choices and the closest one", () => {
    expect(checkValue("terminal.backend", "dokcer")).toEqual({
      key: "terminal.backend",
      kind: "bad_value",
      message:
        'terminal.backend is "dokcer" (did you mean "docker"?); it takes one of: local, docker, podman, ssh, singularity, apptainer, daytona, modal',
      suggestion: "docker",
    });
    expect(checkValue("approvals.mode", true)?.kind).toBe("bad_value");
    expect(checkValue("approvals.mode", ["manual"])?.kind).toBe("bad_value");
  });

  it("keys without choices, null, and $VAR references are left to loading", () => {
    expect(checkValue("agent.max_turns", "anything")).toBeUndefined();
    expect(checkValue("approvals.mode", null)).toBeUndefined();
    // biome-ignore lint/suspicious/noTemplateCurlyInString: literal config syntax
    expect(checkValue("approvals.mode", "${MODE}")).toBeUndefined();
    expect(checkValue("constructor", "x")).toBeUndefined();
  });
});

describe("findConfigProblems / configTextProblems", () => {
  it("finds every problem in file order, with the key's line", () => {
    const text = [
      "model: some/model",
      "agent:",
      "  max_turn: 5",
      "  personalities:",
      "    mine: short",
      "approvals:",
      "  mode: always",
      "mcp_servers:",
      "  x:",
      "    whatever: 1",
      "my_notes: hi",
    ].join("\n");
    expect(configTextProblems(text, "config.yaml").map((p) => [p.key, p.kind, p.line])).toEqual([
      ["agent.max_turn", "unknown_key", 3],
      ["approvals.mode", "bad_value", 7],
      ["my_notes", "unknown_key", 11],
    ]);
  });

  it("an empty file, a list, or a scalar has nothing to report here", () => {
    expect(findConfigProblems(null)).toEqual([]);
    expect(findConfigProblems(["a"])).toEqual([]);
    expect(configTextProblems("", "config.yaml")).toEqual([]);
  });

  it("a section written as a scalar is left to the type check of loading", () => {
    expect(findConfigProblems({ agent: "fast" })).toEqual([]);
  });
});

describe("the shipped config template", () => {
  it("has no key or value the strict check rejects, even with every commented setting turned on", async () => {
    const { CONFIG_TEMPLATE } = await import("../../../src/config/template.js");
    expect(configTextProblems(CONFIG_TEMPLATE, "config.yaml")).toEqual([]);
    // Uncomment `# key: value` lines (keeping their indentation) to hold the examples to the rules too.
    const uncommented = CONFIG_TEMPLATE.split("\n")
      .map((line) => line.replace(/^(\s*)# ?([a-z_]+:(\s.*)?)$/, "$1$2"))
      .join("\n");
    expect(uncommented).not.toBe(CONFIG_TEMPLATE);
    expect(configTextProblems(uncommented, "config.yaml").map((p) => p.message)).toEqual([]);
  });
});
