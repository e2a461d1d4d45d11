// Side bundles: rarely used surfaces built into their own files next to dist/cli/hermes.cjs and
// loaded on demand, so they weigh on no other start. A side bundle is cut at "seams": a dynamic
// `import()` in our source whose target matches the bundle's `seams` (src/ needs no change and the
// unbundled path, tsx over src/, imports the module as before). In the main bundle such an import
// becomes a small module that asks scripts/side-loader.cjs for the target: the loader compiles the
// side file once per process (with a V8 code cache), and hands it the main bundle's modules.
//
// One copy of every module: a side bundle holds only the modules the main bundle lacks. Each
// import of a module the main bundle has is answered by the main bundle's own instance (a table
// of `require`s in the main bundle, "host modules"), so registries, the logger, the redactor and
// config caches exist once. The build runs in three steps: the main bundle with its seams cut
// (which modules it has), each side bundle against that set (which host modules it needs), then
// the main bundle again with its host table. `bundleOverlaps` checks the result from the metafiles.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { cliBundleOptions } from "./cli-bundle.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LOADER = join(ROOT, "scripts", "side-loader.cjs");

/**
 * The side bundles: `seams` match the project-relative path of a dynamic import's target; `what`
 * names the surface in the loader's error when the file is missing.
 */
export const SIDE_BUNDLES = [
  {
    name: "postgres",
    what: "the PostgreSQL state backend",
    seams: [
      /^src\/(state|knowledge)\/postgres\//,
      /^src\/knowledge\/postgres-backend\.ts$/,
      /^src\/knowledge\/state-transfer\.ts$/,
    ],
  },
  { name: "dashboard", what: "the web dashboard's server", seams: [/^src\/cli\/commands\/dashboard\.ts$/] },
  {
    // Each platform's adapter, imported by src/gateway/platforms/registry.ts when the gateway or
    // `hermes send` builds it (signal.ts stays in the main bundle: `hermes setup` reads a constant).
    name: "platforms",
    what: "the gateway's chat platform adapters",
    seams: [
      /^src\/gateway\/platforms\/(discord|email|homeassistant|matrix|mattermost|signal|slack|sms|telegram|whatsapp|whatsapp-cloud)\.ts$/,
    ],
  },
  { name: "acp", what: "the ACP server (`hermes acp`)", seams: [/^src\/cli\/commands\/acp\.ts$/] },
  {
    name: "batch",
    what: "batch runs and trajectory compression",
    seams: [/^src\/cli\/commands\/batch\.ts$/, /^src\/batch\//],
  },
  { name: "rl", what: "the Atropos RL environments (`hermes rl`)", seams: [/^src\/cli\/commands\/rl\.ts$/] },
  {
    name: "skills",
    what: "`hermes skills` (the hub and the library's commands)",
    seams: [/^src\/cli\/commands\/skills\.ts$/],
  },
  {
    name: "mcp",
    what: "`hermes mcp` (MCP server settings and logins)",
    seams: [/^src\/cli\/commands\/mcp\.ts$/],
  },
  { name: "profile", what: "`hermes profile`", seams: [/^src\/cli\/commands\/profile\.ts$/] },
];

/**
 * Modules that may be in a side bundle and in the main bundle both, because a second copy holds no
 * state (pure functions and constants). Empty: every shared module is the main bundle's instance.
 */
export const STATELESS_SHARED = [];

/** The file of a side bundle, next to the main bundle. */
export function sideOutfile(name, mainOutfile = cliBundleOptions.outfile) {
  return join(dirname(mainOutfile), `side-${name}.cjs`);
}

const projectPath = (absolute) => relative(ROOT, absolute).split("\\").join("/");

/** The side bundle (of `sides`) whose seams match a project-relative path, if any. */
export function seamOf(path, sides = SIDE_BUNDLES) {
  return sides.find((side) => side.seams.some((seam) => seam.test(path)));
}

// Resolves an import as esbuild would without plugins, or undefined when it is not a file of ours
// or of node_modules (a built-in, an external package, another plugin's namespace).
async function resolveFile(b, args) {
  if (args.pluginData?.sideResolving) return undefined;
  if (args.namespace !== "file") return undefined;
  const result = await b.resolve(args.path, {
    importer: args.importer,
    resolveDir: args.resolveDir,
    kind: args.kind,
    pluginData: { sideResolving: true },
  });
  if (
    result.errors.length > 0 ||
    result.external ||
    result.namespace !== "file" ||
    !isAbsolute(result.path)
  ) {
    return undefined;
  }
  return result.path;
}

const seamModule = (side, path) =>
  `module.exports = require(${JSON.stringify(LOADER)}).sideModule(${JSON.stringify(side)}, ${JSON.stringify(path)}, require("side-host:table"));`;

// The main bundle: each seam (a dynamic import of a side bundle's module the main bundle lacks)
// becomes a request to the loader; `side-host:table` is the host modules the side bundles need.
function mainPlugin({ sides, mainSet, hostPaths, seams }) {
  return {
    name: "side-bundle-seams",
    setup(b) {
      b.onResolve({ filter: /^\./ }, async (args) => {
        if (args.kind !== "dynamic-import") return undefined;
        const file = await resolveFile(b, args);
        if (file === undefined) return undefined;
        const path = projectPath(file);
        const side = seamOf(path, sides);
        if (!side || mainSet?.has(path)) return undefined;
        seams.get(side.name)?.add(path) ?? seams.set(side.name, new Set([path]));
        return {
          path: `${side.name}:${path}.cjs`,
          namespace: "side-seam",
          pluginData: { side: side.name, path },
        };
      });
      b.onLoad({ filter: /.*/, namespace: "side-seam" }, (args) => ({
        contents: seamModule(args.pluginData.side, args.pluginData.path),
        loader: "js",
        resolveDir: ROOT,
      }));
      b.onResolve({ filter: /^side-host:table$/ }, () => ({ path: "table", namespace: "side-host" }));
      b.onLoad({ filter: /.*/, namespace: "side-host" }, () => ({
        contents: `module.exports = {\n  what: ${JSON.stringify(Object.fromEntries(sides.map((s) => [s.name, s.what])))},\n  modules: {\n${[
          ...hostPaths,
        ]
          .sort()
          .map((path) => `    ${JSON.stringify(path)}: () => require(${JSON.stringify(join(ROOT, path))}),`)
          .join("\n")}\n  },\n};`,
        loader: "js",
        resolveDir: ROOT,
      }));
    },
  };
}

// A side bundle: its entry maps each of its seams to the module; every import of a module the main
// bundle has becomes `__hermesHost.module(path)`, and a dynamic import of another side bundle's
// seam goes through the loader as in the main bundle.
function sidePlugin({ sides, side, mainSet, targets, hostPaths }) {
  return {
    name: "side-bundle-host",
    setup(b) {
      b.onResolve({ filter: /^side-entry:/ }, () => ({ path: side, namespace: "side-entry" }));
      b.onLoad({ filter: /.*/, namespace: "side-entry" }, () => ({
        contents: `module.exports = {\n${[...targets]
          .sort()
          .map((path) => `  ${JSON.stringify(path)}: () => require(${JSON.stringify(join(ROOT, path))}),`)
          .join("\n")}\n};`,
        loader: "js",
        resolveDir: ROOT,
      }));
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === "entry-point") return undefined;
        const file = await resolveFile(b, args);
        if (file === undefined) return undefined;
        const path = projectPath(file);
        if (mainSet.has(path)) {
          hostPaths.add(path);
          return { path: `${path}.host.cjs`, namespace: "side-host-module", pluginData: { path } };
        }
        const other = args.kind === "dynamic-import" ? seamOf(path, sides) : undefined;
        if (other && other.name !== side) {
          return {
            path: `${other.name}:${path}.cjs`,
            namespace: "side-other",
            pluginData: { side: other.name, path },
          };
        }
        return undefined;
      });
      b.onLoad({ filter: /.*/, namespace: "side-host-module" }, (args) => ({
        contents: `module.exports = __hermesHost.module(${JSON.stringify(args.pluginData.path)});`,
        loader: "js",
      }));
      b.onLoad({ filter: /.*/, namespace: "side-other" }, (args) => ({
        contents: `module.exports = __hermesHost.sideModule(${JSON.stringify(args.pluginData.side)}, ${JSON.stringify(args.pluginData.path)});`,
        loader: "js",
      }));
    },
  };
}

