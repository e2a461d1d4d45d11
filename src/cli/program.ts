/**
 * Argument parsing for every `hermes` command. Command modules are imported inside their actions so
 * that a command loads only what it uses.
 */
import { Command, CommanderError, Option } from "commander";
import { hermesVersion } from "../util/version.js";
import { isPromptArgument, PROMPT_RULE, unknownCommandMessage } from "./bare-words.js";
import type { ChatFlags } from "./flags.js";

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new CommanderError(
      2,
      "hermes.invalidArgument",
      `--max-turns expects a positive whole number, got "${value}"`,
    );
  }
  return n;
}

function addChatOptions(cmd: Command): Command {
  return cmd
    .option("-q, --query <prompt>", "run one prompt and exit (progress on stderr, answer on stdout)")
    .option("-z, --oneshot <prompt>", "run one prompt; stdout is the final answer and nothing else")
    .option("-m, --model <model>", "model id (overrides model.default)")
    .option("--provider <id>", "provider id (openrouter, nous, openai-api, custom, ollama, ...)")
    .option("--base-url <url>", "OpenAI-compatible endpoint URL")
    .option("-t, --toolsets <list>", "comma-separated toolsets (default from config: hermes-cli)")
    .option("--max-turns <n>", "model calls allowed per turn (default 90)", positiveInt)
    .option("--yolo", "approve dangerous commands without asking (never hardline ones or protected paths)")
    .option("-Q, --quiet", "no progress output, only the answer")
    .option("-v, --verbose", "show full tool arguments, results and error details")
    .option("-r, --resume <id|title>", "resume a saved session by id, id prefix or title")
    .option("-c, --continue [title]", "continue the most recent session (or the newest of a title)")
    .option("--ignore-rules", "load no SOUL.md, AGENTS.md/.hermes.md/.cursorrules or memory this session")
    .option("--personality <name>", "personality overlay for this session (see /personality)")
    .option("--list-tools", "list the tools this configuration offers, then exit")
    .option("--list-toolsets", "list the toolsets, then exit")
    .addOption(new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home"));
}

/**
 * `hermes WORD ...` where WORD is not a prompt by the rule of bare-words.ts: `help` and `version`
 * answer here; anything else is an unknown command (exit 2, suggestions, no model request).
 */
function bareWord(program: Command, word: string, rest: string[]): number {
  if (word === "help") {
    const target = rest[0] === undefined ? undefined : program.commands.find((c) => c.name() === rest[0]);
    (target ?? program).outputHelp();
    return rest[0] === undefined || target ? 0 : 2;
  }
  if (word === "version" && rest.length === 0) {
    process.stdout.write(`hermes ${hermesVersion()}\n`);
    return 0;
  }
  const commands = [...program.commands.flatMap((c) => [c.name(), ...c.aliases()]), "help", "version"];
  process.stderr.write(unknownCommandMessage([word, ...rest], commands));
  return 2;
}

/** Parses `argv` and runs the command; resolves to the process exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  let exitCode = 0;
  const program = new Command("hermes")
    .description("Hermes: a self-improving AI agent with tools, memory and skills")
    .version(`hermes ${hermesVersion()}`, "-V, --version", "print the version")
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  addChatOptions(program)
    .argument("[prompt...]", "a prompt to run once (same as -q) when it contains a space or ends in ? ! or .")
    .addHelpText("after", `\nPrompts: ${PROMPT_RULE}`)
    .action(async (words: string[], flags: ChatFlags) => {
      const first = words[0];
      if (first !== undefined && !flags.query && !flags.oneshot && !isPromptArgument(first)) {
        exitCode = bareWord(program, first, words.slice(1));
        return;
      }
      const { runChat } = await import("./commands/chat.js");
      exitCode = await runChat({
        ...flags,
        ...(words.length > 0 && !flags.query ? { query: words.join(" ") } : {}),
      });
    });

  addChatOptions(
    program.command("chat").description("chat with the agent (interactive, or one-shot with -q/-z)"),
  )
    .argument("[prompt...]", "prompt to run once (same as -q)")
    .action(async (words: string[], flags: ChatFlags) => {
      const { runChat } = await import("./commands/chat.js");
      const parent = program.opts<ChatFlags>();
      exitCode = await runChat({
        ...(parent.profile ? { profile: parent.profile } : {}),
        ...flags,
        ...(words.length > 0 && !flags.query ? { query: words.join(" ") } : {}),
      });
    });

  program
    .command("config")
    .description(
      "show or change config.yaml: show | get KEY | set KEY VALUE | path | env-path | edit | check",
    )
    .argument("[action]", "show, get, set, path, env-path, edit or check", "show")
    .argument("[args...]")
    .option("--json", "JSON output where it applies")
    .addOption(new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home"))
    .action(async (action: string, args: string[], flags: { json?: boolean; profile?: string }) => {
      const [{ runConfigCommand }, { homeFor }] = await Promise.all([
        import("./commands/config.js"),
        import("./home-env.js"),
      ]);
      const home = homeFor(flags.profile ?? program.opts<ChatFlags>().profile);
      if (typeof home !== "string") {
        exitCode = home.exitCode;
        return;
      }
      exitCode = await runConfigCommand(action, args, {
        home,
        env: process.env,
        ...(flags.json ? { json: true } : {}),
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });

  // The subcommands and their options live in commands/sessions.ts, parsed there once it loads.
  program
    .command("sessions")
    .description(
      "recorded sessions: list | show | search | export | delete | prune | rename | stats | optimize | repair",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a sessions command and its options (hermes sessions --help)")
    .action(async (args: string[]) => {
      const { runSessionsCommand } = await import("./commands/sessions.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runSessionsCommand(args, profile ? { profile } : {});
    });

  program
    .command("insights")
    .description("usage report from recorded sessions: tokens, cost, tools, activity")
    .option("--days <n>", "look back this many days", "30")
    .option("--source <source>", "only sessions from this source (cli, telegram, cron, …)")
    .option("--json", "print the report as JSON")
    .addOption(new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home"))
    .action(async (flags: { days: string; source?: string; json?: boolean; profile?: string }) => {
      const { runInsightsCommand } = await import("./commands/insights.js");
      const profile = flags.profile ?? program.opts<ChatFlags>().profile;
      exitCode = await runInsightsCommand({ ...flags, ...(profile ? { profile } : {}) });
    });

  program
    .command("skills")
    .description(
      "skills: list | view | search | install | uninstall | check | audit | pending | approve | reject | diff",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a skills command and its options (hermes skills --help)")
    .action(async (args: string[]) => {
      const { runSkillsCommand } = await import("./commands/skills.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runSkillsCommand(args, profile ? { profile } : {});
    });

  program
    .command("learn")
    .description('distil a reusable skill from a folder, a file, a URL, "this chat" (-r/-c) or notes')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "what to learn from and options (hermes learn --help)")
    .action(async (args: string[]) => {
      const { runLearnCommand } = await import("./commands/learn.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runLearnCommand(args, profile ? { profile } : {});
    });

  program
    .command("memory")
    .description("memory: status | setup [honcho] | off | reset | pending | approve | reject")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a memory command and its options (hermes memory --help)")
    .action(async (args: string[]) => {
      const { runMemoryCommand } = await import("./commands/memory.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runMemoryCommand(args, profile ? { profile } : {});
    });

  program
    .command("auth")
    .description(
      "API keys per provider (credential pools in auth.json): add | list | remove | reset | status",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "an auth command and its options (hermes auth --help)")
    .action(async (args: string[]) => {
      const { runAuthCommand } = await import("./commands/auth.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runAuthCommand(args, profile ? { profile } : {});
    });

  program
    .command("mcp")
    .description("MCP servers whose tools the agent uses: add | remove | list | test")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "an mcp command and its options (hermes mcp --help)")
    .action(async (args: string[]) => {
      const { runMcpCommand } = await import("./commands/mcp.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runMcpCommand(args, profile ? { profile } : {});
    });

  program
    .command("api-server")
    .description("serve the agent as an OpenAI-compatible API (needs API_SERVER_KEY)")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "options: --host, --port (hermes api-server --help)")
    .action(async (args: string[]) => {
      const { runApiServerCommand } = await import("./commands/api-server.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runApiServerCommand(args, profile ? { profile } : {});
    });

  program
    .command("gateway")
    .description(
      "the long-running gateway: run | start | stop | status (chat platforms, API server, webhooks, cron)",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a gateway command and its options (hermes gateway --help)")
    .action(async (args: string[]) => {
      const { runGatewayCommand } = await import("./commands/gateway.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runGatewayCommand(args, profile ? { profile } : {});
    });

  program
    .command("cron")
    .description("scheduled jobs: list | create | edit | pause | resume | run | remove | status | tick")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a cron command and its options (hermes cron --help)")
    .action(async (args: string[]) => {
      const { runCronCommand } = await import("./commands/cron.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runCronCommand(args, profile ? { profile } : {});
    });

  program
    .command("webhook")
    .description("webhook routes: subscribe | list | remove | test")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a webhook command and its options (hermes webhook --help)")
    .action(async (args: string[]) => {
      const { runWebhookCommand } = await import("./commands/webhook.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runWebhookCommand(args, profile ? { profile } : {});
    });

  program
    .command("send")
    .description("deliver a message to a chat without the agent: send -t PLATFORM[:CHAT[:THREAD]] MESSAGE")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "options and the message (hermes send --help)")
    .action(async (args: string[]) => {
      const { runSendCommand } = await import("./commands/send.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runSendCommand(args, profile ? { profile } : {});
    });

  program
    .command("pairing")
    .description("DM pairing: approve | list | revoke | clear-pending")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a pairing command and its arguments (hermes pairing --help)")
    .action(async (args: string[]) => {
      const { runPairingCommand } = await import("./commands/pairing.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runPairingCommand(args, profile ? { profile } : {});
    });

  program
    .command("curator")
    .description("the skill curator: status, run, pause/resume, pin/unpin, archive/restore, backup, rollback")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "a curator command and its arguments (hermes curator --help)")
    .action(async (args: string[]) => {
      const { runCuratorCommand } = await import("./commands/curator.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runCuratorCommand(args, profile ? { profile } : {});
    });

  program
    .command("journey")
    .alias("learning")
    .description("what the agent learned when: memories and skills created, patched, archived")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "options (hermes journey --help)")
    .action(async (args: string[]) => {
      const { runJourneyCommand } = await import("./commands/journey.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runJourneyCommand(args, profile ? { profile } : {});
    });

  program
    .command("prompt-size")
    .description("fixed per-request overhead: prompt layers and tool schemas in bytes and tokens")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument("[args...]", "options (hermes prompt-size --help)")
    .action(async (args: string[]) => {
      const { runPromptSizeCommand } = await import("./commands/prompt-size.js");
      const profile = program.opts<ChatFlags>().profile;
      exitCode = await runPromptSizeCommand(args, profile ? { profile } : {});
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.code === "commander.help"
      ) {
        return 0;
      }
      if (error.code === "hermes.invalidArgument") process.stderr.write(`hermes: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  return exitCode;
}
