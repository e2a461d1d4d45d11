// Builds the shipped CLI (one minified CommonJS bundle that bin/hermes loads with a V8 code cache)
// and the library entry (ESM, dependencies external so applications share them).
// `--no-types` skips the declaration pass (the test script uses it for speed).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";
import { buildWeb } from "./build-web.mjs";
import { bundleProblems, bundleReport } from "./bundle-guard.mjs";
import { cliBundleOptions, common } from "./cli-bundle.mjs";

const withTypes = !process.argv.includes("--no-types");

rmSync("dist/cli", { recursive: true, force: true });
rmSync("dist/lib", { recursive: true, force: true });

const optionalDependencies = Object.keys(
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).optionalDependencies ?? {},
);

// Warns (the build still succeeds) when the CLI bundle inlines what must stay out or grows past
// its limit; test/unit/build/bundle-size.test.ts fails on the same findings.
function guardBundle(metafile) {
  const problems = bundleProblems(bundleReport(metafile, cliBundleOptions.outfile), { optionalDependencies });
  for (const problem of problems) console.warn(`build: warning: ${problem}`);
}

await Promise.all([
  // The dashboard's page (dist/dashboard/), served by `hermes dashboard`.
  buildWeb(),
  // One file with every dependency inside: a package's hundreds of ESM files load far slower than
  // one script, and a single script is what V8's code cache (see bin/hermes) can cover whole.
  // Modules reached only through dynamic import() are still evaluated lazily.
  build({ ...cliBundleOptions, metafile: true }).then((result) => guardBundle(result.metafile)),
  // `hermes --help` alone: commander and the command list, without any command module (each is
  // reached only through a dynamic import in program.ts, left out here and never called).
  build({
    ...common,
    format: "cjs",
    minify: true,
    entryPoints: ["src/cli/help-main.ts"],
    outfile: "dist/cli/help.cjs",
    define: { ...common.define, "import.meta.url": "__hermesImportMetaUrl" },
    banner: { js: 'var __hermesImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [
      {
        name: "help-without-commands",
        setup(b) {
          b.onResolve({ filter: /^\.\/commands\// }, (args) =>
            args.importer.endsWith("program.ts") ? { path: args.path, external: true } : undefined,
          );
        },
      },
    ],
  }),
  build({
    ...common,
    format: "esm",
    packages: "external",
    entryPoints: { index: "src/lib/index.ts" },
    outdir: "dist/lib",
    splitting: true,
  }),
]);

// `hermes --help` when stdout is not a terminal (bin/hermes): the help commander prints there,
// rendered once now (80 columns, no colour) so that a start writes it without running any bundle.
writeFileSync(
  "dist/cli/help.txt",
  execFileSync(process.execPath, ["dist/cli/help.cjs"], { stdio: ["ignore", "pipe", "inherit"] }),
);

// V8 keeps a script's source in memory as long as the script lives: one non-ASCII character turns
// the whole 2 MB bundle into a two-byte string (4 MB). esbuild escapes strings and templates but
// not regular expression literals, so write those with \u escapes; this says where one slipped in.
const bundleText = readFileSync("dist/cli/hermes.cjs", "latin1");
const wide = [...bundleText.matchAll(/[^\x00-\x7f]+/g)].slice(0, 5);
if (wide.length > 0) {
  const where = wide.map((m) => JSON.stringify(bundleText.slice(Math.max(0, m.index - 40), m.index + 20)));
  console.warn(
    `build: dist/cli/hermes.cjs has non-ASCII text (use \\u escapes in regular expressions):\n  ${where.join("\n  ")}`,
  );
}

// The bundle's build id: the SHA-256 of its text, written into it as a comment before the source
// map line. bin/hermes keys its V8 code cache by it, so a start never hashes the 2 MB itself.
const mapLine = "//# sourceMappingURL=hermes.cjs.map";
const mapAt = bundleText.lastIndexOf(mapLine);
if (mapAt < 0) throw new Error(`build: dist/cli/hermes.cjs does not end with ${mapLine}`);
const buildId = createHash("sha256").update(bundleText).digest("hex");
writeFileSync(
  "dist/cli/hermes.cjs",
  `${bundleText.slice(0, mapAt)}//# hermes-build-id=${buildId}\n${bundleText.slice(mapAt)}`,
  "latin1",
);

if (withTypes) {
  rmSync("dist/types", { recursive: true, force: true });
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
}
