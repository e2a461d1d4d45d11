// The options of the CLI bundle (dist/cli/hermes.cjs), shared by scripts/build.mjs and the
// bundle-size test (test/unit/build/bundle-size.test.ts), which bundles the same way in memory.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

export const common = {
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

// better-sqlite3's JavaScript is bundled (no module resolution and no uncached compile at each
// start); its native addon cannot be. The driver finds the addon through the `bindings` package,
// which walks the file system from its caller's stack frame: in the bundle that lookup is replaced
// by one require of the addon's file, resolved from dist/cli like any dependency.
const sqliteAddon = {
  name: "sqlite-addon",
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, (args) =>
      /[\\/]better-sqlite3[\\/]/.test(args.importer)
        ? { path: "bindings", namespace: "sqlite-addon" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "sqlite-addon" }, () => ({
      contents:
        'module.exports = (name) => { if (name !== "better_sqlite3.node") throw new Error("unexpected addon " + name); return require("better-sqlite3/build/Release/better_sqlite3.node"); };',
      loader: "js",
    }));
    b.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }));
  },
};

// The end of the bundle's function. bin/hermes compiles the file as a script whose value is that
// function: `.valueOf()` hands it back. Run by Node itself (`node dist/cli/hermes.cjs`, or a
// packager's shim that requires it), the file is a CommonJS module, so `module` and `require` are
// in scope: the function is then called with them and the CLI runs, only without bin/hermes's
// code cache and answers that skip the bundle.
export const directRunFooter =
  '\n})[typeof module == "object" && typeof require == "function" ? "apply" : "valueOf"](this, typeof module == "object" && typeof require == "function" ? [exports, require, module, __filename, __dirname] : [])';

/** esbuild options for dist/cli/hermes.cjs (relative paths are from the package root). */
export const cliBundleOptions = {
  ...common,
  format: "cjs",
  minify: !process.env.HERMES_BUILD_NO_MINIFY,
  // No keepNames: it wraps every named function the minifier renames in a helper that sets its
  // name (Object.defineProperty) each time the function is created, thousands at start-up and
  // dozens per model call for closures made per request. Nothing here reads a function's name;
  // the one bundled place that would show it, the openai SDK's User-Agent, is set explicitly
  // (openai-client.ts).
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/cli/hermes.cjs",
  // Native addons cannot live inside a bundle, and the tokenizer tables (2.4 MB, used only by
  // `hermes prompt-size`) and the Anthropic SDK (only for that provider) would slow every start:
  // all are required from node_modules at first use (so is the Honcho SDK and its zod, only for
  // `memory.provider: honcho`; the Daytona and Modal SDKs and node-pty likewise).
  external: [
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
    // PostgreSQL's driver: only for `state.backend: postgres` and `hermes state`.
    "pg",
  ],
  define: { ...common.define, "import.meta.url": "__hermesImportMetaUrl" },
  plugins: [sdkFetchClasses, sqliteAddon],
  // The file is the function bin/hermes compiles (CommonJS's wrapper written out), so the
  // launcher hands V8 the file's text as it is instead of a second 2 MB copy with the wrapper.
  banner: {
    js: '(function (exports, require, module, __filename, __dirname) {var __hermesImportMetaUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  footer: { js: directRunFooter },
};
