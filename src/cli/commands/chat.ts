/**
 * `hermes chat` / `hermes -q` / `hermes -z`: one-shot runs; with no prompt on a terminal, the
 * interactive REPL (commands/repl.ts). `--list-tools` and `--list-toolsets` answer from
 * list-tools.ts; the session store and its maintenance are chat-store.ts's.
 */

import { seedBundledSkills } from "../../knowledge/skills/bundled.js";
import { platformToolsets } from "../../tools/platform-tools.js";
import { homeLogger, type Logger } from "../../util/log.js";
import { afterCommand } from "../after-command.js";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";
import { addChatOptions, type ChatFlags, chosenToolsets } from "../flags.js";
import { readAllStdin } from "../io.js";
import { tuneJitForChat } from "../jit-tuning.js";
import { createRenderer, type OutputMode } from "../render.js";
import { startShellHooks } from "./chat-hooks.js";
import { startMcp } from "./chat-mcp.js";
import { startPlugins } from "./chat-plugins.js";
import { openChatStore, saveQueuedWrites } from "./chat-store.js";

/** `hermes chat [options] [prompt...]`; `hermes ARGS` runs this too when ARGS start with a prompt. */
export const chatCommand = defineCommand({
  name: "chat",
  // Messages read `hermes: …` whether the chat was started as `hermes` or `hermes chat`.
  label: "hermes",
  description: "chat with the agent (interactive, or one-shot with -q/-z)",
  needs: "config",
  parse: (cmd) => addChatOptions(cmd).argument("[prompt...]", "prompt to run once (same as -q)"),
  run: (ctx, words: string[], flags: ChatFlags) =>
    runChat(ctx, { ...flags, ...(words.length > 0 && !flags.query ? { query: words.join(" ") } : {}) }),
});

