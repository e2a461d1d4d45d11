import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { completePath, completeReference } from "../../../../src/agent/references/complete.js";

let cwd: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "hermes-complete-"));
  mkdirSync(join(cwd, "src", "cli"), { recursive: true });
  mkdirSync(join(cwd, "docs"));
  writeFileSync(join(cwd, "src", "cli.ts"), "");
  writeFileSync(join(cwd, "src", "cli", "main.ts"), "");
  writeFileSync(join(cwd, "README.md"), "");
  writeFileSync(join(cwd, ".env"), "");
  symlinkSync(join(cwd, "docs"), join(cwd, "linked-docs"));
});

describe("completeReference", () => {
  it("offers the reference words after a bare @", async () => {
    expect(await completeReference("look at @", cwd)).toEqual([
      ["@file:", "@folder:", "@diff", "@staged", "@git:", "@url:"],
      "@",
    ]);
    expect(await completeReference("@f", cwd)).toEqual([["@file:", "@folder:"], "@f"]);
    expect(await completeReference("x @st", cwd)).toEqual([["@staged"], "@st"]);
  });

  it("completes paths after @file:, each candidate extending the word typed", async () => {
    const [candidates, word] = (await completeReference("see @file:src/c", cwd)) ?? [[], ""];
    expect(word).toBe("@file:src/c");
    expect(candidates).toEqual(["@file:src/cli/", "@file:src/cli.ts"]);
    for (const c of candidates) expect(c.startsWith(word)).toBe(true);
    expect((await completeReference("@file:", cwd))?.[0]).toEqual([
      "@file:docs/",
      "@file:linked-docs/",
      "@file:README.md",
      "@file:src/",
    ]);
  });

  it("offers folders only after @folder:, and dot entries only when a dot is typed", async () => {
    expect((await completeReference("@folder:", cwd))?.[0]).toEqual([
      "@folder:docs/",
      "@folder:linked-docs/",
      "@folder:src/",
    ]);
    expect((await completeReference("@file:.", cwd))?.[0]).toEqual(["@file:.env"]);
  });

  it("leaves lines not ending in an @ word to the caller", async () => {
    expect(await completeReference("/help", cwd)).toBeNull();
    expect(await completeReference("mail me@file:x", cwd)).toBeNull();
    expect(await completeReference("@file:src ", cwd)).toBeNull();
    expect(await completeReference("@file:nowhere/x", cwd)).toEqual([[], "@file:nowhere/x"]);
  });
});

describe("completePath", () => {
  it("completes relative, absolute and ~/ paths", async () => {
    expect(await completePath("src/cli/m", { cwd })).toEqual(["src/cli/main.ts"]);
    expect(await completePath(`${cwd}/RE`, { cwd: "/" })).toEqual([`${cwd}/README.md`]);
    expect(await completePath("~/src/", { cwd: "/", home: cwd })).toEqual(["~/src/cli/", "~/src/cli.ts"]);
  });
});
