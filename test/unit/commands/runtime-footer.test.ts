/**
 * display.runtime_footer for gateway replies: off unless enabled, per-platform overrides, upstream's
 * fields in the configured order, fields without data left out, unknown names ignored.
 */
import { describe, expect, it } from "vitest";
import { footerSettings, formatFooter, runtimeFooter } from "../../../src/commands/runtime-footer.js";

const facts = {
  model: "openai/gpt-5.4",
  contextTokens: 12_000,
  contextLength: 100_000,
  cwd: "/home/ann/project",
  home: "/home/ann",
};

describe("runtime footer", () => {
  it("is off by default and when the block says so; the facts are then never read", () => {
    const never = () => {
      throw new Error("facts read while the footer is off");
    };
    expect(runtimeFooter(undefined, "telegram", never)).toBe("");
    expect(runtimeFooter({ runtime_footer: { fields: ["model"] } }, "telegram", never)).toBe("");
    expect(runtimeFooter({ runtime_footer: { enabled: "yes" } }, "telegram", never)).toBe("");
  });

  it("shows model, context % and the home-relative cwd, in upstream's default order", () => {
    expect(runtimeFooter({ runtime_footer: { enabled: true } }, "telegram", () => facts)).toBe(
      "gpt-5.4 · 12% · ~/project",
    );
  });

  it("follows the configured order, ignores unknown fields and leaves out fields without data", () => {
    expect(formatFooter(facts, ["cwd", "bogus", "MODEL"])).toBe("~/project · gpt-5.4");
    expect(formatFooter({ ...facts, contextLength: null }, ["model", "context_pct"])).toBe("gpt-5.4");
    expect(formatFooter({ ...facts, contextTokens: 500_000 }, ["context_pct"])).toBe("100%");
    expect(formatFooter({ ...facts, cwd: "/home/annex/x" }, ["cwd"])).toBe("/home/annex/x");
    expect(formatFooter({ ...facts, model: "", cwd: "" }, ["model", "cwd"])).toBe("");
  });

  it("a platform's own block overrides the global one, either way", () => {
    const display = {
      runtime_footer: { enabled: true, fields: ["model"] },
      platforms: {
        slack: { runtime_footer: { enabled: false } },
        discord: { runtime_footer: { fields: ["cwd"] } },
      },
    };
    expect(footerSettings(display, "telegram")).toEqual({ enabled: true, fields: ["model"] });
    expect(footerSettings(display, "slack").enabled).toBe(false);
    expect(footerSettings(display, "discord")).toEqual({ enabled: true, fields: ["cwd"] });
    const onlyTelegram = { platforms: { telegram: { runtime_footer: { enabled: true } } } };
    expect(footerSettings(onlyTelegram, "telegram").enabled).toBe(true);
    expect(footerSettings(onlyTelegram, "slack").enabled).toBe(false);
  });
});
