/**
 * `hermes` entry point (bundled to dist/cli/hermes.cjs and started by bin/hermes). `--version`
 * answers before anything else runs; every command's module is evaluated only when that command
 * runs, so start-up stays close to a bare `node`.
 */
import { installExitSignals } from "../util/exit-reaper.js";
import { hermesVersion } from "../util/version.js";
import { runAfterCommand } from "./after-command.js";

// SIGTERM/SIGHUP end hermes through process.exit, so shells and background processes die with it.
installExitSignals();

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "-V" || argv[0] === "--version" || argv[0] === "version")) {
    process.stdout.write(`hermes ${hermesVersion()}\n`);
    return 0;
  }
  // From source (tsx), the commands' tool descriptions are .md imports Node needs a hook for; the
  // bundle has them inlined (`__HERMES_VERSION__` is defined there, and this branch is dropped).
  if (typeof __HERMES_VERSION__ !== "string") (await import("./dev-markdown.js")).registerMarkdownImports();
  const { runCli } = await import("./program.js");
  return runCli(argv);
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) resolve();
    else stream.write("", () => resolve());
  });
}

// A reader that stops early (`hermes --list-tools | head`) closes the pipe: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

main(process.argv.slice(2)).then(
  async (code) => {
    // Housekeeping the command asked for (a due curator run starts detached), after its output.
    await runAfterCommand();
    // The command is finished: exit now rather than wait for idle keep-alive sockets of the HTTP
    // client to time out. Flush both streams first so no output is lost when they are pipes.
    await Promise.all([flush(process.stdout), flush(process.stderr)]);
    process.exit(code);
  },
  (error: unknown) => {
    // Commands report their own failures (cli/command.ts); this is a failure outside any of them.
    // Like theirs: the message, and the stack only with -v / --verbose.
    const verbose = process.argv.includes("-v") || process.argv.includes("--verbose");
    const detail =
      error instanceof Error ? (verbose ? (error.stack ?? error.message) : error.message) : String(error);
    process.stderr.write(`hermes: unexpected error: ${detail}\n`);
    process.exit(1);
  },
);
