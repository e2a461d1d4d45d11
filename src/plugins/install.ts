/**
 * `hermes plugins install|update|remove`: a plugin from a folder (copied), a git URL (cloned), an
 * npm package (`npm pack`, through the user's npm and its registry setting) or a `.tgz` file,
 * staged under `<home>/plugins/.staging-*`, checked (its manifest must read), then moved into
 * `<home>/plugins/<name>/`. Installing never enables: the user does that with `enable`.
 * Dependencies of a packaged plugin are installed with `--ignore-scripts` (no install scripts run).
 */
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { INSTALL_RECORD, pluginsDir, readPlugin } from "./discover.js";
import { isValidPluginName, type PluginManifest } from "./manifest.js";

export type InstallSource =
  | { kind: "dir"; path: string }
  | { kind: "git"; url: string }
  | { kind: "npm"; spec: string }
  | { kind: "tgz"; path: string };

/** What `.hermes-install.json` holds: where the plugin came from, for `update`. */
export interface InstallRecord {
  kind: InstallSource["kind"];
  source: string;
  installed_at: string;
}

export class PluginInstallError extends Error {}

/** Runs a program (argument list, no shell); rejects with its stderr. Injected in tests. */
export type Runner = (
  file: string,
  args: string[],
  options: { cwd: string; timeoutMs: number },
) => Promise<string>;

export const defaultRunner: Runner = (file, args, options) =>
  new Promise((resolvePromise, reject) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        if (error) {
          const why = String(stderr).trim().split("\n").slice(-3).join(" ") || error.message;
          reject(new PluginInstallError(`${file} ${args[0] ?? ""} failed: ${why}`));
        } else resolvePromise(String(stdout));
      },
    );
  });

const NPM_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*(@[^\s/]+)?$/;

/** What `spec` names. Pure apart from looking at the file system for paths. */
export function classifySource(spec: string, cwd: string): InstallSource {
  const trimmed = spec.trim();
  if (!trimmed) throw new PluginInstallError("name a folder, a git URL, an npm package or a .tgz file");
  if (/^(git\+|git@|ssh:\/\/|git:\/\/|file:\/\/)/.test(trimmed) || /^https?:\/\/.+/.test(trimmed)) {
    return { kind: "git", url: trimmed.replace(/^git\+/, "") };
  }
  const path = resolve(cwd, trimmed.replace(/^~(?=\/)/, process.env.HOME ?? "~"));
  if (existsSync(path)) {
    const stat = statSync(path);
    if (stat.isFile()) {
      if (/\.(tgz|tar\.gz)$/.test(path)) return { kind: "tgz", path };
      throw new PluginInstallError(`${path} is a file but not a .tgz package`);
    }
    // A bare git repository (a folder with HEAD and objects/ and no manifest) is cloned.
    if (
      existsSync(join(path, "HEAD")) &&
      existsSync(join(path, "objects")) &&
      !existsSync(join(path, "plugin.yaml"))
    ) {
      return { kind: "git", url: path };
    }
    return { kind: "dir", path };
  }
  if (/^[\w.-]+\/[\w.-]+$/.test(trimmed) && !trimmed.startsWith("@")) {
    // owner/repo, as upstream takes it: GitHub.
    return { kind: "git", url: `https://github.com/${trimmed}.git` };
  }
  if (NPM_NAME.test(trimmed)) return { kind: "npm", spec: trimmed };
  throw new PluginInstallError(
    `"${trimmed}" is not a folder, a .tgz file, a git URL or an npm package name (hermes-plugin-*)`,
  );
}

export interface InstallOptions {
  home: string;
  spec: string;
  cwd: string;
  /** Replace an installed plugin of the same name. */
  force?: boolean;
  run?: Runner;
}

export interface Installed {
  name: string;
  dir: string;
  manifest: PluginManifest;
  replaced: boolean;
}

/** Installs one plugin; on any failure nothing is left behind. Throws PluginInstallError. */
export async function installPlugin(options: InstallOptions): Promise<Installed> {
  const source = classifySource(options.spec, options.cwd);
  return installFrom(source, options);
}

