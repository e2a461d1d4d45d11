/**
 * The docker and podman backends (`terminal.backend: docker | podman`): one module, the CLI named
 * by the kind (`HERMES_DOCKER_BINARY` may point docker at another binary).
 */
import { backendKind } from "../index.js";
import type { BackendContext, BackendModule, DoctorCheck } from "../types.js";
import { cli } from "./cli.js";
import { cliFailure, DockerEnvironment } from "./environment.js";
import { resolveDockerSettings } from "./settings.js";

export { DockerEnvironment, LABEL } from "./environment.js";
export { type DockerSettings, resolveDockerSettings } from "./settings.js";

function kindOf(ctx: BackendContext): "docker" | "podman" {
  return backendKind(ctx.config) === "podman" ? "podman" : "docker";
}

/** The docker CLI's own environment: the stripped child env (DOCKER_HOST and the like stay). */
function clientEnv(ctx: BackendContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(ctx.childEnv)) if (v !== undefined) env[k] = v;
  return env;
}

export function create(ctx: BackendContext): DockerEnvironment {
  return new DockerEnvironment(resolveDockerSettings(ctx, kindOf(ctx)), ctx.home, clientEnv(ctx));
}

/** `hermes doctor`: the CLI is installed, the daemon answers, the image is present. */
export async function doctor(ctx: BackendContext): Promise<DoctorCheck[]> {
  const settings = resolveDockerSettings(ctx, kindOf(ctx));
  const env = clientEnv(ctx);
  const checks: DoctorCheck[] = [];
  const version = await cli(settings.binary, ["version", "--format", "{{.Server.Version}}"], {
    env,
    timeoutMs: 30_000,
  });
  if (version.code !== 0) {
    const error = cliFailure(settings, version.stderr, version.missing);
    checks.push({ name: settings.kind, ok: false, detail: error.message, fix: error.fix });
    return checks;
  }
  checks.push({
    name: settings.kind,
    ok: true,
    detail: `${settings.binary}: server ${version.stdout.trim()}`,
  });
  const image = await cli(settings.binary, ["image", "inspect", "--format", "{{.Id}}", settings.image], {
    env,
  });
  checks.push(
    image.code === 0
      ? { name: `${settings.kind} image`, ok: true, detail: `${settings.image} is present` }
      : {
          name: `${settings.kind} image`,
          ok: false,
          detail: `${settings.image} is not present (it is pulled at start when a registry is reachable)`,
          fix: `${settings.binary} pull ${settings.image}, or set terminal.docker_image`,
        },
  );
  return checks;
}

const module: BackendModule = { create, doctor };
export default module;