/** The project-relative files a metafile output is made of (plugin namespaces left out). */
export function outputModules(metafile, outfile) {
  const output = metafile.outputs[outfile];
  if (!output) throw new Error(`the metafile has no output ${outfile}`);
  return new Set(Object.keys(output.inputs).filter((path) => !/^[a-z-]+:/.test(path)));
}

/**
 * Modules found in more than one bundle (the main one and each side bundle), other than those in
 * `stateless`: `[{ path, bundles }]`, empty when every module has one home.
 */
export function bundleOverlaps(bundles, stateless = STATELESS_SHARED) {
  const homes = new Map();
  for (const [name, modules] of Object.entries(bundles)) {
    for (const path of modules) homes.set(path, [...(homes.get(path) ?? []), name]);
  }
  return [...homes]
    .filter(([path, names]) => names.length > 1 && !stateless.includes(path))
    .map(([path, names]) => ({ path, bundles: names }));
}

const sideBanner = {
  js: '(function (exports, require, module, __filename, __dirname, __hermesHost) {var __hermesImportMetaUrl = require("node:url").pathToFileURL(__filename).href;',
};

// The end of a side bundle's function: scripts/side-loader.cjs compiles the file as a script whose
// value is `.valueOf()`, the function. Run by Node itself, the file is a CommonJS module (`module`
// in scope): the argument, evaluated first, says so on stderr with exit code 2 and nothing runs.
export const sideFooter = {
  js: '\n}).valueOf(typeof module == "object" && typeof require == "function" && (process.stderr.write("hermes: " + __filename + " is a part of the hermes CLI loaded on demand, not a program; start hermes with bin/hermes\\n"), process.exitCode = 2))',
};

