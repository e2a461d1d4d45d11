import { describe, expect, it } from "vitest";
import { scrubEnv } from "../../../src/util/env-scrub.js";

describe("scrubEnv", () => {
  it("drops a custom server's and LM Studio's keys from a helper process even when the user exported them", () => {
    const env = scrubEnv({
      CUSTOM_API_KEY: "custom-key-0123456789",
      LM_API_KEY: "lm-key-0123456789",
      OPENROUTER_API_KEY: "sk-or-0123456789",
      CUSTOM_PROMPT: "kept",
      PATH: "/usr/bin",
    });
    expect(env).toEqual({ CUSTOM_PROMPT: "kept", PATH: "/usr/bin" });
  });

  it("keeps a listed name for the helper that needs it", () => {
    expect(scrubEnv({ CUSTOM_API_KEY: "custom-key-0123456789" }, ["CUSTOM_API_KEY"])).toEqual({
      CUSTOM_API_KEY: "custom-key-0123456789",
    });
  });
});
