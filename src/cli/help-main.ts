/**
 * `hermes --help` and `hermes -h` alone (bin/hermes sends them here): the same help `program.ts`
 * prints, from a small bundle of commander and the command list (dist/cli/help.cjs, ~50 KB), so
 * asking for help does not load the whole CLI. Command modules are never loaded on this path.
 */
import { runCli } from "./program.js";

// A reader that stops early (`hermes --help | head`) closes the pipe: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

runCli(["--help"]).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `hermes: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