async function installFrom(source: InstallSource, options: InstallOptions): Promise<Installed> {
  const run = options.run ?? defaultRunner;
  const root = pluginsDir(options.home);
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, ".staging-"));
  try {
    const tree = join(staging, "tree");
    await fetchInto(source, tree, staging, run);
    const plugin = readPlugin(tree, "plugin", false);
    if (!plugin.manifest) {
      throw new PluginInstallError(
        `not a Hermes plugin: ${plugin.error?.replace(`${tree}: `, "") ?? "unreadable"}`,
      );
    }
    const name = plugin.manifest.name;
    if (!isValidPluginName(name)) throw new PluginInstallError(`the plugin name "${name}" is not valid`);
    if (!existsSync(join(tree, plugin.manifest.entry))) {
      throw new PluginInstallError(`its entry ${plugin.manifest.entry} is missing from the package`);
    }
    await installDependencies(tree, run);
    const record: InstallRecord = {
      kind: source.kind,
      source: source.kind === "git" ? source.url : source.kind === "npm" ? source.spec : source.path,
      installed_at: new Date().toISOString(),
    };
    writeFileSync(join(tree, INSTALL_RECORD), `${JSON.stringify(record, null, 2)}\n`);
    const target = join(root, name);
    const replaced = existsSync(target);
    if (replaced && !options.force) {
      throw new PluginInstallError(
        `a plugin named "${name}" is already installed at ${target}; use --force to replace it, or hermes plugins update ${name}`,
      );
    }
    if (replaced) rmSync(target, { recursive: true, force: true });
    renameSync(tree, target);
    return { name, dir: target, manifest: plugin.manifest, replaced };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

async function fetchInto(source: InstallSource, tree: string, staging: string, run: Runner): Promise<void> {
  switch (source.kind) {
    case "dir":
      cpSync(source.path, tree, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (from) => !from.split(/[\\/]/).includes(".git"),
      });
      return;
    case "git":
      await run("git", ["clone", "--depth", "1", "--quiet", "--", source.url, tree], {
        cwd: staging,
        timeoutMs: 120_000,
      });
      rmSync(join(tree, ".git"), { recursive: true, force: true });
      return;
    case "npm": {
      const out = await run("npm", ["pack", source.spec, "--json", "--pack-destination", staging], {
        cwd: staging,
        timeoutMs: 120_000,
      });
      const file = packedFile(out, staging);
      await extractTgz(join(staging, file), tree, staging, run);
      return;
    }
    case "tgz":
      await extractTgz(source.path, tree, staging, run);
      return;
  }
}

/** The tarball `npm pack --json` wrote. */
function packedFile(out: string, staging: string): string {
  try {
    const parsed = JSON.parse(out) as Array<{ filename?: string }>;
    const name = parsed[0]?.filename;
    if (name) return name.replace(/^@[^/]+\//, "").replace(/\//g, "-");
  } catch {
    // Older npm prints the file name alone.
  }
  const found = readdirSync(staging).find((f) => f.endsWith(".tgz"));
  if (!found) throw new PluginInstallError("npm pack wrote no package file");
  return found;
}

/**
 * Unpacks a gzipped tarball into `tree`: npm's `package/` folder (or any single top folder) becomes
 * the plugin folder. GNU tar refuses members with `..` and strips leading `/`; links are dropped.
 */
async function extractTgz(file: string, tree: string, staging: string, run: Runner): Promise<void> {
  const out = join(staging, "unpacked");
  mkdirSync(out, { recursive: true });
  await run("tar", ["-xzf", file, "-C", out, "--no-same-owner", "--no-same-permissions"], {
    cwd: staging,
    timeoutMs: 60_000,
  });
  const top = readdirSync(out);
  const single = top.length === 1 && top[0] !== undefined && statSync(join(out, top[0])).isDirectory();
  renameSync(single ? join(out, top[0] as string) : out, tree);
}

/** A packaged plugin's runtime dependencies, without running any package's scripts. */
async function installDependencies(tree: string, run: Runner): Promise<void> {
  const file = join(tree, "package.json");
  if (!existsSync(file)) return;
  let deps: unknown;
  try {
    deps = (JSON.parse(readFileSync(file, "utf8")) as { dependencies?: unknown }).dependencies;
  } catch {
    return;
  }
  if (!deps || typeof deps !== "object" || Object.keys(deps).length === 0) return;
  if (existsSync(join(tree, "node_modules"))) return;
  await run("npm", ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: tree,
    timeoutMs: 300_000,
  });
}

/** The origin `install` recorded, or undefined (a folder placed by hand). */
export function readInstallRecord(dir: string): InstallRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dir, INSTALL_RECORD), "utf8")) as InstallRecord;
    return typeof value.kind === "string" && typeof value.source === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Re-installs `name` from where it came from (its enabled state in config.yaml is kept). */
export async function updatePlugin(options: {
  home: string;
  name: string;
  run?: Runner;
}): Promise<Installed> {
  const dir = installedDir(options.home, options.name);
  const record = readInstallRecord(dir);
  if (!record) {
    throw new PluginInstallError(
      `${dir} was not installed by hermes plugins install, so there is nothing to update it from`,
    );
  }
  const source: InstallSource =
    record.kind === "git"
      ? { kind: "git", url: record.source }
      : record.kind === "npm"
        ? { kind: "npm", spec: record.source }
        : { kind: record.kind, path: record.source };
  const installed = await installFrom(source, {
    home: options.home,
    spec: record.source,
    cwd: options.home,
    force: true,
    ...(options.run ? { run: options.run } : {}),
  });
  if (installed.name !== options.name) {
    throw new PluginInstallError(
      `the source now holds the plugin "${installed.name}", not "${options.name}"; both folders are kept`,
    );
  }
  return installed;
}

/** Deletes the plugin's folder. Throws PluginInstallError when it is not installed. */
export function removePlugin(home: string, name: string): string {
  const dir = installedDir(home, name);
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/** `<home>/plugins/<name>` when it exists; the name is checked so it cannot leave the folder. */
export function installedDir(home: string, name: string): string {
  if (!isValidPluginName(name)) throw new PluginInstallError(`"${name}" is not a plugin name`);
  const dir = join(pluginsDir(home), name);
  if (!existsSync(dir)) {
    throw new PluginInstallError(
      `no plugin named "${name}" in ${pluginsDir(home)} (see hermes plugins list)`,
    );
  }
  return dir;
}
