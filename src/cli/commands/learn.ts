/**
 * `hermes learn <what>`: distil a reusable skill from a folder, a file, a web page, a recorded
 * session ("this chat" with -r ID or -c) or notes, in one agent turn (`/learn` in a chat or the
 * REPL does the same). The material is gathered first (bounded, scanned, credentials never read);
 * the turn then runs like `hermes -q`: progress on stderr, the agent's answer on stdout. The
 * skill is written by `skill_manage`, so `skills.write_approval` stages it like any skill write.
 * Exit codes: 0 the turn ran, 1 it failed, 2 usage (nothing to learn from, missing tools).
 */
import { Command, Option } from "commander";
import type { ChatFlags } from "../flags.js";
import { createCliIo, parseSubcommands, type SubcommandOptions } from "../subcommands.js";

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
  profile?: string;
}

/** Runs `hermes learn <argv…>` and returns the exit code. */
export async function runLearnCommand(
  argv: readonly string[],
  options: SubcommandOptions = {},
): Promise<number> {
  const io = createCliIo(options);
  let exitCode = 0;
  const program = new Command("hermes learn")
    .description("distil a reusable skill from a folder, a file, a URL, a session or notes")
    .argument("<what...>", 'a folder, a file, an https URL, "this chat" (with -r/-c), or notes')
    .option("-m, --model <model>", "model id (overrides model.default)")
    .option("--provider <id>", "provider id")
    .option("--base-url <url>", "OpenAI-compatible endpoint URL")
    .option("-t, --toolsets <list>", "comma-separated toolsets (default from config)")
    .option("-Q, --quiet", "no progress output, only the answer")
    .option("-v, --verbose", "show full tool arguments and results")
    .option("--yolo", "approve dangerous commands without asking")
    .option("-r, --resume <id|title>", 'the session "this chat" means (it continues there)')
    .option("-c, --continue [title]", 'continue the most recent session ("this chat")')
    .addOption(new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home"))
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .action(async (words: string[], flags: LearnFlags) => {
      exitCode = await learnCli(words.join(" "), { ...flags, profile: flags.profile ?? options.profile });
    });
  // `hermes learn <what>` has no subcommands: parse the words as they are.
  const failed = await parseSubcommands(program, argv.length > 0 ? argv : ["--help"], (error) => {
    io.err(`hermes learn: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  });
  return failed ?? exitCode;
}

/** Gathers the material for `what`, then runs the learning turn through `hermes chat`'s one-shot path. */
export async function learnCli(what: string, flags: LearnFlags): Promise<number> {
  const { loadCliContext } = await import("../home-env.js");
  const loaded = await loadCliContext(flags.profile);
  if ("exitCode" in loaded) return loaded.exitCode;
  const { home, env, config } = loaded;
  const [{ prepareLearnTurn, classifyLearnInput }, { createBuiltinRegistry }, { resolveToolsets }] =
    await Promise.all([
      import("../../agent/learn/index.js"),
      import("../../tools/builtin.js"),
      import("../../tools/toolsets.js"),
    ]);
  const fromSession = flags.resume !== undefined || flags.continue !== undefined;
  if (classifyLearnInput(what, process.cwd()).kind === "chat" && !fromSession) {
    process.stderr.write(
      `hermes learn: "${what.trim()}" needs a recorded session: add -r ID (hermes sessions list) or -c for the latest.\n`,
    );
    return 2;
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
    process.stderr.write(`hermes learn: ${turn.error.replace(/^Usage: \/learn/, "Usage: hermes learn")}\n`);
    return 2;
  }
  if (!flags.quiet) for (const line of turn.notice) process.stderr.write(`${line}\n`);
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
    ...(flags.profile ? { profile: flags.profile } : {}),
  };
  return runChat(chat);
}
