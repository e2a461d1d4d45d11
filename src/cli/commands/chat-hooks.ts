/**
 * Shell hooks for a chat: registered on the process's hook bus before the session opens, after
 * asking about any hook not yet approved when the chat runs on a terminal (the same condition as
 * dangerous-command approvals). A one-shot run without a terminal asks nobody: such a hook is not
 * run, and stderr says how to allow it.
 */
import type { ConsentRequest } from "../../agent/shell-hooks/register.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { Logger } from "../../util/log.js";
import type { CliIo } from "../io.js";

export interface ChatHookOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  io: CliIo;
  /** Whether the user can be asked on this terminal. */
  canAsk: boolean;
  /** `--accept-hooks`. */
  acceptHooks: boolean;
  /** A warning line (stderr, or the REPL's notice line once it runs). */
  warn: (message: string) => void;
  logger: Logger;
}

/** Registers the configured shell hooks; a no-op costing one lookup when there are none. */
export async function startShellHooks(options: ChatHookOptions): Promise<void> {
  const section = options.config["hooks"];
  if (!section || (typeof section === "object" && Object.keys(section).length === 0)) return;
  const { loadShellHooks, reportShellHooks } = await import("../../agent/shell-hooks/register.js");
  const { processHooks } = await import("../../agent/hooks.js");
  const report = await loadShellHooks({
    bus: processHooks(),
    config: options.config,
    home: options.home,
    env: options.env,
    acceptHooks: options.acceptHooks,
    ...(options.canAsk ? { ask: (request: ConsentRequest) => askConsent(options.io, request) } : {}),
    onRunWarning: options.warn,
  });
  for (const spec of report.registered) {
    options.logger.info("shell hook registered", { event: spec.event, command: spec.command });
  }
  reportShellHooks(report, options.warn);
}

async function askConsent(io: CliIo, request: ConsentRequest): Promise<boolean> {
  const { spec } = request;
  const { PromptCancelled, terminalPrompter } = await import("../setup/prompter.js");
  const prompter = terminalPrompter(io);
  try {
    prompter.say("");
    prompter.say(
      request.changed
        ? "⚠ A shell hook you approved has changed since: its script is not what you approved."
        : "⚠ Hermes is about to register a shell hook that runs a command on your behalf.",
    );
    prompter.say(`    Event:   ${spec.event}`);
    prompter.say(`    Command: ${spec.command}`);
    if (spec.matcher) prompter.say(`    Matcher: ${spec.matcher}`);
    if (request.fingerprint.path) prompter.say(`    Script:  ${request.fingerprint.path}`);
    prompter.say(
      "  It runs with your user's rights on every matching event. Only approve commands you trust.",
    );
    return await prompter.confirm("Allow this hook to run?", false);
  } catch (error) {
    if (error instanceof PromptCancelled) return false;
    throw error;
  } finally {
    prompter.close();
  }
}

/**
 * The hooks of a surface where nobody can be asked (editors, batches, RL rollouts, cron, the API
 * server): the config's shell hooks (one not yet approved is refused, with how to allow it) and the
 * enabled plugins, whose hooks then guard every agent of the process as they guard a chat. Returns
 * what copies the plugins' tools into a registry (undefined: no plugin loaded).
 */
export async function startUnattendedHooks(options: {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  io: CliIo;
  logger: Logger;
  warn: (message: string) => void;
}): Promise<((registry: import("../../tools/registry.js").ToolRegistry) => void) | undefined> {
  const { home, config, env, io, logger, warn } = options;
  await startShellHooks({ home, config, env, io, canAsk: false, acceptHooks: false, warn, logger });
  const { startSurfacePlugins } = await import("./chat-plugins.js");
  return startSurfacePlugins({ home, config, env, warn });
}