/** Runs a chat with the given flags in a prepared context (`hermes learn` runs its turn here too). */
export async function runChat(ctx: ConfigContext, flags: ChatFlags): Promise<number> {
  const { home, env, config, io } = ctx;
  // `hermes tools` keeps the CLI's choice in platform_toolsets.cli; without one, `toolsets:`.
  const toolsets = chosenToolsets(flags, platformToolsets(config, "cli", config.toolsets));
  if (flags.listToolsets) return (await import("./list-tools.js")).listToolsets(ctx);
  if (flags.listTools) return (await import("./list-tools.js")).listTools(ctx, toolsets);

  // Opens nothing until the first line; every line passes the process's secret redactor.
  const logger = homeLogger(home, config.logging, { component: "cli", verbose: flags.verbose === true });
  if (flags.maxTurns) config.agent.max_turns = flags.maxTurns;
  if (flags.checkpoints) config.checkpoints.enabled = true;
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
      // The profile's home (-p), whose OAuth logins stand in for keys.
      home,
    });
  } catch (error) {
    if (error instanceof NoProviderError) {
      logger.error("no provider", { error: error.message });
      throw new CliFailure(error.message, 2);
    }
    throw error;
  }

  let prompt = flags.oneshot ?? flags.query;
  // `@` references are expanded in a prompt typed on the command line, never in piped text.
  const typedPrompt = prompt !== undefined;
  const interactive = prompt === undefined && io.stdin.isTTY === true;
  if (prompt === undefined && !interactive) {
    prompt = (await readAllStdin(io)).trim();
    if (!prompt && !flags.image)
      throw new CliFailure('no prompt given. Use -q "...", -z "...", or pipe text on stdin.', 2);
  }
  // Read before anything starts, so a wrong path ends the run at once (exit 2) with the reason.
  const image = flags.image !== undefined && !interactive ? await loadImageFlag(flags.image, env) : undefined;
  // A local server and no model named: the model it serves (asked on a terminal when several).
  const { needsServerModel, withServerModel } = await import("../setup/local-model.js");
  if (needsServerModel(runtime)) {
    const { PromptCancelled, terminalPrompter } = await import("../setup/prompter.js");
    try {
      runtime = await withServerModel(runtime, interactive ? { prompter: () => terminalPrompter(io) } : {});
    } catch (error) {
      if (error instanceof PromptCancelled) throw new CliFailure("no model chosen.", 2);
      throw error;
    }
  }

  // After this command's output: a due curator run starts as a detached process (never here).
  const startedAt = new Date();
  afterCommand(async () => {
    const { startCuratorIfDue } = await import("../curator-trigger.js");
    await startCuratorIfDue({ home, config, env, startedAt });
  });

  const mode: OutputMode = flags.oneshot !== undefined ? "oneshot" : flags.quiet ? "quiet" : "normal";
  const ttyApprovals =
    io.stdin.isTTY === true && (io.stderr as NodeJS.WriteStream).isTTY === true && mode !== "oneshot";
  const { isYoloMode } = await import("../../config/precedence.js");
  const { ChatSession } = await import("../../agent/chat-session.js");
  const { askApproval, askClarify, denialNotice, persistAllowlistEntry } = await import("../prompts.js");
  const store = await openChatStore({
    home,
    config,
    required: flags.resume !== undefined || flags.continue !== undefined,
    logger,
    say: io.err,
    env,
  });
  // After the store: on a postgres home the opt-out lists and the skills mirror are current by then.
  seedSkills(home, logger, io.err);
  // MCP servers start in the background; the session's tool list waits for them (toolsReady).
  let show = (message: string): void => io.err(`hermes: warning: ${message}`);
  const warn = (message: string): void => {
    logger.warning(message);
    show(message);
  };
  // Before the session: a hook not yet approved is asked about here (or refused, with how to allow it).
  await startShellHooks({
    home,
    config,
    // `--safe-mode` runs without shell hooks as it runs without plugins.
    env: flags.safeMode === true ? { ...env, HERMES_SAFE_MODE: "1" } : env,
    io,
    canAsk: ttyApprovals,
    acceptHooks: flags.acceptHooks === true,
    warn,
    logger,
  });
  const worktree = await openWorktree(ctx, flags, mode);
  const mcp = await startMcp(config, env, (message) => warn(message), interactive, {
    home,
    cwd: worktree?.path ?? process.cwd(),
    runtime,
  });
  // Enabled plugins add tools to the same registry (and hooks to the process's hook bus).
  const plugins = await startPlugins({
    home,
    config,
    env,
    cwd: worktree?.path ?? process.cwd(),
    safeMode: flags.safeMode === true,
    registry: mcp.registry,
    warn,
  });
  if (plugins.registry) mcp.registry = plugins.registry;
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
      ...(worktree ? { cwd: worktree.path, ephemeralSystemPrompt: worktree.note } : {}),
      store,
      source: "cli",
      // Interactive sessions get a title from the auxiliary model after their first exchange.
      autoTitle: interactive,
      ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
      ...(flags.continue !== undefined ? { continueLast: flags.continue } : {}),
      onWarning: (message) => io.err(`hermes: ${message}`),
      logger,
      ...(interactive ? { onLearned: (line: string) => learned(line) } : {}),
      ...(mcp.registry ? { registry: mcp.registry } : {}),
      ...(plugins.memory ? { memory: plugins.memory } : {}),
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
            onApprovalDenied: (request, denial) => io.err(denialNotice(request, denial)),
          }),
    });
  } catch (error) {
    await mcp.manager?.close();
    await worktree?.finish();
    await store?.close();
    const message = error instanceof Error ? error.message : String(error);
    logger.error("session not opened", { error: message });
    throw new CliFailure(message, 1);
  }
  // A docker/ssh/... backend starts now: a wrong setting or a missing runtime ends the run here
  // (exit 2 or 1, with the fix), never a quiet run on the host after the model was asked.
  try {
    await session.agent.prepareEnvironment();
  } catch (error) {
    await session.close("environment").catch(() => undefined);
    await mcp.manager?.close();
    await store?.close();
    const { EnvironmentError, environmentFailure } = await import("../../environments/index.js");
    if (!(error instanceof EnvironmentError)) throw error;
    const failure = environmentFailure(error);
    logger.error("terminal environment not started", { error: error.message });
    throw new CliFailure(failure.message, failure.exitCode);
  }
  if (session.resumed && mode === "normal" && !interactive) {
    const row = await session.loadRecord();
    const label = row?.title ? `"${row.title}" (${session.id})` : session.id;
    io.err(`↻ Resumed ${label}: ${session.agent.messages.length} messages`);
  }

  // NO_COLOR may come from the home's .env too.
  const color = (io.stdout as NodeJS.WriteStream).isTTY === true && !env["NO_COLOR"];
  const renderer = await createRenderer({
    mode,
    verbose: flags.verbose === true,
    stdout: io.stdout,
    stderr: io.stderr,
    color,
    // An answer read on a terminal is rendered; one piped elsewhere stays markdown.
    markdown:
      (io.stdout as NodeJS.WriteStream).isTTY === true
        ? color && env.TERM !== "dumb"
          ? "ansi"
          : "plain"
        : "raw",
  });

  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts >= 2 || !session.running) {
      io.stderr.write("\n");
      void session.close("interrupted").finally(async () => {
        await store?.close();
        process.exit(130);
      });
      return;
    }
    io.stderr.write("\n⏹ interrupting… (Ctrl+C again to quit)\n");
    session.interrupt();
  };
  // The REPL keeps the terminal in raw mode and handles Ctrl+C itself.
  if (!interactive) process.on("SIGINT", onSigint);
  // Start-up is over: the agent loop's functions tier up later (jit-tuning.ts).
  tuneJitForChat(env);

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
        ...(flags.image !== undefined ? { images: [flags.image] } : {}),
        ...(mcp.start ? { mcp: mcp.start } : {}),
        attachNotices: (print) => {
          show = (message) => print(`warning: ${message}`);
          learned = print;
        },
      });
    }
    let text = prompt ?? "";
    if (typedPrompt) {
      const { expandOneShotReferences } = await import("../oneshot-references.js");
      const expanded = await expandOneShotReferences(text, {
        cwd: session.agent.cwd,
        home,
        env,
        config,
        model: session.model,
      });
      for (const warning of expanded.warnings) io.err(`hermes: warning: ${warning}`);
      if (expanded.blocked)
        throw new CliFailure("the @ references are too large for the model; nothing was sent.", 2);
      if (expanded.attached && mode === "normal") io.err(expanded.attached);
      text = expanded.message;
    }
    const run = session.run(image ? image.content(text) : text);
    for await (const event of run) renderer.handle(event);
    const result = await run.result;
    if (result.reason === "completed") return 0;
    if (result.reason === "interrupted") return 130;
    return 1;
  } finally {
    process.off("SIGINT", onSigint);
    await session.close();
    await mcp.manager?.close();
    await worktree?.finish();
    if (store) await saveQueuedWrites(store);
    await store?.close();
  }
}

