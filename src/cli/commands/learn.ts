/**
 * `hermes learn <what>`: distil a reusable skill from a folder, a file, a web page, a recorded
 * session ("this chat" with -r ID or -c) or notes, in one agent turn (`/learn` in a chat or the
 * REPL does the same). The material is gathered first (bounded, scanned, credentials never read);
 * the turn then runs like `hermes -q`: progress on stderr, the agent's answer on stdout. The
 * skill is written by `skill_manage`, so `skills.write_approval` stages it like any skill write.
 * Exit codes: 0 the turn ran, 1 it failed, 2 usage (nothing to learn from, missing tools).
 */
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";
import type { ChatFlags } from "../flags.js";

export interface LearnFlags {
  model?: string;
  provider?: string;
  baseUrl?: string;
  toolsets?: string;
  quiet?: boolean;
  verbose?: boolean;
  yolo?: boolean;
  resume?: string;
  continue?: boolean | string;
}

/** `hermes learn <what...>`. */
export const learnCommand = defineCommand({
  name: "learn",
  description: "distil a reusable skill from a folder, a file, a URL, a session or notes",
  needs: "config",
  parse: (cmd) =>
    cmd
      .argument("<what...>", 'a folder, a file, an https URL, "this chat" (with -r/-c), or notes')
      .option("-m, --model <model>", "model id (overrides model.default)")
      .option("--provider <id>", "provider id")
      .option("--base-url <url>", "OpenAI-compatible endpoint URL")
      .option("-t, --toolsets <list>", "comma-separated toolsets (default from config)")
      .option("-Q, --quiet", "no progress output, only the answer")
      .option("-v, --verbose", "show full tool arguments and results")
      .option("--yolo", "approve dangerous commands without asking")
      .option("-r, --resume <id|title>", 'the session "this chat" means (it continues there)')
      .option("-c, --continue [title]", 'continue the most recent session ("this chat")'),
  run: (ctx, words: string[], flags: LearnFlags) => learnCli(ctx, words.join(" "), flags),
});

/** Runs `hermes learn <argv…>` (tests and the library); no words shows the help. */
export const runLearnCommand: typeof learnCommand.run = (argv, options) =>
  learnCommand.run(argv.length > 0 ? argv : ["--help"], options);

/** Gathers the material for `what`, then runs the learning turn through `hermes chat`'s one-shot path. */
export async function learnCli(ctx: ConfigContext, what: string, flags: LearnFlags): Promise<number> {
  const { home, env, config, io } = ctx;
  const [{ prepareLearnTurn, classifyLearnInput }, { createBuiltinRegistry }, { resolveToolsets }] =
    await Promise.all([
      import("../../agent/learn/index.js"),
      import("../../tools/builtin.js"),
      import("../../tools/toolsets.js"),
    ]);
  const fromSession = flags.resume !== undefined || flags.continue !== undefined;
  if (classifyLearnInput(what, process.cwd()).kind === "chat" && !fromSession) {
    throw new CliFailure(
      `"${what.trim()}" needs a recorded session: add -r ID (hermes sessions list) or -c for the latest.`,
      2,
    );
  }
  const toolsets = flags.toolsets
    ? flags.toolsets
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : config.toolsets;
  const registry = createBuiltinRegistry();
  const resolved = resolveToolsets(toolsets, {
    custom: config.custom_toolsets,
    disabled: config.agent.disabled_toolsets,
    knownTools: new Set(registry.names()),
  });
  const tools = await registry.available(resolved.tools, {
    env,
    config: config as unknown as Record<string, unknown>,
    home,
  });
  const turn = prepareLearnTurn({
    what,
    cwd: process.cwd(),
    home,
    env,
    config: config as unknown as Record<string, unknown>,
    conversationLength: fromSession ? 1 : 0,
    tools,
  });
  if (!turn.ok) {
    throw new CliFailure(turn.error.replace(/^Usage: \/learn/, "Usage: hermes learn"), 2);
  }
  if (!flags.quiet) for (const line of turn.notice) io.err(line);
  const { runChat } = await import("./chat.js");
  const chat: ChatFlags = {
    query: turn.prompt,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.toolsets ? { toolsets: flags.toolsets } : {}),
    ...(flags.quiet ? { quiet: true } : {}),
    ...(flags.verbose ? { verbose: true } : {}),
    ...(flags.yolo ? { yolo: true } : {}),
    ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
    ...(flags.continue !== undefined ? { continue: flags.continue } : {}),
    ...(ctx.profile ? { profile: ctx.profile } : {}),
  };
  return runChat(ctx, chat);
}
