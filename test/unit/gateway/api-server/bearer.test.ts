import { describe, expect, it } from "vitest";
import { bearerMatches } from "../../../../src/gateway/api-server/http.js";

describe("bearerMatches", () => {
  it("accepts the configured key only, whichever key was checked before", () => {
    const a = "key-a-0123456789abcdef";
    const b = "key-b-fedcba9876543210";
    for (let i = 0; i < 3; i++) {
      expect(bearerMatches(`Bearer ${a}`, a)).toBe(true);
      expect(bearerMatches(`Bearer ${a}`, b)).toBe(false);
      expect(bearerMatches(`bearer   ${b}  `, b)).toBe(true);
      expect(bearerMatches(`Bearer ${b}`, a)).toBe(false);
    }
  });

  it("refuses a missing, empty, prefix-only or look-alike header", () => {
    const key = "key-a-0123456789abcdef";
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      `Basic ${key}`,
      `Bearer ${key}x`,
      `Bearer ${key.slice(0, -1)}`,
      key,
    ]) {
      expect(bearerMatches(header, key)).toBe(false);
    }
  });
});
