/**
 * The `hermes` program: the root options (the chat's), the list of commands, and the rule that
 * tells a prompt from a command word. Each command is declared once in its own module with
 * `defineCommand` (cli/command.ts) and loaded only when it runs; COMMANDS holds what `hermes
 * --help` shows without loading any of them.
 */
import { Command, CommanderError } from "commander";
import { hermesVersion } from "../util/version.js";
import { isPromptArgument, PROMPT_RULE, unknownCommandMessage } from "./bare-words.js";
import type { CliCommand, RunOptions } from "./command.js";
import { addChatOptions, type ChatFlags } from "./flags.js";

interface CommandEntry {
  name: string;
  /** One line in `hermes --help`. */
  summary: string;
  /** What `hermes --help` shows after the name (default `[args...]`). */
  usage?: string;
  /** Other names for the command. */
  aliases?: readonly string[];
  /** Imports the command's module (evaluated only now) and returns its declaration. */
  load: () => Promise<CliCommand>;
}

/** Every `hermes` command, in `hermes --help` order. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "chat",
    summary: "chat with the agent (interactive, or one-shot with -q/-z)",
    usage: "[options] [prompt...]",
    load: async () => (await import("./commands/chat.js")).chatCommand,
  },
  {
    name: "setup",
    summary: "first-run wizard: provider, key or local server, model, terminal, gateway, tools, agent",
    usage: "[section] [--non-interactive] [--reset] [--quick]",
    load: async () => (await import("./commands/setup.js")).setupCommand,
  },
  {
    name: "model",
    summary: "choose the provider and model: model [provider:]MODEL | --list | (a picker on a terminal)",
    usage: "[spec] [--list] [--refresh] [--global]",
    load: async () => (await import("./commands/model.js")).modelCommand,
  },
  {
    name: "config",
    summary: "show or change config.yaml: show | get KEY | set KEY VALUE | path | env-path | edit | check",
    usage: "[options] [action] [args...]",
    load: async () => (await import("./commands/config.js")).configCommand,
  },
  {
    name: "doctor",
    summary:
      "check config, providers, files and tools (✓/⚠/✗ with the fix); --fix repairs what it safely can",
    usage: "[--fix]",
    load: async () => (await import("./commands/doctor.js")).doctorCommand,
  },
  {
    name: "status",
    summary: "what this home is set up with: model, keys, logins, backend, platforms, gateway, jobs",
    usage: "[--all] [--deep]",
    load: async () => (await import("./commands/status.js")).statusCommand,
  },
  {
    name: "dump",
    summary: "a plain-text setup summary to paste into a bug report (keys redacted)",
    usage: "[--show-keys]",
    load: async () => (await import("./commands/dump.js")).dumpCommand,
  },
  {
    name: "sessions",
    summary:
      "recorded sessions: list | show | search | export | delete | prune | rename | stats | optimize | repair",
    load: async () => (await import("./commands/sessions.js")).sessionsCommand,
  },
  {
    name: "insights",
    summary: "usage report from recorded sessions: tokens, cost, tools, activity",
    usage: "[options]",
    load: async () => (await import("./commands/insights.js")).insightsCommand,
  },
  {
    name: "skills",
    summary:
      "skills: list | view | search | install | uninstall | check | audit | pending | approve | reject | diff | reset | list-modified | opt-out | opt-in | lint | publish | snapshot",
    load: async () => (await import("./commands/skills.js")).skillsCommand(),
  },
  {
    name: "bundles",
    summary: "skill bundles (/<name> loads several skills): list | show | create | delete | reload",
    load: async () => (await import("./commands/skills/bundles.js")).bundlesCommand,
  },
  {
    name: "learn",
    summary: 'distil a reusable skill from a folder, a file, a URL, "this chat" (-r/-c) or notes',
    usage: "[options] <what...>",
    load: async () => (await import("./commands/learn.js")).learnCommand,
  },
  {
    name: "memory",
    summary: "memory: status | setup [honcho] | off | reset | pending | approve | reject",
    load: async () => (await import("./commands/memory.js")).memoryCommand,
  },
  {
    name: "curator",
    summary: "the skill curator: status, run, pause/resume, pin/unpin, archive/restore, backup, rollback",
    load: async () => (await import("./commands/curator.js")).curatorCommand,
  },
  {
    name: "journey",
    aliases: ["learning"],
    summary: "what the agent learned when: memories and skills created, patched, archived",
    usage: "[options]",
    load: async () => (await import("./commands/journey.js")).journeyCommand,
  },
  {
    name: "auth",
    summary:
      "API keys per provider (credential pools in auth.json) and OAuth logins: add [--type oauth] | list | remove | reset | status | logout",
    load: async () => (await import("./commands/auth.js")).authCommand,
  },
  {
    name: "login",
    summary: "log in with OAuth: nous (default) | openai-codex | anthropic | copilot",
    usage: "[provider]",
    load: async () => (await import("./commands/login.js")).loginCommand,
  },
  {
    name: "logout",
    summary: "forget an OAuth login (default: the active one)",
    usage: "[provider]",
    load: async () => (await import("./commands/login.js")).logoutCommand,
  },
  {
    name: "mcp",
    summary: "MCP servers whose tools the agent uses: add | remove | list | test",
    load: async () => (await import("./commands/mcp.js")).mcpCommand,
  },
  {
    name: "acp",
    summary: "serve the agent to editors (Zed, VS Code, JetBrains) over the Agent Client Protocol; --check",
    usage: "[--check] [--yolo]",
    load: async () => (await import("./commands/acp.js")).acpCommand,
  },
  {
    name: "plugins",
    summary: "plugins in <home>/plugins: list | install | enable | disable | remove | update",
    load: async () => (await import("./commands/plugins.js")).pluginsCommand,
  },
  {
    name: "api-server",
    summary: "serve the agent as an OpenAI-compatible API (needs API_SERVER_KEY)",
    load: async () => (await import("./commands/api-server.js")).apiServerCommand(),
  },
  {
    name: "gateway",
    summary:
      "the long-running gateway: run | start | stop | status (chat platforms, API server, webhooks, cron)",
    load: async () => (await import("./commands/gateway.js")).gatewayCommand(),
  },
  {
    name: "dashboard",
    summary: "the web dashboard's JSON API: --port --host --no-open --stop --status",
    usage: "[options]",
    load: async () => (await import("./commands/dashboard.js")).dashboardCommand,
  },
  {
    name: "cron",
    summary: "scheduled jobs: list | create | edit | pause | resume | run | remove | status | tick",
    load: async () => (await import("./commands/cron.js")).cronCommand,
  },
  {
    name: "rl",
    summary:
      "Atropos RL environments: list | serve ENV --api-url URL (rollouts through the agent, scored, sent)",
    load: async () => (await import("./commands/rl.js")).rlCommand,
  },
  {
    name: "batch",
    summary: "run a JSONL dataset of prompts in parallel into ShareGPT trajectories: run | status | list",
    usage: "<run|status|list|distributions> [args...]",
    load: async () => (await import("./commands/batch.js")).batchCommand,
  },
  {
    name: "trajectories",
    summary: "training-data trajectories: compress IN OUT --target-tokens N (summarise the middle turns)",
    usage: "compress <in> <out> [options]",
    load: async () => (await import("./commands/trajectories.js")).trajectoriesCommand,
  },
  {
    name: "webhook",
    summary: "webhook routes: subscribe | list | remove | test",
    load: async () => (await import("./commands/webhook.js")).webhookCommand(),
  },
  {
    name: "send",
    summary: "deliver a message to a chat without the agent: send -t PLATFORM[:CHAT[:THREAD]] MESSAGE",
    load: async () => (await import("./commands/send.js")).sendCommand,
  },
  {
    name: "whatsapp",
    summary: "link a personal WhatsApp account to the gateway (QR code or --phone pairing code)",
    load: async () => (await import("./commands/whatsapp.js")).whatsappCommand,
  },
  {
    name: "pairing",
    summary: "DM pairing: approve | list | revoke | clear-pending",
    load: async () => (await import("./commands/pairing.js")).pairingCommand,
  },
  {
    name: "hooks",
    summary: "shell hooks from config.yaml and their approvals: list | test EVENT | revoke COMMAND | doctor",
    load: async () => (await import("./commands/hooks.js")).hooksCommand,
  },
  {
    name: "checkpoints",
    summary: "the checkpoint store behind /rollback: status | list | diff | rollback | prune | clear",
    load: async () => (await import("./commands/checkpoints.js")).checkpointsCommand,
  },
  {
    name: "profile",
    summary:
      "profiles (independent homes): list | use | create | delete | show | alias | describe | info | rename | export | import",
    load: async () => (await import("./commands/profile.js")).profileCommand(COMMANDS),
  },
  {
    name: "backup",
    summary: "back up the Hermes home (all profiles) to a zip; --quick snapshots the current state",
    usage: "[options]",
    load: async () => (await import("./commands/backup.js")).backupCommand,
  },
  {
    name: "import",
    summary: "restore a `hermes backup` zip into the current home",
    usage: "[options] <file>",
    load: async () => (await import("./commands/import.js")).importCommand,
  },
  {
    name: "state",
    summary: "move the state between state.db and PostgreSQL: migrate --to postgres [URL] | export DIR",
    load: async () => (await import("./commands/state.js")).stateCommand,
  },
  {
    name: "tools",
    summary: "toolsets per platform: list | enable | disable <toolset|server:tool> [--platform] | --summary",
    usage: "[options] [action] [args...]",
    load: async () => (await import("./commands/tools.js")).toolsCommand,
  },
  {
    name: "logs",
    summary: "view and follow the log files: [agent|errors|gateway|list] -n -f --level --session --since",
    usage: "[options] [log]",
    load: async () => (await import("./commands/logs.js")).logsCommand,
  },
  {
    name: "completion",
    summary: "print a shell completion script: completion bash|zsh|fish",
    usage: "<shell>",
    // Reads the other commands' declarations: given the list, so it never imports this module.
    load: async () => (await import("./commands/completion.js")).completionCommand(COMMANDS),
  },
  {
    name: "update",
    summary: "compare the installed version with the registry's and say how to upgrade (--check)",
    usage: "[options]",
    load: async () => (await import("./commands/update.js")).updateCommand,
  },
  {
    name: "prompt-size",
    summary: "fixed per-request overhead: prompt layers and tool schemas in bytes and tokens",
    load: async () => (await import("./commands/prompt-size.js")).promptSizeCommand(),
  },
];

const CHAT = COMMANDS.find((c) => c.name === "chat") as CommandEntry;

/**
 * `hermes WORD ...` where WORD is not a prompt by the rule of bare-words.ts: `help [COMMAND]` and
 * `version` answer here; anything else is an unknown command (exit 2, suggestions, no model request).
 */
