// Builds the shipped CLI (one esbuild bundle with lazily loaded chunks) and the library entry.
// `--no-types` skips the declaration pass (the test script uses it for speed).
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { build } from "esbuild";

const withTypes = !process.argv.includes("--no-types");
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

rmSync("dist/cli", { recursive: true, force: true });
rmSync("dist/lib", { recursive: true, force: true });

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning",
  define: { __HERMES_VERSION__: JSON.stringify(pkg.version) },
  loader: { ".md": "text" },
};

await Promise.all([
  build({
    ...common,
    entryPoints: { main: "src/cli/main.ts" },
    outdir: "dist/cli",
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
  }),
  build({ ...common, entryPoints: { index: "src/lib/index.ts" }, outdir: "dist/lib", splitting: true }),
]);

if (withTypes) {
  rmSync("dist/types", { recursive: true, force: true });
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
}
