/**
 * How this copy of Hermes was installed, told from where its files are, and how to upgrade it that
 * way. Pure: the caller passes the package root (the real path, symlinks resolved) and whether it
 * holds a `.git`.
 */
import { sep } from "node:path";

export type InstallKind =
  | "git"
  | "npm-global"
  | "pnpm-global"
  | "yarn-global"
  | "bun-global"
  | "npx"
  | "npm-local"
  | "unknown";

export interface InstallMethod {
  kind: InstallKind;
  /** For the user: "a git checkout in /src/hermes", "a global npm install". */
  description: string;
  /** The commands that upgrade it, in order (argv form), run in `cwd`. */
  steps: string[][];
  cwd?: string;
  /** Whether `hermes update` may run the steps itself (after the user agrees). */
  automatic: boolean;
}

/** Compares two versions (`1.2.3`, `1.2.3-beta.1`) by semver precedence: -1, 0 or 1. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = "", pre] = v.trim().replace(/^v/, "").split("+")[0]?.split(/-(.*)/s) ?? [];
    return { nums: core.split(".").map((n) => Number.parseInt(n, 10) || 0), pre: pre ? pre.split(".") : [] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  // A release ranks above its pre-releases.
  if (x.pre.length === 0 || y.pre.length === 0) return Math.sign(y.pre.length - x.pre.length);
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn && Number(p) !== Number(q)) return Math.sign(Number(p) - Number(q));
    if (pn !== qn) return pn ? -1 : 1;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

/**
 * The install method of the package at `root` named `name`. `hasGit`: `root/.git` exists (a
 * clone or a worktree).
 */
export function detectInstallMethod(root: string, name: string, hasGit: boolean): InstallMethod {
  const path = root.split(sep).join("/");
  const latest = `${name}@latest`;
  if (hasGit) {
    return {
      kind: "git",
      description: `a git checkout in ${root}`,
      steps: [
        ["git", "pull", "--ff-only"],
        ["npm", "ci"],
        ["npm", "run", "build"],
      ],
      cwd: root,
      automatic: true,
    };
  }
  if (path.includes("/_npx/")) {
    return {
      kind: "npx",
      description: "npx's cache",
      steps: [["npx", latest]],
      automatic: false,
    };
  }
  if (/\/pnpm\/global\//.test(path) || path.includes("/.pnpm-global/")) {
    return {
      kind: "pnpm-global",
      description: "a global pnpm install",
      steps: [["pnpm", "add", "-g", latest]],
      automatic: true,
    };
  }
  if (/\/yarn\/global\/node_modules\//.test(path) || path.includes("/.yarn/global/")) {
    return {
      kind: "yarn-global",
      description: "a global yarn install",
      steps: [["yarn", "global", "add", latest]],
      automatic: true,
    };
  }
  if (path.includes("/.bun/install/global/")) {
    return {
      kind: "bun-global",
      description: "a global bun install",
      steps: [["bun", "add", "-g", latest]],
      automatic: true,
    };
  }
  // npm's global prefix: <prefix>/lib/node_modules/<name> (Unix) or <prefix>/node_modules/<name> (Windows).
  if (path.endsWith(`/lib/node_modules/${name}`) || /\/npm\/node_modules\/[^/]+$/.test(path)) {
    return {
      kind: "npm-global",
      description: "a global npm install",
      steps: [["npm", "install", "-g", latest]],
      automatic: true,
    };
  }
  const project = path.match(/^(.*)\/node_modules\/[^/]+$/)?.[1];
  if (project !== undefined) {
    return {
      kind: "npm-local",
      description: `a dependency of the project in ${project}`,
      steps: [["npm", "install", latest]],
      cwd: project,
      automatic: false,
    };
  }
  return {
    kind: "unknown",
    description: `a copy in ${root}`,
    steps: [["npm", "install", "-g", latest]],
    automatic: false,
  };
}
