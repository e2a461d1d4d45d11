import { describe, expect, it } from "vitest";
import {
  parseSkillMarkdown,
  SkillParseError,
  serializeSkill,
} from "../../../../src/knowledge/skills/frontmatter.js";

/** A SKILL.md as Python Hermes and hub skills write them. */
const PYTHON_SKILL = `---
name: google-workspace
description: Use Gmail, Calendar and Drive through the gws CLI with OAuth.
version: 1.0
author: Nous Research
license: MIT
platforms: [macos, linux]
allowed-tools: Bash(gws:*) Read
required_environment_variables:
  - name: GOOGLE_CLIENT_ID
    prompt: OAuth client id
    help: Create one in the Google Cloud console
    required_for: sending mail
  - GOOGLE_PROJECT
metadata:
  hermes:
    tags: [Google, Gmail, Calendar]
    category: productivity
    related_skills: [himalaya, notion]
    config:
      - key: gws.account
        description: Default account
---

# Google Workspace

## When to Use
Mail and calendar tasks.
`;

describe("parseSkillMarkdown", () => {
  it("reads a Python Hermes skill: metadata.hermes fallbacks, env vars, unknown keys kept", () => {
    const { frontmatter, body } = parseSkillMarkdown(PYTHON_SKILL);
    expect(frontmatter.name).toBe("google-workspace");
    expect(frontmatter.description).toBe("Use Gmail, Calendar and Drive through the gws CLI with OAuth.");
    expect(frontmatter.version).toBe("1.0");
    expect(frontmatter.platforms).toEqual(["macos", "linux"]);
    expect(frontmatter.tags).toEqual(["Google", "Gmail", "Calendar"]);
    expect(frontmatter.category).toBe("productivity");
    expect(frontmatter["allowed-tools"]).toBe("Bash(gws:*) Read");
    expect(frontmatter.required_environment_variables).toEqual([
      {
        name: "GOOGLE_CLIENT_ID",
        prompt: "OAuth client id",
        help: "Create one in the Google Cloud console",
        required_for: "sending mail",
      },
      { name: "GOOGLE_PROJECT" },
    ]);
    expect(frontmatter.metadata?.hermes?.related_skills).toEqual(["himalaya", "notion"]);
    expect(body.startsWith("\n# Google Workspace")).toBe(true);
  });

  it("prefers top-level tags and category over metadata.hermes, and reads comma-separated tags", () => {
    const text =
      "---\nname: a\ndescription: d\ntags: x, y\ncategory: top\nmetadata:\n  hermes:\n    tags: [z]\n    category: meta\n---\nbody\n";
    const { frontmatter } = parseSkillMarkdown(text);
    expect(frontmatter.tags).toEqual(["x", "y"]);
    expect(frontmatter.category).toBe("top");
  });

  it("tolerates a BOM, CRLF line endings and duplicate keys (last wins, as PyYAML)", () => {
    const text = "\uFEFF---\r\nname: first\r\nname: crlf-skill\r\ndescription: Works\r\n---\r\nBody\r\n";
    const { frontmatter, body } = parseSkillMarkdown(text);
    expect(frontmatter.name).toBe("crlf-skill");
    expect(body).toBe("Body\r\n");
  });

  it("explains a file without frontmatter", () => {
    expect(() => parseSkillMarkdown("# Just markdown\n", "/x/SKILL.md")).toThrow(
      /\/x\/SKILL\.md: no YAML frontmatter/,
    );
  });

  it("explains an unclosed frontmatter", () => {
    expect(() => parseSkillMarkdown("---\nname: a\ndescription: b\n")).toThrow(/not closed/);
  });

  it("reports invalid YAML with its line in the file", () => {
    const text = "---\nname: a\ndescription: [unclosed\nother: : x\n---\nbody\n";
    let error: unknown;
    try {
      parseSkillMarkdown(text, "s/SKILL.md");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SkillParseError);
    const parseError = error as SkillParseError;
    expect(parseError.message).toMatch(/^s\/SKILL\.md line \d+: invalid YAML in the frontmatter/);
    expect(parseError.line).toBeGreaterThanOrEqual(3);
  });

  it("requires a mapping, a name and a description", () => {
    expect(() => parseSkillMarkdown("---\n- a\n- b\n---\nbody\n")).toThrow(/must be a YAML mapping.*a list/);
    expect(() => parseSkillMarkdown("---\ndescription: d\n---\nbody\n")).toThrow(/no "name:" field/);
    expect(() => parseSkillMarkdown("---\nname: a\n---\nbody\n")).toThrow(/no "description:" field/);
    expect(() => parseSkillMarkdown("---\nname: a\ndescription: ''\n---\nbody\n")).toThrow(/description/);
  });

  it("falls back to the folder name and the first body line when reading leniently", () => {
    const { frontmatter } = parseSkillMarkdown(
      "---\nversion: 2\n---\n# Title\n\nFirst real line.\n",
      undefined,
      {
        fallbackName: "folder-name",
      },
    );
    expect(frontmatter.name).toBe("folder-name");
    expect(frontmatter.description).toBe("First real line.");
  });
});

describe("serializeSkill", () => {
  it("writes frontmatter and body that parse back to the same fields", () => {
    const text = serializeSkill(
      {
        name: "deploy",
        description: "Deploy the app: build, push, verify (long descriptions stay on one line) "
          .repeat(3)
          .trim(),
        tags: ["ops", "deploy"],
        metadata: { hermes: { related_skills: ["ci"] } },
      },
      "\n\n# Deploy\n\n1. Build.\n",
    );
    expect(text.startsWith("---\nname: deploy\n")).toBe(true);
    expect(text).toContain("---\n\n# Deploy\n\n1. Build.\n");
    expect(text.split("\n").filter((l) => l.startsWith("description:"))).toHaveLength(1);
    const back = parseSkillMarkdown(text);
    expect(back.frontmatter.tags).toEqual(["ops", "deploy"]);
    expect(back.frontmatter.metadata?.hermes?.related_skills).toEqual(["ci"]);
    expect(back.body.trim()).toBe("# Deploy\n\n1. Build.");
  });
});
