/**
 * Where a command reads and writes. Every command gets one `CliIo` from the command wrapper
 * (cli/command.ts); tests inject the streams, the environment and the clock instead of the process's.
 */

/** What a test (or the wrapper) may inject; everything absent comes from the process. */
export interface CliIoOptions {
  env?: Record<string, string | undefined>;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr?: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Clock in epoch seconds. */
  now?: () => number;
}

/** Where a command writes: results to stdout, diagnostics to stderr, one line per call. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Colour on stdout (a terminal, and NO_COLOR unset). */
  color: boolean;
  /** The process environment (not the home's `.env`; the config context has that). */
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Clock in epoch seconds. */
  now(): number;
  /** Terminal width of stdout, when it is a terminal. */
  width: number | undefined;
}

export function createCliIo(options: CliIoOptions = {}): CliIo {
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

/** All of stdin as UTF-8 text (a pipe or file; on a terminal it waits for Ctrl+D). */
export async function readAllStdin(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
