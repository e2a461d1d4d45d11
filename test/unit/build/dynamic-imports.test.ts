/**
 * bin/hermes runs the CLI bundle as a compiled script without a dynamic-import hook, so an
 * `import()` left in the bundle throws "A dynamic import callback was not specified" when it runs.
 * esbuild inlines our own modules' `import()`s but leaves those of Node built-ins and of packages
 * kept out of the bundle (`pg`, the chat platforms' SDKs): those must be `require`d
 * (`createRequire`). This scans the source for such calls, type positions aside.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliBundleOptions } from "../../../scripts/cli-bundle.mjs";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "web" && dir.endsWith("dashboard") ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the CLI bundle's dynamic imports", () => {
  it("never import() a built-in or an external package at run time", () => {
    const externals = (cliBundleOptions.external as string[]).map((name) =>
      name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"),
    );
    const target = new RegExp(
      `(?<!(typeof|as|:)\\s*)\\bimport\\(\\s*["'](node:[^"']+|${externals.join("|")})(/[^"']*)?["']\\s*\\)`,
    );
    const offenders: string[] = [];
    for (const file of sources(join(import.meta.dirname, "../../../src"))) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (target.test(line)) offenders.push(`${file.split("/src/")[1]}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
