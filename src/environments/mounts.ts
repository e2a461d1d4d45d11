/**
 * Host directories seen from inside an environment (`EnvMount`): which host path an environment
 * path is, and which mounts a path covers. Pure; the guards use it to judge only what reaches the
 * host (issue: approval in an environment).
 */
import { posix } from "node:path";
import type { EnvMount } from "./types.js";

function norm(p: string): string {
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

function within(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/**
 * The host path behind `envPath` (absolute, inside the environment), or undefined when it is not
 * on a mount. The most specific (longest) mount wins, as in the kernel's mount table.
 */
export function hostPathOf(
  envPath: string,
  mounts: readonly EnvMount[],
): { hostPath: string; mount: EnvMount } | undefined {
  const path = norm(envPath);
  let best: EnvMount | undefined;
  for (const m of mounts) {
    const at = norm(m.envPath);
    if (within(path, at) && (!best || at.length > norm(best.envPath).length)) best = m;
  }
  if (!best) return undefined;
  const rest = path.slice(norm(best.envPath).length).replace(/^\//, "");
  return { hostPath: rest === "" ? best.hostPath : posix.join(best.hostPath, rest), mount: best };
}

/** Mounts at or below `envPath`: what a recursive change of `envPath` would reach on the host. */
export function mountsUnder(envPath: string, mounts: readonly EnvMount[]): EnvMount[] {
  const path = norm(envPath);
  return mounts.filter((m) => within(norm(m.envPath), path));
}

/** Paths of the Docker (or Podman) API socket, whose holder controls the host's containers. */
export const DOCKER_SOCKET_PATHS: readonly string[] = [
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/run/podman/podman.sock",
  "/var/run/podman/podman.sock",
];
