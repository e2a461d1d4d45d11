// Loads a side bundle (scripts/side-bundles.mjs) for the main CLI bundle, which inlines this file:
// each seam of the main bundle calls `sideModule(side, path, hostTable)` the first time its
// dynamic import runs. A side bundle is `dist/cli/side-<name>.cjs`, written as one function
// `(exports, require, module, __filename, __dirname, __hermesHost)`: it is compiled here once per
// process with a V8 code cache beside the main bundle's (`<cache dir>/side/`, same key scheme as
// bin/hermes: build id, size, mtime, V8 version; HERMES_NO_COMPILE_CACHE=1 bypasses it), and
// `__hermesHost.module(path)` hands it the main bundle's instance of each module it shares.
"use strict";

const { join } = require("node:path");

const loaded = new Map();

/** Thrown when a side bundle cannot be loaded: the message says which file and what to do. */
class SideBundleError extends Error {
  constructor(message) {
    super(message);
    this.name = "SideBundleError";
  }
}

function packageRoot() {
  return join(__dirname, "..", "..");
}

function readSide(file, name, what) {
  const { readFileSync } = require("node:fs");
  try {
    const bytes = readFileSync(file);
    return require("node:buffer").isAscii(bytes) ? bytes.latin1Slice() : bytes.toString("utf8");
  } catch (error) {
    const reason = error?.code === "ENOENT" ? "is missing" : `cannot be read (${error?.code})`;
    throw new SideBundleError(
      `${file} ${reason}: it holds ${what[name] ?? `the side bundle "${name}"`}, which this command needs; run \`npm run build\` in ${packageRoot()} (or reinstall hermes-agent)`,
    );
  }
}

// The cache key names the text: the build id scripts/build.mjs writes into the file (else a hash),
// its size and mtime, and the V8 version and architecture.
function cacheFileFor(file, name, source) {
  const tail = source.slice(-200);
  let id = /\/\/# hermes-build-id=([0-9a-f]{64})\n/.exec(tail)?.[1];
  if (!id) id = require("node:crypto").createHash("sha256").update(source).digest("hex");
  let stamp = "";
  try {
    const st = require("node:fs").statSync(file);
    stamp = `${st.size.toString(36)}${Math.trunc(st.mtimeMs).toString(36)}`;
  } catch {
    // Read a moment ago; a vanished file only means no stamp.
  }
  const runtime = `${process.versions.v8}-${process.arch}`.replace(/[^0-9A-Za-z.-]/g, "_");
  const dir = join(
    process.env.XDG_CACHE_HOME || join(require("node:os").homedir(), ".cache"),
    "hermes-ts",
    "side",
  );
  return { dir, file: join(dir, `${name}-${id.slice(0, 32)}-${stamp}-${runtime}.v8`), prefix: `${name}-` };
}

function saveCache(script, cache) {
  const { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } = require("node:fs");
  try {
    mkdirSync(cache.dir, { recursive: true });
    const temp = `${cache.file}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cache.file);
    // Caches of this side bundle's older builds are dead weight.
    for (const entry of readdirSync(cache.dir)) {
      const path = join(cache.dir, entry);
      if (entry.startsWith(cache.prefix) && entry.endsWith(".v8") && path !== cache.file)
        rmSync(path, { force: true });
    }
  } catch {
    // An unwritable cache directory only means the next load is not faster.
  }
}

function compile(file, name, source) {
  const { Script } = require("node:vm");
  if (process.env.HERMES_NO_COMPILE_CACHE === "1") return new Script(source, { filename: file });
  const cache = cacheFileFor(file, name, source);
  let cachedData;
  try {
    cachedData = require("node:fs").readFileSync(cache.file);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  // Written at exit, so the cache also holds the functions this run compiled.
  if (!cachedData || script.cachedDataRejected) process.once("exit", () => saveCache(script, cache));
  return script;
}

function loadSide(name, hostTable) {
  const file = join(__dirname, `side-${name}.cjs`);
  const source = readSide(file, name, hostTable.what);
  if (!source.startsWith("(function (exports, require, module, __filename, __dirname, __hermesHost) {")) {
    throw new SideBundleError(
      `${file} is not a side bundle of this build; run \`npm run build\` in ${packageRoot()}`,
    );
  }
  const host = {
    module(path) {
      const get = hostTable.modules[path];
      if (!get) {
        throw new SideBundleError(
          `${file} needs ${path}, which this build's main bundle does not provide: the two are from different builds; run \`npm run build\` in ${packageRoot()}`,
        );
      }
      return get();
    },
    sideModule: (other, path) => sideModule(other, path, hostTable),
  };
  const module = { exports: {} };
  const sideRequire = require("node:module").createRequire(file);
  compile(file, name, source).runInThisContext()(module.exports, sideRequire, module, file, __dirname, host);
  return module.exports;
}

/**
 * The module `path` (project-relative, as the build named it) from side bundle `name`, loading
 * the bundle on first use. `hostTable` is the main bundle's `{ modules, what }`: a require of each
 * module side bundles share, and each side bundle's description. Throws a SideBundleError naming
 * the file when it is missing, not a side bundle, or from another build.
 */
function sideModule(name, path, hostTable) {
  let entry = loaded.get(name);
  if (!entry) {
    entry = loadSide(name, hostTable);
    loaded.set(name, entry);
  }
  const get = entry[path];
  if (typeof get !== "function") {
    throw new SideBundleError(
      `${join(__dirname, `side-${name}.cjs`)} has no ${path}: it is from another build; run \`npm run build\` in ${packageRoot()}`,
    );
  }
  return get();
}

module.exports = { sideModule, SideBundleError };
