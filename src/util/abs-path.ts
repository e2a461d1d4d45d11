import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

/** Resolves a user- or model-supplied path: `~` expands to the home directory, relative paths to `cwd`. */
export function resolvePath(path: string, cwd: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}
