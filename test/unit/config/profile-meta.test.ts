/** profile.yaml descriptions and distribution.yaml manifests, as upstream writes them. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  MAX_DESCRIPTION_CHARS,
  normalizeDescription,
  readDistribution,
  readProfileMeta,
  setProfileDescription,
} from "../../../src/config/profile-meta.js";

let dir: string;
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), "hermes-meta-")), "work");
  mkdirSync(dir);
});

describe("profile descriptions", () => {
  it("reads nothing from a profile without profile.yaml, then stores and reads one line", () => {
    expect(readProfileMeta(dir)).toEqual({ description: "", descriptionAuto: false });
    expect(setProfileDescription(dir, "  Reads source code\n\tand writes  findings.  ")).toBe(
      "Reads source code and writes findings.",
    );
    expect(readProfileMeta(dir).description).toBe("Reads source code and writes findings.");
  });

  it("keeps upstream's other keys and marks the text as the user's", () => {
    writeFileSync(
      join(dir, "profile.yaml"),
      "display_name: Coder\ndescription: old\ndescription_auto: true\n",
    );
    expect(readProfileMeta(dir)).toEqual({ description: "old", descriptionAuto: true });
    setProfileDescription(dir, "new");
    expect(parse(readFileSync(join(dir, "profile.yaml"), "utf8"))).toEqual({
      display_name: "Coder",
      description: "new",
      description_auto: false,
    });
  });

  it("clears with empty text", () => {
    setProfileDescription(dir, "something");
    expect(setProfileDescription(dir, "   ")).toBe("");
    expect(readProfileMeta(dir).description).toBe("");
  });

  it("removes control characters (an escape sequence cannot reach a terminal later) and refuses an essay", () => {
    expect(normalizeDescription("red\u001b[31m text\u0007")).toBe("red [31m text");
    expect(() => normalizeDescription("x".repeat(MAX_DESCRIPTION_CHARS + 1))).toThrow(/keep it to 500/);
  });

  it("refuses to rewrite a profile.yaml that does not parse, and a listing still reads it as empty", () => {
    writeFileSync(join(dir, "profile.yaml"), "description: [unclosed\n");
    expect(readProfileMeta(dir).description).toBe("");
    expect(() => setProfileDescription(dir, "x")).toThrow(/does not parse.*fix or remove it/);
    expect(readFileSync(join(dir, "profile.yaml"), "utf8")).toBe("description: [unclosed\n");
    writeFileSync(join(dir, "profile.yaml"), "- a list\n");
    expect(() => setProfileDescription(dir, "x")).toThrow(/not a mapping/);
  });
});

describe("distribution manifests", () => {
  it("is undefined for a profile made here", () => {
    expect(readDistribution(dir)).toBeUndefined();
  });

  it("reads upstream's manifest fields", () => {
    writeFileSync(
      join(dir, "distribution.yaml"),
      [
        "name: telemetry",
        "version: 0.2.0",
        'hermes_requires: ">=0.12.0"',
        "author: Kyle",
        "env_requires:",
        "  - name: OPENAI_API_KEY",
        "    description: OpenAI key",
        "  - name: GRAPH_URL",
        "    required: false",
        "    default: http://127.0.0.1:8000/sse",
        "  - not-a-mapping",
        "source: https://example.invalid/t.git",
        "installed_at: 2026-01-02T03:04:05Z",
      ].join("\n"),
    );
    const info = readDistribution(dir);
    expect(info).toMatchObject({
      name: "telemetry",
      version: "0.2.0",
      hermesRequires: ">=0.12.0",
      author: "Kyle",
      source: "https://example.invalid/t.git",
      installedAt: "2026-01-02T03:04:05Z",
    });
    expect(info?.envRequires).toEqual([
      { name: "OPENAI_API_KEY", description: "OpenAI key", required: true, default: undefined },
      { name: "GRAPH_URL", description: "", required: false, default: "http://127.0.0.1:8000/sse" },
    ]);
  });

  it("says what is wrong with a broken manifest", () => {
    writeFileSync(join(dir, "distribution.yaml"), "version: 1\n");
    expect(() => readDistribution(dir)).toThrow(/has no "name"/);
    writeFileSync(join(dir, "distribution.yaml"), "name: [x\n");
    expect(() => readDistribution(dir)).toThrow(/does not parse/);
  });
});
