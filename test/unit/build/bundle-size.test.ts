/**
 * The CLI bundle's size guard (scripts/bundle-guard.mjs): the bundle and its side bundles as the
 * build makes them (scripts/side-bundles.mjs, in memory) stay under their stated limits and inline
 * none of the packages that must be required from node_modules; and the guard names what is wrong.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import {
  BUNDLE_LIMIT_BYTES,
  bundleProblems,
  bundleReport,
  OUT_OF_BUNDLE_PACKAGES,
  packageOf,
  sideBundleLimit,
} from "../../../scripts/bundle-guard.mjs";
import { cliBundleOptions } from "../../../scripts/cli-bundle.mjs";
import { buildCliBundles } from "../../../scripts/side-bundles.mjs";

const ROOT = resolve(import.meta.dirname, "../../..");
const optionalDependencies = Object.keys(
  (JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { optionalDependencies?: object })
    .optionalDependencies ?? {},
);

/** A metafile with one output made of the given inputs (path -> bytes). */
function metafile(inputs: Record<string, number>, bytes?: number): Metafile {
  const total = Object.values(inputs).reduce((a, b) => a + b, 0);
  return {
    inputs: {},
    outputs: {
      "dist/cli/hermes.cjs": {
        bytes: bytes ?? total,
        inputs: Object.fromEntries(Object.entries(inputs).map(([p, b]) => [p, { bytesInOutput: b }])),
        imports: [],
        exports: [],
      },
    },
  } as unknown as Metafile;
}

describe("CLI bundle size guard", () => {
  it("the bundles the build makes are under their limits and inline no package that must stay out", async () => {
    const { main, sides } = await buildCliBundles({ write: false });
    expect(main.outfile).toBe(cliBundleOptions.outfile);
    const report = bundleReport(main.result.metafile, main.outfile);
    expect(bundleProblems(report, { optionalDependencies })).toEqual([]);
    expect(report.bytes).toBeLessThanOrEqual(BUNDLE_LIMIT_BYTES);
    const inlined = new Set(report.packages.map((p) => p.name));
    expect([...OUT_OF_BUNDLE_PACKAGES, ...optionalDependencies].filter((name) => inlined.has(name))).toEqual(
      [],
    );
    // The model SDK the one-shot uses is inside; the report sees it.
    expect(inlined.has("openai")).toBe(true);
    expect(sides.length).toBeGreaterThan(0);
    for (const side of sides) {
      const sideReport = bundleReport(side.result.metafile, side.outfile);
      expect(
        bundleProblems(sideReport, { optionalDependencies, limitBytes: sideBundleLimit(side.name) }),
      ).toEqual([]);
      expect(sideReport.bytes).toBeGreaterThan(0);
      // `pg` stays in node_modules, side bundle or not.
      expect(sideReport.packages.map((p) => p.name)).not.toContain("pg");
    }
  }, 120_000);

  it("names the package of an input, scoped and nested ones included", () => {
    expect(packageOf("node_modules/openai/client.mjs")).toBe("openai");
    expect(packageOf("node_modules/@slack/bolt/dist/App.js")).toBe("@slack/bolt");
    expect(packageOf("node_modules/a/node_modules/@x/y/index.js")).toBe("@x/y");
    expect(packageOf("node_modules\\grammy\\out\\mod.js")).toBe("grammy");
    expect(packageOf("src/cli/main.ts")).toBeUndefined();
    expect(packageOf("sqlite-addon:bindings")).toBeUndefined();
  });

  it("reports an inlined platform SDK or optional dependency, even nested under another package", () => {
    const report = bundleReport(
      metafile({
        "src/cli/main.ts": 1000,
        "node_modules/discord.js/src/index.js": 40_000,
        "node_modules/helper/node_modules/baileys/lib/index.js": 9000,
        "node_modules/fake-indexeddb/build/index.js": 2000,
        "node_modules/yaml/dist/index.js": 5000,
      }),
      "dist/cli/hermes.cjs",
    );
    const problems = bundleProblems(report, { optionalDependencies: ["fake-indexeddb"] });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/inlines discord\.js \(40 kB\).*external list/);
    expect(problems.join("\n")).toContain("inlines baileys");
    expect(problems.join("\n")).toContain("inlines fake-indexeddb");
    expect(problems.join("\n")).not.toContain("yaml");
  });

  it("reports a bundle over the limit with its biggest node_modules contributors, largest first", () => {
    const report = bundleReport(
      metafile({
        "src/agent/loop.ts": 700_000,
        "node_modules/openai/client.mjs": 170_000,
        "node_modules/openai/core/streaming.mjs": 30_000,
        "node_modules/yaml/dist/compose.js": 120_000,
        "node_modules/@sinclair/typebox/build/index.js": 66_000,
      }),
      "dist/cli/hermes.cjs",
    );
    expect(report.source).toBe(700_000);
    expect(report.packages.map((p) => p.name)).toEqual(["openai", "yaml", "@sinclair/typebox"]);
    expect(bundleProblems(report, { limitBytes: 1_100_000 })).toEqual([]);
    const [problem, ...rest] = bundleProblems(report, { limitBytes: 1_000_000 });
    expect(rest).toEqual([]);
    expect(problem).toContain("dist/cli/hermes.cjs is 1086 kB, over its limit of 1000 kB");
    expect(problem).toContain("our own source is 700 kB");
    const lines = (problem ?? "").split("\n").slice(1);
    expect(lines.map((l) => l.trim())).toEqual([
      "200 kB  openai",
      "120 kB  yaml",
      "66 kB  @sinclair/typebox",
    ]);
  });

  it("refuses a metafile without the bundle it is asked about", () => {
    expect(() => bundleReport(metafile({}), "dist/cli/other.cjs")).toThrow(/no output dist\/cli\/other\.cjs/);
  });
});