async function bareWord(program: Command, word: string, rest: string[], outer: RunOptions): Promise<number> {
  if (word === "help") {
    if (rest[0] === undefined) {
      program.outputHelp();
      return 0;
    }
    const entry = COMMANDS.find((c) => c.name === rest[0]);
    if (entry) return (await entry.load()).run(["--help"], outer);
    program.outputHelp();
    return 2;
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
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) })
    // Commands parse their own options once loaded; the list shows what each takes.
    .configureHelp({ subcommandTerm: (cmd) => `${cmd.name()} ${cmd.usage()}` });
  // `-p NAME` and `-v` before the command word belong to the root; the command gets them here.
  const outer = (): RunOptions => {
    const { profile, verbose } = program.opts<ChatFlags>();
    return { ...(profile ? { profile } : {}), ...(verbose ? { verbose } : {}) };
  };

  addChatOptions(program)
    .argument("[prompt...]", "a prompt to run once (same as -q) when it contains a space or ends in ? ! or .")
    .addHelpText("after", `\nPrompts: ${PROMPT_RULE}`)
    .action(async (words: string[], flags: ChatFlags) => {
      const first = words[0];
      if (first !== undefined && !flags.query && !flags.oneshot && !isPromptArgument(first)) {
        exitCode = await bareWord(program, first, words.slice(1), outer());
        return;
      }
      // `hermes ARGS` is `hermes chat ARGS`: the chat parses the same line again.
      exitCode = await (await CHAT.load()).run(argv);
    });

  for (const entry of COMMANDS) {
    program
      .command(entry.name)
      .description(entry.summary)
      .aliases([...(entry.aliases ?? [])])
      .usage(entry.usage ?? "[args...]")
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .passThroughOptions()
      .argument("[args...]")
      .action(async (args: string[]) => {
        exitCode = await (await entry.load()).run(args, outer());
      });
  }

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
      return 2;
    }
    throw error;
  }
  return exitCode;
}
