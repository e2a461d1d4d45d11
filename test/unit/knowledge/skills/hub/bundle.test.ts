import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  bundleName,
  checkBundleFiles,
  contentHash,
  HubError,
  readFrontmatter,
  safeRelPath,
  validateCategory,
  validateSkillName,
} from "../../../../../src/knowledge/skills/hub/bundle.js";
import { parseLock, pythonIsoTime } from "../../../../../src/knowledge/skills/hub/lock.js";
import { bundleFiles, skillMd } from "./helpers.js";

describe("skill names and paths", () => {
  it.each(["a", "my-skill", "tool_2", "v1.2", "x".repeat(64)])("accepts %s", (name) => {
    expect(validateSkillName(name)).toBe(name);
  });
  it.each(["", "My-Skill", "-x", ".x", "a/b", "a..b", "x".repeat(65), "spa ce", "ünï"])(
    "refuses %j",
    (name) => {
      expect(() => validateSkillName(name)).toThrow(HubError);
    },
  );
  it("categories are name-shaped segments", () => {
    expect(validateCategory("mlops/training")).toBe("mlops/training");
    expect(() => validateCategory("../x")).toThrow(/not a valid category/);
    expect(() => validateCategory("Dev Ops")).toThrow(HubError);
  });
  it.each([
    ["SKILL.md", "SKILL.md"],
    ["./references/a.md", "references/a.md"],
    ["references\\a.md", "references/a.md"],
    ["../etc/passwd", undefined],
    ["/etc/passwd", undefined],
    ["references/../../x", undefined],
    ["C:/x", undefined],
    ["a/b:stream", undefined],
  ])("safeRelPath(%j) = %j", (input, expected) => {
    expect(safeRelPath(input)).toBe(expected);
  });
});

describe("checkBundleFiles", () => {
  it("needs SKILL.md", () => {
    expect(() => checkBundleFiles(bundleFiles({ "README.md": "x" }))).toThrow(/no SKILL.md/);
  });
  it("refuses binaries outside assets/", () => {
    expect(() =>
      checkBundleFiles(bundleFiles({ "SKILL.md": skillMd("x"), "scripts/tool": Buffer.from([0, 1, 2, 3]) })),
    ).toThrow(/binary files are allowed only under assets/);
    expect(() =>
      checkBundleFiles(
        bundleFiles({ "SKILL.md": skillMd("x"), "assets/icon.png": Buffer.from([0, 1, 2, 3]) }),
      ),
    ).not.toThrow();
  });
  it("enforces size and count limits", () => {
    const limits = { maxFileBytes: 10, maxTotalBytes: 15, maxFiles: 2 };
    expect(() => checkBundleFiles(bundleFiles({ "SKILL.md": "x".repeat(11) }), limits)).toThrow(
      /limit for one file/,
    );
    expect(() =>
      checkBundleFiles(bundleFiles({ "SKILL.md": "x".repeat(9), "a.md": "y".repeat(9) }), limits),
    ).toThrow(/in total/);
    expect(() =>
      checkBundleFiles(bundleFiles({ "SKILL.md": "x", "a.md": "y", "b.md": "z" }), limits),
    ).toThrow(/3 files/);
  });
  it("refuses unsafe paths", () => {
    expect(() => checkBundleFiles(bundleFiles({ "SKILL.md": "x", "../evil": "y" }))).toThrow(
      /unsafe file path/,
    );
  });
});

describe("contentHash", () => {
  it("matches Python's bundle_content_hash: sha256 over path NUL bytes in path order, first 16 hex", () => {
    const files = bundleFiles({ "scripts/run.sh": "echo hi\n", "SKILL.md": "---\nname: x\n---\n" });
    const h = createHash("sha256");
    for (const [path, content] of [
      ["SKILL.md", "---\nname: x\n---\n"],
      ["scripts/run.sh", "echo hi\n"],
    ]) {
      h.update(`${path}\0`);
      h.update(content ?? "");
    }
    expect(contentHash(files)).toBe(`sha256:${h.digest("hex").slice(0, 16)}`);
  });
  it("changes when a file moves, even with the same bytes", () => {
    const a = contentHash(bundleFiles({ "SKILL.md": "x", "a.md": "1", "b.md": "2" }));
    const b = contentHash(bundleFiles({ "SKILL.md": "x", "a.md": "2", "b.md": "1" }));
    expect(a).not.toBe(b);
  });
  it("does not depend on insertion order", () => {
    expect(contentHash(bundleFiles({ "b.md": "2", "SKILL.md": "x" }))).toBe(
      contentHash(bundleFiles({ "SKILL.md": "x", "b.md": "2" })),
    );
  });
});

describe("frontmatter", () => {
  it("reads name, description, category (top level or metadata.hermes) and tags", () => {
    expect(readFrontmatter(skillMd("x", "Does x.", "category: devops\ntags: [a, b]\n"))).toMatchObject({
      name: "x",
      description: "Does x.",
      category: "devops",
      tags: ["a", "b"],
    });
    expect(
      readFrontmatter("---\nname: y\nmetadata:\n  hermes:\n    category: ml\n    tags: [t]\n---\nbody")
        .category,
    ).toBe("ml");
  });
  it("is empty for no or broken frontmatter", () => {
    expect(readFrontmatter("# no frontmatter")).toEqual({ tags: [] });
    expect(readFrontmatter("---\nname: [unclosed\n---\n")).toEqual({ tags: [] });
  });
  it("names a bundle from frontmatter, else from the folder", () => {
    expect(bundleName(Buffer.from(skillMd("from-fm")), "folder")).toBe("from-fm");
    expect(bundleName(Buffer.from("# none"), "Folder-Name")).toBe("folder-name");
    expect(() => bundleName(Buffer.from("---\nname: Bad Name\n---\n"), "SKILL")).toThrow(/pass --name/);
  });
});

describe("lock.json", () => {
  it("keeps unknown fields and tolerates odd entries", () => {
    const lock = parseLock(
      JSON.stringify({
        version: 1,
        extra_top: true,
        installed: {
          a: {
            source: "github",
            identifier: "o/r/a",
            content_hash: "sha256:1",
            install_path: "a",
            scan_provenance: { x: 1 },
          },
          bad: "not an object",
        },
      }),
    );
    expect(lock["extra_top"]).toBe(true);
    expect(Object.keys(lock.installed)).toEqual(["a"]);
    expect(lock.installed["a"]?.["scan_provenance"]).toEqual({ x: 1 });
    expect(lock.installed["a"]?.files).toEqual([]);
  });
  it("refuses to treat broken JSON as empty", () => {
    expect(() => parseLock("{ nope")).toThrow(/not valid JSON/);
  });
  it("writes timestamps the way Python's isoformat does", () => {
    expect(pythonIsoTime(1_700_000_000.25)).toBe("2023-11-14T22:13:20.250000+00:00");
  });
});
