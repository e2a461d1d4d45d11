/**
 * The flat-manifest reader (no YAML library on a plugin's start) must agree with the YAML parser
 * on every text it accepts, and hand everything else to it: crafted edge cases, then a seeded
 * fuzz over manifest-like lines.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseManifest, readFlatYaml } from "../../../src/plugins/manifest.js";

function viaYaml(text: string): unknown {
  return parse(text) ?? {};
}

function agrees(text: string): boolean {
  const flat = readFlatYaml(text);
  if (flat === undefined) return true;
  let full: unknown;
  try {
    full = viaYaml(text);
  } catch {
    return false;
  }
  expect(flat, JSON.stringify(text)).toEqual(full);
  return true;
}

describe("readFlatYaml", () => {
  it("reads the common manifest without the YAML library", () => {
    const text =
      "# a guard\nname: guard\nversion: 1.2.3\ndescription: Blocks rm and friends (it's strict)\nentry: index.mjs\nkind: general\n";
    expect(readFlatYaml(text)).toEqual({
      name: "guard",
      version: "1.2.3",
      description: "Blocks rm and friends (it's strict)",
      entry: "index.mjs",
      kind: "general",
    });
    expect(parseManifest({ pluginYaml: text }, "guard").version).toBe("1.2.3");
  });

  it("hands every text whose meaning is not plain text to the YAML parser", () => {
    for (const text of [
      "version: 1.0", // a number: YAML reads 1
      "version: 2",
      "enabled: true",
      "entry: null",
      "entry: ~",
      'name: "quoted"',
      "name: 'single'",
      "name: a # comment",
      "description: Note: colons",
      "requires_env:\n  - TOKEN",
      "requires_env: [A, B]",
      "name: x\nname: y", // duplicate key: YAML refuses it
      "  name: indented",
      "---\nname: doc",
      "name: &anchor x",
      "name: !tag x",
      "name: |\n  block",
      "name: >\n  folded",
      "name: -dash",
      "name: .inf",
      "name: 1e5",
      "name: 0x1F",
      "name: +1",
      "\uFEFFname: bom",
      "name:\tx",
      "name:x",
    ]) {
      expect(readFlatYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it("agrees with the YAML parser on everything it accepts (seeded fuzz)", () => {
    let seed = 23;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const keys = ["name", "version", "description", "entry", "kind", "true", "x_1", "requires_env"];
    const words = [
      "guard",
      "1.2.3",
      "1.0",
      "7",
      "true",
      "yes",
      "no",
      "null",
      "~",
      "a b",
      "it's",
      '"q"',
      "x#y",
      "x #y",
      "a: b",
      "a:b",
      "[1]",
      "{a}",
      "(x)",
      "/p/q",
      "é",
      "2024-01-01",
      "0o17",
      "1_000",
      "&a",
      "*a",
      "!t",
      "|",
      ">",
      "%x",
      "@x",
      "`x`",
      " ",
      "",
    ];
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const lines: string[] = [];
      const count = 1 + Math.floor(rand() * 4);
      for (let j = 0; j < count; j++) {
        const roll = rand();
        if (roll < 0.1) lines.push(rand() < 0.5 ? "" : "# note");
        else {
          const key = keys[Math.floor(rand() * keys.length)] as string;
          const value = [0, 1]
            .slice(0, 1 + Math.floor(rand() * 2))
            .map(() => words[Math.floor(rand() * words.length)])
            .join(rand() < 0.5 ? " " : "");
          lines.push(`${key}:${rand() < 0.9 ? " " : ""}${value}${rand() < 0.1 ? "  " : ""}`);
        }
      }
      const text = lines.join(rand() < 0.2 ? "\r\n" : "\n");
      if (readFlatYaml(text) !== undefined) accepted++;
      expect(agrees(text)).toBe(true);
    }
    // The fuzz exercised the fast path, not only the fallback.
    expect(accepted).toBeGreaterThan(300);
  });
});
