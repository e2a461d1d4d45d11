/**
 * The one wrapper every `hermes` subcommand runs through. A command declares its name, its
 * arguments and options (commander), what it needs (nothing, the home, or the home with `.env`
 * and config.yaml) and a `run` that returns the exit code; the wrapper owns the rest:
 *
 * - io: stdout, stderr, stdin, the environment and the clock come from `RunOptions` (tests inject
 *   them) through `ctx.io`; a command never touches `process.stdout` itself;
 * - the profile: `-p NAME` before the command (`hermes -p work send …`, passed in as
 *   `options.profile`) or after it, on the command or any of its subcommands (added to each);
 * - the home and config: resolved and loaded before `run`, warnings printed once;
 * - failures: a thrown `CliFailure` prints `hermes NAME: message` and exits with its code; a
 *   ProfileNameError or ConfigError exits 2; `expected(error)` maps the command's own domain errors;
 *   anything else is unexpected: exit 1 with its message, the stack only with `-v` / `--verbose`;
 * - usage errors: commander's message (as `hermes NAME: …`) and exit 2; `--help` exit 0.
 *
 * Declaring a command (a single action; for subcommands, declare them in `parse` with
 * `cmd.command("list")…action(action((ctx, flags) => …))`):
 *
 * ```ts
 * export const journeyCommand = defineCommand({
 *   name: "journey",
 *   description: "what the agent learned, day by day",
 *   needs: "config",
 *   parse: (cmd) => cmd.argument("[day]", "YYYY-MM-DD (default: today)").option("--json", "print JSON"),
 *   run: async (ctx, day: string | undefined, flags: { json?: boolean }) => {
 *     if (day && !/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new CliFailure(`expected YYYY-MM-DD, got "${day}".`, 2);
 *     ctx.io.out(await journal(ctx.home, ctx.config, day, flags.json === true));
 *     return 0;
 *   },
 * });
 * ```
 *
 * then one line in program.ts's COMMANDS: `{ name: "journey", summary: "…", load: async () =>
 * (await import("./commands/journey.js")).journeyCommand }`, so the module loads only when run.
 */
import { Command, CommanderError, Option } from "commander";
import { ConfigError, ProfileError, ProfileNameError } from "../config/errors.js";
import { type HomeConfig, homeFor, loadHomeConfig } from "./home-env.js";
import { type CliIo, type CliIoOptions, createCliIo } from "./io.js";

/** A failure with a message for the user and an exit code; no stack trace. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = "CliFailure";
  }
}

/** What the wrapper prepares before `run`: nothing, the home path, or the home with its config. */
export type Needs = "nothing" | "home" | "config";

export interface CommandContext {
  io: CliIo;
  /** The profile named with `-p` anywhere on the line, if any. */
  profile: string | undefined;
  /** `-v` / `--verbose` anywhere on the line. */
  verbose: boolean;
}
export interface HomeContext extends CommandContext {
  home: string;
}
/** `env` is the process environment with the home's `.env` underneath it. */
export interface ConfigContext extends HomeContext, HomeConfig {}

export type ContextFor<N extends Needs> = N extends "config"
  ? ConfigContext
  : N extends "home"
    ? HomeContext
    : CommandContext;

/** An action: the context, then commander's action arguments (positionals, options, the Command). */
export type ActionBody<C, A extends unknown[]> = (ctx: C, ...args: A) => Promise<number> | number;
/** Wraps an action body for `.action(…)`: context, exit code and failures are the wrapper's. */
export type Action<C> = <A extends unknown[]>(body: ActionBody<C, A>) => (...args: A) => Promise<void>;

export interface CommandSpec<N extends Needs, C, A extends unknown[]> {
  /** The word after `hermes`. */
  name: string;
  /** First line of `hermes NAME --help`. */
  description: string;
  needs: N;
  /** Declares arguments, options and subcommands on `cmd`; `-p` and a hidden `-v` are added after. */
  parse?: (cmd: Command, action: Action<C>) => void;
  /** Builds what the actions work on from the prepared context (a store, a logger); default: as is. */
  open?: (ctx: ContextFor<N>) => C | Promise<C>;
  /**
   * The action of a command without subcommands. Returns the exit code: 0, or 1/2 when the output
   * already said why; throw `CliFailure` to have the wrapper say it.
   */
  run?: ActionBody<C, A>;
  /** Exit code for the command's own expected errors (printed without a stack); undefined: unexpected. */
  expected?: (error: unknown) => 1 | 2 | undefined;
  /** `hermes NAME` alone (or with only `-p`/`-v`) runs this subcommand, e.g. "list". */
  defaultSubcommand?: string;
  /** Prefix of messages; default `hermes NAME`. */
  label?: string;
}

/** Runs a command: the io to use (default the process's), and `-p` / `-v` given before its name. */
export interface RunOptions extends CliIoOptions {
  profile?: string;
  verbose?: boolean;
}

/** A declared command: `run(argv)` parses, prepares, runs and resolves to the exit code; never throws. */
export interface CliCommand {
  readonly name: string;
  run(argv: readonly string[], options?: RunOptions): Promise<number>;
  /**
   * The command's arguments, options and subcommands as commander declares them, with nothing run
   * and no action attached (`hermes completion` reads them).
   */
  describe(): Command;
}

/** `-p, --profile <name>`, accepted before or after a command and its subcommands. */
export const profileOption = (): Option =>
  new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home");

