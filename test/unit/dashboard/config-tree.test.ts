/** The Config page's sections: rows marked changed, set in the file or from the environment. */
import { describe, expect, it } from "vitest";
import {
  type ConfigAnswer,
  editText,
  isSecretSetting,
  leaves,
  sectionsOf,
  showValue,
} from "../../../src/dashboard/web/pages/config-tree.js";

function answer(config: Record<string, unknown>, defaults: Record<string, unknown>): ConfigAnswer {
  return {
    path: "/h/config.yaml",
    exists: true,
    warnings: [],
    config,
    defaults,
    user_keys: ["agent", "agent.max_turns"],
    env_keys: ["terminal.backend"],
    choices: {},
    raw: "",
    env_file: { path: "/h/.env", exists: false, names: [] },
    not_editable: { sections: ["dashboard"], env: "" },
  };
}

describe("sectionsOf", () => {
  it("groups leaves by section, people's first sections first and top-level values last", () => {
    const sections = sectionsOf(
      answer(
        {
          timezone: "UTC",
          zeta: { a: 1 },
          agent: { max_turns: 33, tags: ["a"] },
          model: { default: "m", extra: {} },
          terminal: { backend: "docker" },
        },
        { timezone: "", zeta: { a: 1 }, agent: { max_turns: 90, tags: ["a"] }, model: { default: "" } },
      ),
    );
    expect(sections.map((s) => s.name)).toEqual(["model", "agent", "terminal", "zeta", "general"]);
    const rows = Object.fromEntries(sections.flatMap((s) => s.rows).map((r) => [r.key, r]));
    expect(rows["agent.max_turns"]).toMatchObject({ value: 33, fallback: 90, changed: true, inFile: true });
    expect(rows["agent.tags"]).toMatchObject({ changed: false, inFile: false });
    expect(rows["model.extra"]).toMatchObject({ value: {}, fallback: undefined, changed: true });
    expect(rows["terminal.backend"]).toMatchObject({ fromEnv: true, changed: true });
    expect(rows["zeta.a"]?.changed).toBe(false);
    expect(rows["timezone"]?.changed).toBe(true);
  });

  it("treats lists and empty mappings as single values", () => {
    expect(leaves({ a: { b: [1, 2], c: {} } })).toEqual([
      [
        ["a", "b"],
        [1, 2],
      ],
      [["a", "c"], {}],
    ]);
  });
});

describe("values and secrets", () => {
  it("shows and edits values the way hermes config set reads them", () => {
    expect(showValue("")).toBe('""');
    expect(showValue(null)).toBe("–");
    expect(showValue(["a", "b"])).toBe('["a","b"]');
    expect(editText(["a", "b"])).toBe('["a","b"]');
    expect(editText(12)).toBe("12");
  });

  it("knows a secret by its masked value or its name, not by a plural like max_tokens", () => {
    expect(isSecretSetting("model.api_key", "")).toBe(true);
    expect(isSecretSetting("gateway.telegram.bot_token", "")).toBe(true);
    expect(isSecretSetting("other.thing", "sk-o****")).toBe(true);
    expect(isSecretSetting("model.max_tokens", 100)).toBe(false);
    expect(isSecretSetting("display.hot_key", "F2")).toBe(false);
  });
});