// The main bundle with its seams cut (and the hoisted modules in its host table): which modules
// it holds, and which seams it cut per side bundle (those whose target it holds anyway left out).
async function cutMain(common, sides, hoisted) {
  const seams = new Map();
  const cut = await build({
    ...common,
    write: false,
    sourcemap: false,
    plugins: [
      ...cliBundleOptions.plugins,
      mainPlugin({ sides, mainSet: undefined, hostPaths: hoisted, seams }),
    ],
  });
  const mainSet = outputModules(cut.metafile, cliBundleOptions.outfile);
  for (const [name, targets] of seams) {
    for (const path of targets) if (mainSet.has(path)) targets.delete(path);
    if (targets.size === 0) seams.delete(name);
  }
  return { mainSet, seams };
}

// Each side bundle with seams, against the main bundle's modules.
function buildSides(common, { sides, mainOutfile, mainSet, seams }) {
  return Promise.all(
    sides
      .filter((side) => seams.has(side.name))
      .map(async (side) => {
        const outfile = sideOutfile(side.name, mainOutfile);
        const needs = new Set();
        const result = await build({
          ...common,
          write: false,
          entryPoints: { [`side-${side.name}`]: `side-entry:${side.name}` },
          outfile,
          banner: sideBanner,
          footer: sideFooter,
          plugins: [
            ...cliBundleOptions.plugins,
            sidePlugin({ sides, side: side.name, mainSet, targets: seams.get(side.name), hostPaths: needs }),
          ],
        });
        return {
          name: side.name,
          outfile,
          result,
          hostModules: [...needs].sort(),
          seams: [...seams.get(side.name)],
        };
      }),
  );
}

/**
 * Builds the main CLI bundle and its side bundles. `write: false` keeps them in memory (the tests);
 * `outdir` puts them somewhere else than dist/cli; `sides` replaces SIDE_BUNDLES. Returns each
 * bundle's esbuild result (metafile; in memory, the text) and output file (relative to the package
 * root, as the metafile names it), plus, per side bundle, the seams cut and the host modules it
 * takes from the main bundle, and the modules moved into the main bundle because two side bundles
 * used them.
 */
export async function buildCliBundles({ write = true, outdir, sides: wanted = SIDE_BUNDLES } = {}) {
  // Relative to the package root, as esbuild names outputs in its metafile.
  const mainOutfile = outdir ? projectPath(resolve(ROOT, outdir, "hermes.cjs")) : cliBundleOptions.outfile;
  const common = { ...cliBundleOptions, absWorkingDir: ROOT, metafile: true };
  // Modules two side bundles would each hold a copy of go into the main bundle instead (lent to
  // both like any other): found after a round, then the bundles are cut again.
  const hoisted = new Set();
  for (let round = 1; ; round++) {
    const { mainSet, seams } = await cutMain(common, wanted, hoisted);
    const sides = await buildSides(common, { sides: wanted, mainOutfile, mainSet, seams });
    const twice = bundleOverlaps(
      Object.fromEntries(sides.map((side) => [side.name, outputModules(side.result.metafile, side.outfile)])),
      [],
    );
    if (twice.length > 0 && round < 3) {
      for (const { path } of twice) hoisted.add(path);
      continue;
    }
    const hostPaths = new Set([...hoisted, ...sides.flatMap((side) => side.hostModules)]);
    // 3. The main bundle with the host modules the side bundles take.
    const main = await build({
      ...common,
      write: false,
      outfile: mainOutfile,
      plugins: [
        ...cliBundleOptions.plugins,
        mainPlugin({ sides: wanted, mainSet, hostPaths, seams: new Map() }),
      ],
    });
    // Written once every bundle is final, so no side file of an earlier round is left behind.
    if (write) {
      for (const file of [main, ...sides.map((side) => side.result)].flatMap((r) => r.outputFiles)) {
        mkdirSync(dirname(file.path), { recursive: true });
        writeFileSync(file.path, file.contents);
      }
    }
    return {
      main: { outfile: mainOutfile, result: main },
      sides,
      hoisted: [...hoisted].sort(),
    };
  }
}
