// Builds the shipped CLI (one minified CommonJS bundle that bin/hermes loads with a V8 code cache)
// and the library entry (ESM, dependencies external so applications share them).
// `--no-types` skips the declaration pass (the test script uses it for speed).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const withTypes = !process.argv.includes("--no-types");
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

rmSync("dist/cli", { recursive: true, force: true });
rmSync("dist/lib", { recursive: true, force: true });

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  define: { __HERMES_VERSION__: JSON.stringify(pkg.version) },
  loader: { ".md": "text" },
};

// The bundled openai SDK names the globals `Headers` and `FormData` on every request; in Node 20
// the first touch of either loads undici's bundle (~10 MiB, ~100 ms of CPU) although the SDK's
// fetch is util/http-fetch.ts over node:http. Each SDK module that names them gets them bound to
// util/fetch-classes.ts instead (WHATWG-compatible; a real FormData is still recognised and made).
const fetchClasses = fileURLToPath(new URL("../src/util/fetch-classes.ts", import.meta.url));
const sdkFetchClasses = {
  name: "sdk-fetch-classes",
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]openai[\\/].*\.mjs$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      const names = [];
      if (/\bHeaders\b/.test(text)) names.push("FetchHeaders as Headers");
      if (/\bFormData\b/.test(text)) names.push("FormDataCheck as FormData");
      if (names.length === 0) return undefined;
      const binding = `import { ${names.join(", ")} } from ${JSON.stringify(fetchClasses)};\n`;
      return { contents: binding + text, loader: "js", resolveDir: dirname(args.path) };
    });
  },
};

await Promise.all([
  // One file with every dependency inside: a package's hundreds of ESM files load far slower than
  // one script, and a single script is what V8's code cache (see bin/hermes) can cover whole.
  // Modules reached only through dynamic import() are still evaluated lazily.
  build({
    ...common,
    format: "cjs",
    minify: !process.env.HERMES_BUILD_NO_MINIFY,
    keepNames: true,
    entryPoints: ["src/cli/main.ts"],
    outfile: "dist/cli/hermes.cjs",
    // Native addons cannot live inside a bundle, and the tokenizer tables (2.4 MB, used only by
    // `hermes prompt-size`) and the Anthropic SDK (only for that provider) would slow every start:
    // all are required from node_modules at first use (so is the Honcho SDK and its zod, only for
    // `memory.provider: honcho`; the Daytona and Modal SDKs and node-pty likewise).
    external: [
      "better-sqlite3",
      "fs-ext",
      "gpt-tokenizer",
      "@anthropic-ai/sdk",
      "@honcho-ai/sdk",
      "@aws-sdk/client-bedrock-runtime",
      "@modelcontextprotocol/sdk",
      // ES module only; required on first use by `hermes acp` and delegate_task's acp_command.
      "@agentclientprotocol/sdk",
      "croner",
      "grammy",
      "discord.js",
      "@slack/bolt",
      "@mattermost/client",
      "ws",
      "matrix-js-sdk",
      "@matrix-org/matrix-sdk-crypto-wasm",
      // A personal WhatsApp account (optional dependency, ES module: loaded with require() on Node 20.19+).
      "baileys",
      "playwright-core",
      "@mozilla/readability",
      "turndown",
      "linkedom",
      "unpdf",
      "iconv-lite",
      // Only for their backends (terminal.backend daytona/modal) or a pty command.
      "@daytonaio/sdk",
      "modal",
      "@lydell/node-pty",
    ],
    define: { ...common.define, "import.meta.url": "__hermesImportMetaUrl" },
    plugins: [sdkFetchClasses],
    // The file is the function bin/hermes compiles (CommonJS's wrapper written out), so the
    // launcher hands V8 the file's text as it is instead of a second 2 MB copy with the wrapper.
    banner: {
      js: '(function (exports, require, module, __filename, __dirname) {var __hermesImportMetaUrl = require("node:url").pathToFileURL(__filename).href;',
    },
    footer: { js: "\n})" },
  }),
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
