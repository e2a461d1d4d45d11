/**
 * `hermes chat` / `hermes -q` / `hermes -z`: one-shot runs; with no prompt on a terminal, the
 * interactive REPL (commands/repl.ts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { seedBundledSkills } from "../../knowledge/skills/bundled.js";
import { homeLogger, type Logger } from "../../util/log.js";
import { afterCommand } from "../after-command.js";
import type { ChatFlags } from "../flags.js";
import { type OutputMode, Renderer } from "../render.js";

export async function runChat(flags: ChatFlags): Promise<number> {
  const { loadCliContext } = await import("../home-env.js");
  const loaded = await loadCliContext(flags.profile);
  if ("exitCode" in loaded) return loaded.exitCode;
  const { home, env, config } = loaded;
  // Opens nothing until the first line; every line passes the process's secret redactor.
  const logger = homeLogger(home, config.logging, { component: "cli", verbose: flags.verbose === true });
  if (flags.maxTurns) config.agent.max_turns = flags.maxTurns;
  const toolsets = flags.toolsets
    ? flags.toolsets
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : config.toolsets;

  if (flags.listToolsets) {
    const { TOOLSETS } = await import("../../tools/toolsets.js");
    for (const [name, spec] of Object.entries(TOOLSETS)) {
      process.stdout.write(`${name.padEnd(20)} ${spec.description}\n`);
    }
    return 0;
  }
  if (flags.listTools) {
    const { createBuiltinRegistry } = await import("../../tools/builtin.js");
    const { resolveToolsets } = await import("../../tools/toolsets.js");
    const { mcpToolsets } = await import("../../tools/mcp/toolsets.js");
    const mcp = await startMcp(config, env, (m) => process.stderr.write(`hermes: warning: ${m}\n`), false);
    await mcp.manager?.ready;
    const registry = mcp.registry ?? createBuiltinRegistry();
    const servers = mcpToolsets(registry);
    const resolved = resolveToolsets(
      toolsets.length > 0 ? [...toolsets, ...Object.keys(servers)] : toolsets,
      {
        custom: { ...servers, ...config.custom_toolsets },
        disabled: config.agent.disabled_toolsets,
        knownTools: new Set(registry.names()),
      },
    );
    const names = await registry.available(resolved.tools, { env, config });
    for (const name of names) {
      const tool = registry.get(name);
      const summary = (tool?.description.split(/(?<=\.)\s/)[0] ?? "").slice(0, 90);
      process.stdout.write(`${name.padEnd(16)} ${tool?.toolset.padEnd(10) ?? ""} ${summary}\n`);
    }
    if (resolved.unknown.length > 0)
      process.stderr.write(`unknown toolsets: ${resolved.unknown.join(", ")}\n`);
    await mcp.manager?.close();
    return 0;
  }

  const { resolveRuntime, NoProviderError } = await import("../../ai/resolve.js");
  let runtime: import("../../ai/resolve.js").ResolvedRuntime;
  try {
    runtime = resolveRuntime({
      flags: {
        ...(flags.model ? { model: flags.model } : {}),
        ...(flags.provider ? { provider: flags.provider } : {}),
        ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      },
      config,
      env,
    });
  } catch (error) {
    if (error instanceof NoProviderError || error instanceof Error) {
      process.stderr.write(`${error.message}\n`);
      logger.error("no provider", { error: error.message });
      return 2;
    }
    throw error;
  }

  let prompt = flags.oneshot ?? flags.query;
  const interactive = prompt === undefined && process.stdin.isTTY === true;
  if (prompt === undefined && !interactive) {
    prompt = (await readStdin()).trim();
    if (!prompt) {
      process.stderr.write('hermes: no prompt given. Use -q "...", -z "...", or pipe text on stdin.\n');
      return 2;
    }
  }

  // After this command's output: a due curator run starts as a detached process (never here).
  const startedAt = new Date();
  afterCommand(async () => {
    const { startCuratorIfDue } = await import("../curator-trigger.js");
    await startCuratorIfDue({ home, config, env, startedAt });
  });

  const mode: OutputMode = flags.oneshot !== undefined ? "oneshot" : flags.quiet ? "quiet" : "normal";
  const ttyApprovals = process.stdin.isTTY === true && process.stderr.isTTY === true && mode !== "oneshot";
  const { isYoloMode } = await import("../../config/precedence.js");
  const { ChatSession } = await import("../../agent/chat-session.js");
  const { askApproval, askClarify, denialNotice, persistAllowlistEntry } = await import("../prompts.js");
  seedSkills(home, logger);
  const store = await openStore(
    home,
    config,
    flags.resume !== undefined || flags.continue !== undefined,
    logger,
  );
  if (store && "exitCode" in store) return store.exitCode;
  // MCP servers start in the background; the session's tool list waits for them (toolsReady).
  let show = (message: string): void => void process.stderr.write(`hermes: warning: ${message}\n`);
  const warn = (message: string): void => {
    logger.warning(message);
    show(message);
  };
  const mcp = await startMcp(config, env, (message) => warn(message), interactive);
  // The REPL's line for what a background review saved; a one-shot run prints nothing extra.
  let learned = (_line: string): void => undefined;

  let session: import("../../agent/chat-session.js").ChatSession;
  try {
    session = await ChatSession.open({
      config,
      home,
      env,
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.provider ? { provider: flags.provider } : {}),
      ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      resolved: runtime,
      toolsets,
      yolo: flags.yolo === true || isYoloMode(env),
      platform: "cli",
      ...(flags.ignoreRules ? { skipContextFiles: true, skipMemory: true } : {}),
      ...(flags.personality ? { personality: flags.personality } : {}),
      store,
      source: "cli",
      // Interactive sessions get a title from the auxiliary model after their first exchange.
      autoTitle: interactive,
      ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
      ...(flags.continue !== undefined ? { continueLast: flags.continue } : {}),
      onWarning: (message) => process.stderr.write(`hermes: ${message}\n`),
      logger,
      ...(interactive ? { onLearned: (line: string) => learned(line) } : {}),
      ...(mcp.registry ? { registry: mcp.registry } : {}),
      ...(mcp.manager ? { toolsReady: mcp.manager.ready } : {}),
      ...(ttyApprovals
        ? {
            onApproval: askApproval,
            onClarify: askClarify,
            persistAlwaysApproval: (key: string) =>
              persistAllowlistEntry(home, config, key).catch((error: unknown) =>
                warn(
                  `"always" was not saved to command_allowlist: ${error instanceof Error ? error.message : String(error)}`,
                ),
              ),
          }
        : {
            // Nobody is asked, so say on stderr (even with -z) what was refused and how to allow it.
            onApprovalDenied: (request, denial) =>
              void process.stderr.write(`${denialNotice(request, denial)}\n`),
          }),
    });
  } catch (error) {
    await mcp.manager?.close();
    store?.close();
    const message = error instanceof Error ? error.message : String(error);
    logger.error("session not opened", { error: message });
    process.stderr.write(`hermes: ${message}\n`);
    return 1;
  }
  if (session.resumed && mode === "normal" && !interactive) {
    const row = session.record();
    const label = row?.title ? `"${row.title}" (${session.id})` : session.id;
    process.stderr.write(`↻ Resumed ${label}: ${session.agent.messages.length} messages\n`);
  }

  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const renderer = new Renderer({
    mode,
    verbose: flags.verbose === true,
    stdout: process.stdout,
    stderr: process.stderr,
    color,
  });

  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts >= 2 || !session.running) {
      process.stderr.write("\n");
      void session.close("interrupted").finally(() => {
        store?.close();
        process.exit(130);
      });
      return;
    }
    process.stderr.write("\n⏹ interrupting… (Ctrl+C again to quit)\n");
    session.interrupt();
  };
  // The REPL keeps the terminal in raw mode and handles Ctrl+C itself.
  if (!interactive) process.on("SIGINT", onSigint);

  try {
    if (interactive) {
      const { runRepl } = await import("./repl.js");
      return await runRepl({
        session,
        home,
        config,
        env,
        flags,
        toolsets,
        ...(mcp.start ? { mcp: mcp.start } : {}),
        attachNotices: (print) => {
          show = (message) => print(`warning: ${message}`);
          learned = print;
        },
      });
    }
    const run = session.run(prompt ?? "");
    for await (const event of run) renderer.handle(event);
    const result = await run.result;
    if (result.reason === "completed") return 0;
    if (result.reason === "interrupted") return 130;
    return 1;
  } finally {
    process.off("SIGINT", onSigint);
    await session.close();
    await mcp.manager?.close();
    if (store) await saveQueuedWrites(store);
    store?.close();
  }
}

/** How long a finished run waits at exit for a locked state.db before writing the unsaved-writes file. */
const EXIT_SAVE_WAIT_MS = 30_000;

