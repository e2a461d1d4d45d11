/**
 * `hermes acp --setup` and `hermes acp --registry`, as upstream has them. `--setup` is what an
 * editor's terminal authentication runs (`hermes acp` advertises it when no provider is set up):
 * the interactive provider and model choice of `hermes model` on a terminal, then the provider
 * check and the settings entry an editor like Zed needs to start Hermes; exit 0 when a provider is
 * ready. `--registry` prints this install's entry in the ACP agent registry's format
 * (agent-registry-v1, the `acp_registry/agent.json` upstream publishes).
 */
import { realpathSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { ConfigContext } from "../command.js";
import { loadHomeConfig } from "../home-env.js";

/**
 * The command an editor should start: this hermes by absolute path when it runs as `bin/hermes`
 * (an editor launched from a desktop often has a shorter PATH than a shell), else plain `hermes`.
 */
export function hermesCommandPath(argv1: string | undefined = process.argv[1]): string {
  if (!argv1) return "hermes";
  let real: string;
  try {
    real = realpathSync(resolve(argv1));
  } catch {
    return "hermes";
  }
  const bundle = /[/\\]dist[/\\]cli[/\\]hermes\.cjs$/;
  if (bundle.test(real)) return real.replace(bundle, "/bin/hermes");
  return basename(real) === "hermes" ? real : "hermes";
}

/** Zed's `agent_servers` entry (settings.json) that starts Hermes over ACP. */
export function zedEntry(command: string, profile?: string): Record<string, unknown> {
  return {
    agent_servers: {
      Hermes: {
        type: "custom",
        command,
        args: profile ? ["-p", profile, "acp"] : ["acp"],
        env: {},
      },
    },
  };
}

/** This install as an ACP registry entry (agent-registry-v1). */
export function registryEntry(version: string, packageName: string): Record<string, unknown> {
  return {
    $schema: "https://agentclientprotocol.github.io/agent-client-protocol/schemas/agent-registry-v1.json",
    id: "hermes-agent",
    version,
    title: "Hermes Agent",
    description:
      "A personal agent with tools, memory, skills and a terminal; sessions are saved and resumable from the CLI.",
    distribution: { npx: { package: `${packageName}@${version}`, args: ["acp"] } },
    auth: [
      {
        id: "hermes-setup",
        type: "terminal",
        title: "Set up a provider",
        description: "Runs `hermes acp --setup`: choose a provider and model in a terminal.",
        args: ["acp", "--setup"],
      },
    ],
  };
}

export async function acpRegistry(ctx: ConfigContext): Promise<number> {
  const { hermesVersion } = await import("../../util/version.js");
  ctx.io.out(JSON.stringify(registryEntry(hermesVersion(), "hermes-agent"), null, 2));
  return 0;
}

export async function acpSetup(ctx: ConfigContext): Promise<number> {
  const { io } = ctx;
  if (io.stdin.isTTY === true) {
    io.err("Hermes for your editor: choose the provider and model editor sessions use.");
    const { modelCommand } = await import("./model.js");
    const code = await modelCommand.run([], {
      env: io.env,
      stdin: io.stdin,
      stdout: io.stdout,
      stderr: io.stderr,
      ...(ctx.profile ? { profile: ctx.profile } : {}),
    });
    if (code !== 0) return code;
  }
  // Read again: the choice just made is in config.yaml now.
  const fresh = loadHomeConfig(ctx.home, io.env);
  const { providerStatus } = await import("../../acp/server.js");
  const provider = providerStatus({ home: ctx.home, config: fresh.config, env: fresh.env });
  if (provider.ok) {
    io.out(`✓ provider ${provider.resolved.provider}, model ${provider.resolved.model || "(the server's)"}`);
  } else {
    io.out(`✗ no provider yet: ${provider.message}`);
    if (io.stdin.isTTY !== true) io.out("Run `hermes acp --setup` on a terminal to choose one.");
  }
  io.out("\nZed: add this to settings.json (Hermes then appears in the agent panel):");
  io.out(JSON.stringify(zedEntry(hermesCommandPath(), ctx.profile), null, 2));
  io.out("Other editors: start `hermes acp` over stdio; `hermes acp --check` shows what they get.");
  return provider.ok ? 0 : 1;
}