export function defineCommand<N extends Needs, C = ContextFor<N>, A extends unknown[] = unknown[]>(
  spec: CommandSpec<N, C, A>,
): CliCommand {
  return {
    name: spec.name,
    run: (argv, options = {}) => runCommand(spec, argv, options),
    describe: () => {
      const root = new Command(spec.name).description(spec.description);
      const inert: Action<C> = () => async () => undefined;
      spec.parse?.(root, inert);
      addCommonOptions(root);
      return root;
    },
  };
}

async function runCommand<N extends Needs, C, A extends unknown[]>(
  spec: CommandSpec<N, C, A>,
  argv: readonly string[],
  options: RunOptions,
): Promise<number> {
  const io = createCliIo(options);
  const label = spec.label ?? `hermes ${spec.name}`;
  let exitCode = 0;
  const root = new Command(`hermes ${spec.name}`)
    .description(spec.description)
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Commander's usage message, named like every other message of the command.
      outputError: (s, write) => write(s.replace(/^error: /, `${label}: `)),
    });

  const action: Action<C> =
    (body) =>
    async (...args) => {
      // commander passes the Command whose action runs as the last argument.
      const cmd = args[args.length - 1] as Command;
      const profile = fromChain<string>(cmd, "profile") ?? options.profile;
      const verbose = fromChain<boolean>(cmd, "verbose") === true || options.verbose === true;
      try {
        const ctx = await prepare(spec, { io, profile, verbose });
        exitCode = await body(ctx, ...args);
      } catch (error) {
        exitCode = report(spec, label, io, error, verbose);
      }
    };

  spec.parse?.(root, action);
  if (spec.run) root.action(action(spec.run));
  else root.enablePositionalOptions();
  addCommonOptions(root);

  try {
    await root.parseAsync(withDefaultSubcommand(argv, spec.defaultSubcommand), { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help (0); a command with subcommands given none prints its help to stderr (usage, 2).
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return 0;
      if (error.code === "commander.help") return error.exitCode === 0 ? 0 : 2;
      return 2;
    }
    return report(spec, label, io, error, options.verbose === true);
  }
  return exitCode;
}

async function prepare<N extends Needs, C, A extends unknown[]>(
  spec: CommandSpec<N, C, A>,
  base: CommandContext,
): Promise<C> {
  let ctx: CommandContext | HomeContext | ConfigContext = base;
  if (spec.needs !== "nothing") {
    const home = homeFor(base.io.env, base.profile);
    ctx = { ...base, home };
    if (spec.needs === "config") ctx = withConfig({ ...base, home });
  }
  // `needs` decided the shape above; without `open`, C is ContextFor<N> (defineCommand's default).
  return spec.open ? spec.open(ctx as ContextFor<N>) : (ctx as C);
}

/**
 * Loads the home's `.env` and config.yaml and prints their warnings, for an action that needs them
 * when its siblings do not (`needs: "config"` does this before `run`). Throws ConfigError.
 */
export function withConfig(ctx: HomeContext): ConfigContext {
  const loaded = loadHomeConfig(ctx.home, ctx.io.env);
  for (const warning of loaded.warnings) ctx.io.err(`hermes: warning: ${warning}`);
  return { ...ctx, ...loaded };
}

/** The failure's message once, with its exit code; a stack only for the unexpected, and only with -v. */
function report<N extends Needs, C, A extends unknown[]>(
  spec: CommandSpec<N, C, A>,
  label: string,
  io: CliIo,
  error: unknown,
  verbose: boolean,
): number {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof CliFailure) {
    io.err(`${label}: ${message}`);
    return error.exitCode;
  }
  if (error instanceof ProfileNameError || error instanceof ProfileError) {
    io.err(`${label}: ${message}`);
    return 2;
  }
  if (error instanceof ConfigError) {
    io.err(`${label}: ${message}\nFix the file (hermes config edit) or check it with: hermes config check`);
    return 2;
  }
  const expected = spec.expected?.(error);
  if (expected !== undefined) {
    io.err(`${label}: ${message}`);
    return expected;
  }
  io.err(`${label}: ${message}`);
  if (verbose && error instanceof Error && error.stack) io.err(error.stack);
  return 1;
}

/** An option's value on `cmd` or the nearest command above it that has one (the subcommand wins). */
function fromChain<T>(cmd: Command, key: string): T | undefined {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const value = c.opts()[key] as T | undefined;
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `-p` on the command and each subcommand, and a hidden `-v` wherever `-v` is still free. */
function addCommonOptions(cmd: Command): void {
  const has = (flag: string) => cmd.options.some((o) => o.short === flag || o.long === flag);
  if (!has("--profile") && !has("-p")) cmd.addOption(profileOption());
  if (!has("--verbose") && !has("-v")) {
    cmd.addOption(new Option("-v, --verbose", "show the stack trace of an unexpected error").hideHelp());
  }
  for (const sub of cmd.commands) addCommonOptions(sub);
}

/** `hermes X` alone (or with only `-p NAME` / `-v`) means `hermes X <fallback>`. */
export function withDefaultSubcommand(argv: readonly string[], fallback: string | undefined): string[] {
  if (fallback === undefined) return [...argv];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "-p" || arg === "--profile") i++;
    else if (arg === "-v" || arg === "--verbose" || arg.startsWith("--profile=")) continue;
    else if (arg === "-h" || arg === "--help" || !arg.startsWith("-")) return [...argv];
  }
  return [...argv, fallback];
}
