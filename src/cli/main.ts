/**
 * `hermes` entry point. `--version` answers before anything else is loaded; every command's module
 * is imported only when that command runs, so start-up stays close to a bare `node`.
 */
import { hermesVersion } from "../util/version.js";

const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "-V" || argv[0] === "--version" || argv[0] === "version")) {
  process.stdout.write(`hermes ${hermesVersion()}\n`);
} else {
  const { runCli } = await import("./program.js");
  process.exitCode = await runCli(argv);
}