/**
 * `-w/--worktree` (or `worktree: true`): the session's own git worktree, announced on stderr (not
 * with -z); `finish` removes it at exit when the session left nothing in it, or says where it stays.
 */
async function openWorktree(ctx: ConfigContext, flags: ChatFlags, mode: OutputMode) {
  const {
    createSessionWorktree,
    finishSessionWorktree,
    worktreeByDefault,
    worktreePromptNote,
    worktreeSync,
  } = await import("../../tools/checkpoints/worktree.js");
  if (!flags.worktree && !worktreeByDefault(ctx.config)) return undefined;
  let worktree: import("../../tools/checkpoints/worktree.js").SessionWorktree;
  try {
    worktree = await createSessionWorktree({
      cwd: process.cwd(),
      home: ctx.home,
      sync: worktreeSync(ctx.config),
    });
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 2);
  }
  for (const note of worktree.notes) ctx.io.err(`hermes: ${note}`);
  if (mode !== "oneshot")
    ctx.io.err(`hermes: working in the worktree ${worktree.path} (branch ${worktree.branch})`);
  return {
    path: worktree.path,
    note: worktreePromptNote(worktree),
    finish: async () => {
      const end = await finishSessionWorktree(worktree);
      if (!end.removed)
        ctx.io.err(`hermes: kept the worktree ${worktree.path} (branch ${worktree.branch}): ${end.why}.`);
    },
  };
}

/** Copies new or updated bundled skills into the home (never over a skill the user changed). */
function seedSkills(home: string, logger: Logger, say: (line: string) => void): void {
  try {
    const result = seedBundledSkills(home);
    for (const error of result.errors) {
      logger.warning("bundled skill not installed", { error });
      say(`hermes: bundled skill not installed: ${error}`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warning("bundled skills not installed", { error: message });
    say(`hermes: bundled skills were not installed: ${message}`);
  }
}

/** `--image PATH` for a one-shot run: the image read and checked, or exit 2 with why not. */
async function loadImageFlag(path: string, env: Record<string, string | undefined>) {
  const { loadImageAttachment, userContent } = await import("../../agent/attachments/images.js");
  const { findBinary } = await import("../../tools/media/shared.js");
  const ffmpeg = findBinary("ffmpeg", env);
  try {
    const image = await loadImageAttachment(path, {
      cwd: process.cwd(),
      ...(env["HOME"] ? { home: env["HOME"] } : {}),
      ...(ffmpeg ? { ffmpeg } : {}),
    });
    return { content: (text: string) => userContent(text, [image]) };
  } catch (error) {
    throw new CliFailure(`--image: ${error instanceof Error ? error.message : String(error)}`, 2);
  }
}
