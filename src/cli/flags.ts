/**
 * The options of `hermes` and `hermes chat` (the same set: `hermes ARGS` is `hermes chat ARGS`
 * when its first word is a prompt). Light on purpose: program.ts declares them on the root for
 * `hermes --help` without loading the chat command.
 */
import { type Command, InvalidArgumentError } from "commander";

export interface ChatFlags {
  query?: string;
  oneshot?: string;
  model?: string;
  provider?: string;
  baseUrl?: string;
  toolsets?: string;
  maxTurns?: number;
  yolo?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  listTools?: boolean;
  listToolsets?: boolean;
  profile?: string;
  /** `-r ID|TITLE`: resume that session. */
  resume?: string;
  /** `-c [TITLE]`: continue the latest session (of that title's lineage). */
  continue?: boolean | string;
  /** `--ignore-rules`: no SOUL.md, project context file or memory snapshot. */
  ignoreRules?: boolean;
  /** `--safe-mode` (or HERMES_SAFE_MODE=1): no plugins load this run. */
  safeMode?: boolean;
  /** `--personality NAME`: overlay for this session. */
  personality?: string;
  /** `--checkpoints`: snapshot the working directory before file changes this run (`/rollback`). */
  checkpoints?: boolean;
  /** `-w/--worktree`: work in a git worktree of the current repository made for this session. */
  worktree?: boolean;
  /** `--image PATH`: an image sent with the prompt (with the first message in the REPL). */
  image?: string;
  /** `--accept-hooks`: approve shell hooks from config.yaml not yet approved, without asking. */
  acceptHooks?: boolean;
  /** `--voice`: start the REPL with voice mode on (`/voice on`). */
  voice?: boolean;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError(`--max-turns expects a positive whole number, got "${value}".`);
  }
  return n;
}

/** Declares the chat options on `cmd` (the root program or `hermes chat`). */
export function addChatOptions(cmd: Command): Command {
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
    .option("--safe-mode", "load no plugins this run (also HERMES_SAFE_MODE=1)")
    .option("--personality <name>", "personality overlay for this session (see /personality)")
    .option(
      "--checkpoints",
      "snapshot the working directory before the agent changes files (undo with /rollback)",
    )
    .option(
      "-w, --worktree",
      "work in a new git worktree of this repository, removed at exit when left clean",
    )
    .option("--image <path>", "attach an image (PNG, JPEG, GIF, WebP) to the prompt")
    .option("--accept-hooks", "run shell hooks from config.yaml without asking first (recorded as approved)")
    .option("--voice", "start with voice mode on: push-to-talk with the record key (see /voice)")
    .option("--list-tools", "list the tools this configuration offers, then exit")
    .option("--list-toolsets", "list the toolsets, then exit")
    .option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home");
}

/** The toolsets a chat uses: `-t a,b` or config.yaml's `toolsets`. */
export function chosenToolsets(flags: ChatFlags, configured: readonly string[]): string[] {
  if (!flags.toolsets) return [...configured];
  return flags.toolsets
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
