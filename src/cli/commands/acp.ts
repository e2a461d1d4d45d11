/**
 * `hermes acp`: Hermes as an Agent Client Protocol agent over stdio, for editors (Zed, VS Code,
 * JetBrains). stdout carries only protocol frames; problems go to stderr and the home's logs.
 * `hermes acp --check` prints what an editor would get (the initialize answer, the provider and
 * the tools of an editor session) and exits 0 when it is ready, 1 when not. `--setup` (what an
 * editor's terminal authentication runs) and `--registry` live in acp-setup.ts.
 */
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";

/** The `agent_servers` entry of Zed's settings.json that starts Hermes. */
export const ZED_SNIPPET = `{
  "agent_servers": {
    "Hermes": {
      "type": "custom",
      "command": "hermes",
      "args": ["acp"],
      "env": {}
    }
  }
}`;

export const acpCommand = defineCommand({
  name: "acp",
  description:
    "Serve Hermes to an editor over the Agent Client Protocol (stdio JSON-RPC): sessions recorded with " +
    "source acp (resume them with `hermes -r ID`), approvals asked in the editor.",
  needs: "config",
  parse: (cmd) =>
    cmd
      .option("--check", "print what an editor would get (capabilities, provider, tools) and exit 0/1")
      .option(
        "--setup",
        "choose the provider and model on a terminal (an editor's terminal sign-in runs this), then print the editor entry",
      )
      .option("--registry", "print this install's ACP agent registry entry (agent-registry-v1 JSON)")
      .option("--yolo", "approve dangerous commands without asking (hardline commands stay refused)")
      .option("--version", "print the version and exit")
      .addHelpText(
        "after",
        "\nZed: add this to settings.json (Hermes appears in the agent panel; `hermes acp --setup` prints it " +
          "with this hermes's full path):\n" +
          ZED_SNIPPET +
          "\n\nToolset: platform_toolsets.acp (default hermes-acp). Approvals: approvals.mode, " +
          "approvals.timeout; `Allow always` writes command_allowlist.",
      ),
  run: (ctx, flags: AcpFlags) => runAcp(ctx, flags),
});

interface AcpFlags {
  check?: boolean;
  setup?: boolean;
  registry?: boolean;
  yolo?: boolean;
  version?: boolean;
}

async function runAcp(ctx: ConfigContext, flags: AcpFlags): Promise<number> {
  if (flags.version) {
    const { hermesVersion } = await import("../../util/version.js");
    ctx.io.out(`hermes acp ${hermesVersion()}`);
    return 0;
  }
  if (flags.check) return (await import("./acp-check.js")).acpCheck(ctx);
  if (flags.setup) return (await import("./acp-setup.js")).acpSetup(ctx);
  if (flags.registry) return (await import("./acp-setup.js")).acpRegistry(ctx);
  const { home, config, env } = ctx;
  const { protectSecrets } = await import("../secrets.js");
  // Conversations, answers and tool output leave through stdout: redacted like any surface.
  protectSecrets({ home, env, config });
  const { homeLogger } = await import("../../util/log.js");
  const logger = homeLogger(home, config.logging, { component: "acp", verbose: ctx.verbose });
  const { durabilityOptions, openRecordingStore } = await import("../../state/recording-store.js");
  const store = openRecordingStore(home, {
    open: durabilityOptions(config.state),
    notify: (message) => ctx.io.err(`hermes acp: state.db: ${message}`),
  });
  // Shell hooks and enabled plugins guard editor sessions as they guard a chat (plugin tools join
  // each session); stdout is the protocol's, so nobody is asked about a shell hook.
  const { startUnattendedHooks } = await import("./chat-hooks.js");
  const extendRegistry = await startUnattendedHooks({
    home,
    config,
    env,
    io: ctx.io,
    logger,
    warn: (message) => ctx.io.err(`hermes acp: ${message}`),
  });
  const { persistAllowlistEntry } = await import("../prompts.js");
  const { AcpServer } = await import("../../acp/server.js");
  const server = new AcpServer({
    home,
    config,
    env,
    store,
    yolo: flags.yolo === true,
    persistAlways: (key) =>
      persistAllowlistEntry(home, config, key).catch((error: unknown) => {
        ctx.io.err(
          `hermes acp: "always" was not saved to command_allowlist: ${error instanceof Error ? error.message : String(error)}`,
        );
      }),
    logger,
    onWarning: (message) => ctx.io.err(`hermes acp: ${message}`),
    ...(extendRegistry ? { extendRegistry } : {}),
  });
  try {
    await server.serveStdio();
  } catch (error) {
    throw new CliFailure(
      `the editor connection failed: ${error instanceof Error ? error.message : String(error)}`,
      1,
    );
  } finally {
    // Writes queued behind another process's lock on state.db are waited for, not lost.
    const { saveQueuedWrites } = await import("./chat-store.js");
    await saveQueuedWrites(store).catch(() => undefined);
    await store.close();
  }
  return 0;
}
