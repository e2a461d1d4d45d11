// Builds the shipped CLI (one minified CommonJS bundle that bin/hermes loads with a V8 code cache)
// and the library entry (ESM, dependencies external so applications share them).
// `--no-types` skips the declaration pass (the test script uses it for speed).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { build } from "esbuild";
import { buildWeb } from "./build-web.mjs";
import { bundleProblems, bundleReport, sideBundleLimit } from "./bundle-guard.mjs";
import { common } from "./cli-bundle.mjs";
import { buildCliBundles, bundleOverlaps, outputModules } from "./side-bundles.mjs";

const withTypes = !process.argv.includes("--no-types");

rmSync("dist/cli", { recursive: true, force: true });
rmSync("dist/lib", { recursive: true, force: true });

const optionalDependencies = Object.keys(
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).optionalDependencies ?? {},
);

// Warns (the build still succeeds) when the CLI bundle or a side bundle inlines what must stay
// out, grows past its limit, or holds a module another bundle holds too;
// test/unit/build/bundle-size.test.ts and side-bundles.test.ts fail on the same findings.
function guardBundles({ main, sides }) {
  const problems = bundleProblems(bundleReport(main.result.metafile, main.outfile), { optionalDependencies });
  const modules = { main: outputModules(main.result.metafile, main.outfile) };
  for (const side of sides) {
    const report = bundleReport(side.result.metafile, side.outfile);
    problems.push(
      ...bundleProblems(report, { optionalDependencies, limitBytes: sideBundleLimit(side.name) }),
    );
    modules[side.name] = outputModules(side.result.metafile, side.outfile);
  }
  for (const { path, bundles } of bundleOverlaps(modules)) {
    problems.push(`${path} is in more than one bundle (${bundles.join(", ")}): a second copy of its state`);
  }
  for (const problem of problems) console.warn(`build: warning: ${problem}`);
  return sides.map((side) => side.outfile);
}

const [, sideFiles] = await Promise.all([
  // The dashboard's page (dist/dashboard/), served by `hermes dashboard`.
  buildWeb(),
  // One file with every dependency inside: a package's hundreds of ESM files load far slower than
  // one script, and a single script is what V8's code cache (see bin/hermes) can cover whole.
  // Modules reached only through dynamic import() are still evaluated lazily; rarely used
  // surfaces are side bundles next to it (scripts/side-bundles.mjs), loaded when first used.
  buildCliBundles().then(guardBundles),
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
// Then the bundle's build id: the SHA-256 of its text, written into it as a comment before the
// source map line. bin/hermes (and scripts/side-loader.cjs for a side bundle) keys its V8 code
// cache by it, so a start never hashes the 2 MB itself.
for (const file of ["dist/cli/hermes.cjs", ...sideFiles]) {
  const bundleText = readFileSync(file, "latin1");
  const wide = [...bundleText.matchAll(/[^\x00-\x7f]+/g)].slice(0, 5);
  if (wide.length > 0) {
    const where = wide.map((m) => JSON.stringify(bundleText.slice(Math.max(0, m.index - 40), m.index + 20)));
    console.warn(
      `build: ${file} has non-ASCII text (use \\u escapes in regular expressions):\n  ${where.join("\n  ")}`,
    );
  }
  const mapLine = `//# sourceMappingURL=${basename(file)}.map`;
  const mapAt = bundleText.lastIndexOf(mapLine);
  if (mapAt < 0) throw new Error(`build: ${file} does not end with ${mapLine}`);
  const buildId = createHash("sha256").update(bundleText).digest("hex");
  writeFileSync(
    file,
    `${bundleText.slice(0, mapAt)}//# hermes-build-id=${buildId}\n${bundleText.slice(mapAt)}`,
    "latin1",
  );
}

if (withTypes) {
  rmSync("dist/types", { recursive: true, force: true });
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
}
