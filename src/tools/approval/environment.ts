/**
 * Judging a command by where it runs (issue: approval in an environment). On the host (the local
 * machine, or an ssh host, which is someone's machine too) every finding stands. Inside an isolated
 * environment, upstream Hermes asks nothing: the container is the boundary. Here that holds only
 * for what cannot reach the host:
 *
 * - hardline findings are refused everywhere;
 * - with the Docker (or Podman) socket mounted, the container controls the host's containers, so
 *   every command is judged as on the host, and visible use of the socket needs approval itself;
 * - commands that change network policy (iptables, nft, ip route...) are judged as on the host;
 * - with host directories mounted, any finding that may touch a path is judged as on the host
 *   (a symlink made in the container, a `cd`, a variable can all lead into a mount, and the
 *   analyser cannot see the container's filesystem), with mounted paths mapped to their host paths
 *   for the protected list; only findings about the container's own processes and system are
 *   dropped;
 * - without mounts, only findings that act beyond the machine (a force push, SQL against a
 *   database that may live elsewhere) remain.
 */
import { DOCKER_SOCKET_PATHS, hostPathOf } from "../../environments/mounts.js";
import type { EnvIsolation } from "../../environments/types.js";
import { analyseCommand, verdict } from "./analyse.js";
import { realPathOf } from "./protected-paths.js";
import type { AnalysisContext, CommandVerdict, Finding } from "./types.js";

/** Findings whose harm is outside the machine the command runs on. */
const BEYOND_THE_MACHINE = new Set(["git_force_push", "sql_drop", "sql_delete_all", "sql_truncate"]);

/** Findings about the environment's own processes, services and devices: nothing of the host's. */
const CONTAINER_ONLY = new Set([
  "kill_all",
  "killall",
  "pkill_force",
  "kill_hermes",
  "hermes_gateway_stop",
  "systemctl_stop",
  "system_power",
  "system_runlevel",
  "sudo_shell",
  "sudo_stdin",
  "mkfs",
  "partition_table",
  "device_write",
]);

/** Network-policy tools: their effect depends on how the environment's network is wired. */
const NETWORK_POLICY =
  /(^|[^\w.-])(iptables|ip6tables|iptables-restore|nft|ufw|firewall-cmd|tc|sysctl|ip\s+(route|rule|link|addr|address|netns))(?![\w.-])/;

/** Container engine clients that speak to a daemon through its socket. */
const ENGINE_CLIENTS =
  /(^|[^\w.-])(docker|docker-compose|podman|podman-remote|nerdctl|buildah|ctr|crictl)(?![\w.-])/;

/**
 * The command text with quoting undone (`d''ocker`, `"doc"ker`, `d\ocker`, `$'\x64ocker'`), so a
 * spelling trick does not hide a tool name from the checks above. Over-matching only asks more.
 */
export function unquoted(command: string): string {
  const ansiC = command.replace(/\$'((?:[^'\\]|\\.)*)'/g, (_m, body: string) =>
    body
      .replace(/\\x([0-9a-fA-F]{1,2})/g, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
      .replace(/\\u([0-9a-fA-F]{1,8})/g, (_x, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
      .replace(/\\([0-7]{1,3})/g, (_x, o: string) => String.fromCharCode(Number.parseInt(o, 8)))
      .replace(/\\(.)/g, "$1"),
  );
  return ansiC.replace(/["'\\]/g, "");
}

/** Whether `command` visibly uses the container engine or its API socket. */
export function usesDockerSocket(command: string): boolean {
  const text = unquoted(command);
  return (
    ENGINE_CLIENTS.test(text) ||
    /--unix-socket|docker\.sock|podman\.sock|DOCKER_HOST|CONTAINER_HOST/.test(text) ||
    DOCKER_SOCKET_PATHS.some((p) => text.includes(p))
  );
}

/** Whether `command` changes network policy (firewall, routes, links, kernel network settings). */
export function touchesNetworkPolicy(command: string): boolean {
  return NETWORK_POLICY.test(unquoted(command));
}

/**
 * The analysis context for a command run in `isolation`: paths on a mount resolve to the host
 * path behind them (so the protected list judges what is really touched); other paths are the
 * environment's own and are not resolved against the host's filesystem.
 */
export function environmentAnalysisContext(host: AnalysisContext, isolation: EnvIsolation): AnalysisContext {
  if (isolation.isolation === "host") return host;
  const mounts = isolation.mounts;
  const hostReal = host.realPath ?? realPathOf;
  return {
    ...host,
    realPath: (abs) => {
      const mapped = hostPathOf(abs, mounts);
      return mapped ? hostReal(mapped.hostPath) : abs;
    },
  };
}

/** The verdict on `command` run in an environment with `isolation` (see the file comment). */
export function analyseInEnvironment(
  command: string,
  ctx: AnalysisContext,
  isolation: EnvIsolation,
): CommandVerdict {
  if (isolation.isolation === "host") return analyseCommand(command, ctx);
  const full = analyseCommand(command, environmentAnalysisContext(ctx, isolation));
  const extra: Finding[] = [];
  if (isolation.dockerSocket && usesDockerSocket(command)) {
    extra.push({
      key: "docker_socket",
      reason:
        "uses the host's container engine through the socket mounted into the environment (as powerful as root on the host)",
    });
  }
  if (isolation.dockerSocket || touchesNetworkPolicy(command)) return verdict([...full.findings, ...extra]);
  const mounted = isolation.mounts.length > 0;
  const kept = full.findings.filter(
    (f) => f.hardline === true || BEYOND_THE_MACHINE.has(f.key) || (mounted && !CONTAINER_ONLY.has(f.key)),
  );
  return verdict(kept);
}