/**
 * Writes still queued behind another process's lock get a bounded last chance at exit; Ctrl+C
 * stops the wait (close() then puts them in the unsaved-writes file and says where).
 */
async function saveQueuedWrites(
  store: import("../../state/queued-store.js").QueuedSessionStore,
): Promise<void> {
  if (store.pendingWrites === 0) return;
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.on("SIGINT", onSigint);
  try {
    await store.drain(EXIT_SAVE_WAIT_MS, stop.signal);
  } finally {
    process.off("SIGINT", onSigint);
  }
}

interface ChatMcp {
  /** The session's registry: built-ins plus MCP tools (absent: the agent builds its own). */
  registry?: import("../../tools/registry.js").ToolRegistry;
  /** The running servers, once started. */
  manager?: import("../../tools/mcp/manager.js").McpManager;
  /** The manager, started (with no servers) on first use: `/reload-mcp` in a chat that had none. */
  start?: () => Promise<import("../../tools/mcp/manager.js").McpManager>;
}

/**
 * Starts config.yaml's MCP servers when any is enabled. An interactive chat always gets a registry
 * of its own so `/reload-mcp` can add servers later; with no server nothing MCP is loaded.
 */
async function startMcp(
  config: import("../../config/defaults.js").HermesConfig,
  env: Record<string, string | undefined>,
  onWarning: (message: string) => void,
  interactive: boolean,
): Promise<ChatMcp> {
  const servers = config["mcp_servers"];
  const configured = servers !== undefined && servers !== null;
  if (!configured && !interactive) return {};
  const { hasEnabledMcpServers } = await import("../../tools/mcp/config.js");
  const enabled = configured && hasEnabledMcpServers(servers);
  if (!enabled && !interactive) return {};
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const registry = createBuiltinRegistry();
  const out: ChatMcp = { registry };
  const launch = async (initial: unknown) => {
    const { startMcpServers } = await import("../../tools/mcp/manager.js");
    out.manager = startMcpServers({ config: initial, registry, env, onWarning });
    return out.manager;
  };
  if (enabled) await launch(servers);
  if (interactive) out.start = async () => out.manager ?? launch({});
  return out;
}

