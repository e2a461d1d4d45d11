/**
 * Shared plumbing of the commands that parse their own subcommands (`hermes sessions …`,
 * `hermes skills …`): the default subcommand and how commander's outcomes become exit codes.
 */
import { Command, CommanderError, Option } from "commander";

/** `hermes X` alone (or with only `-p NAME`) means `hermes X <fallback>`. */
export function withDefaultSubcommand(argv: readonly string[], fallback = "list"): string[] {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "-p" || arg === "--profile") i++;
    else if (arg === "-h" || arg === "--help" || !arg.startsWith("-")) return [...argv];
  }
  return [...argv, fallback];
}

/**
 * Parses and runs `program`. Help is exit 0, a usage error (already printed by commander) exit 2,
 * anything else thrown goes to `onFailure`, which reports it and returns the exit code. Returns
 * undefined when the subcommand ran; its action sets the exit code itself.
 */
export async function parseSubcommands(
  program: Command,
  argv: readonly string[],
  onFailure: (error: unknown) => number,
): Promise<number | undefined> {
  try {
    await program.parseAsync(withDefaultSubcommand(argv), { from: "user" });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === "commander.helpDisplayed" || error.code === "commander.help" ? 0 : 2;
    }
    return onFailure(error);
  }
}

/** A failure with a message for the user and an exit code; no stack trace. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Options every subcommand runner takes; tests inject streams, the environment and the clock. */
export interface SubcommandOptions {
  /** Profile named before the subcommand (`hermes -p work X …`). */
  profile?: string;
  env?: Record<string, string | undefined>;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr?: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Clock in epoch seconds. */
  now?: () => number;
}

/** Where a subcommand writes: results to stdout, diagnostics to stderr, one line per call. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Colour on stdout (a terminal, and NO_COLOR unset). */
  color: boolean;
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Clock in epoch seconds. */
  now(): number;
  /** Terminal width of stdout, when it is a terminal. */
  width: number | undefined;
}

export function createCliIo(options: SubcommandOptions): CliIo {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const env = options.env ?? process.env;
  const isTty = (stdout as NodeJS.WriteStream).isTTY === true;
  return {
    out: (text) => stdout.write(text.endsWith("\n") ? text : `${text}\n`),
    err: (text) => stderr.write(text.endsWith("\n") ? text : `${text}\n`),
    color: isTty && !env["NO_COLOR"],
    env,
    stdin: options.stdin ?? process.stdin,
    stdout,
    stderr,
    now: options.now ?? (() => Date.now() / 1000),
    width: isTty ? (stdout as NodeJS.WriteStream).columns : undefined,
  };
}

/**
 * Runs a subcommand program (`hermes auth|sessions|mcp …`) and returns its exit code: the one its
 * action set, or the one `report` gives for a parse error or a failure thrown outside an action.
 */
export async function runSubcommandProgram(
  argv: readonly string[],
  options: SubcommandOptions,
  build: (io: CliIo, profile: string | undefined, setExit: (code: number) => void) => Command,
  report: (error: unknown, io: CliIo) => number,
): Promise<number> {
  const io = createCliIo(options);
  let exitCode = 0;
  const program = build(io, options.profile, (code) => {
    exitCode = code;
  });
  const failed = await parseSubcommands(program, argv, (error) => report(error, io));
  return failed ?? exitCode;
}

/** `-p, --profile <name>`, accepted before or after a subcommand. */
export const profileOption = (): Option =>
  new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home");

/** The root of a subcommand program: errors thrown, not exited; output through `io`; `--profile`. */
export function subcommandRoot(name: string, description: string, io: CliIo): Command {
  return new Command(name)
    .description(description)
    .exitOverride()
    .showSuggestionAfterError(true)
    .addOption(profileOption())
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
}

/**
 * Wraps subcommand actions: finds the profile (the subcommand's `--profile`, the root's, then the
 * outer one), opens what the actions work on with `open`, runs the action and sets the exit code;
 * anything thrown on the way goes to `report`.
 */
export function subcommandActions<C>(options: {
  root: Command;
  io: CliIo;
  outerProfile: string | undefined;
  setExit: (code: number) => void;
  report: (error: unknown, io: CliIo) => number;
  open: (profile: string | undefined) => C | Promise<C>;
}): <A extends unknown[]>(
  body: (ctx: C, ...args: A) => Promise<number> | number,
) => (...args: A) => Promise<void> {
  const { root, io, outerProfile, setExit, report, open } = options;
  return (body) =>
    async (...args) => {
      const cmd = args[args.length - 1] as Command;
      const profile =
        cmd.opts<{ profile?: string }>().profile ?? root.opts<{ profile?: string }>().profile ?? outerProfile;
      try {
        setExit(await body(await open(profile), ...args));
      } catch (error) {
        setExit(report(error, io));
      }
    };
}