/**
 * Opens the home's `state.db`. A database that cannot be opened costs the session its record, not
 * the conversation: a warning, then an unrecorded run. Resuming needs it, so then it is an error.
 */
async function openStore(
  home: string,
  config: import("../../config/defaults.js").HermesConfig,
  required: boolean,
  logger: Logger,
): Promise<import("../../state/queued-store.js").QueuedSessionStore | { exitCode: number } | null> {
  const { openRecordingStore } = await import("../../state/recording-store.js");
  try {
    // Moves an unreadable state.db aside (and says so); queues writes while another process holds it.
    const store = openRecordingStore(home, {
      notify: (message) => {
        logger.warning(message);
        process.stderr.write(`hermes: ${message}\n`);
      },
    });
    const legacy = join(home, "sessions");
    if (existsSync(legacy)) {
      try {
        const imported = store.importLegacyJsonl(legacy);
        if (imported.sessions > 0) {
          process.stderr.write(
            `hermes: imported ${imported.sessions} sessions (${imported.messages} messages) from ${legacy}\n`,
          );
        }
      } catch (error) {
        logger.warning("legacy sessions not imported", { path: legacy, error: String(error) });
        process.stderr.write(`hermes: could not import ${legacy}: ${String(error)}\n`);
      }
    }
    if (config.sessions.auto_prune) {
      try {
        const pruned = store.autoPrune({
          retentionDays: config.sessions.retention_days,
          minIntervalHours: config.sessions.min_interval_hours,
          vacuum: config.sessions.vacuum_after_prune,
        });
        if (pruned.sessions > 0) {
          process.stderr.write(
            `hermes: pruned ${pruned.sessions} sessions older than ${config.sessions.retention_days} days (sessions.auto_prune)\n`,
          );
        }
      } catch (error) {
        logger.warning("automatic session pruning failed", { error: String(error) });
        process.stderr.write(`hermes: automatic session pruning failed: ${String(error)}\n`);
      }
    }
    return store;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error("state.db not opened", { error: message });
    if (required) {
      process.stderr.write(`hermes: ${message}\n`);
      return { exitCode: 1 };
    }
    process.stderr.write(`hermes: ${message}\nhermes: this conversation will not be saved.\n`);
    return null;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Copies new or updated bundled skills into the home (never over a skill the user changed). */
function seedSkills(home: string, logger: Logger): void {
  try {
    const result = seedBundledSkills(home);
    for (const error of result.errors) {
      logger.warning("bundled skill not installed", { error });
      process.stderr.write(`hermes: bundled skill not installed: ${error}\n`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warning("bundled skills not installed", { error: message });
    process.stderr.write(`hermes: bundled skills were not installed: ${message}\n`);
  }
}
