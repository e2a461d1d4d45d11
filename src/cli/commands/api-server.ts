/**
 * `hermes api-server [--host H] [--port P]`: runs the OpenAI-compatible API server in the
 * foreground until SIGINT or SIGTERM, then drains running requests and exits. The address is
 * printed on stdout (`Listening on http://127.0.0.1:8642`); problems go to stderr.
 * Exit codes: 0 stopped cleanly, 1 failed, 2 usage or configuration error (no API_SERVER_KEY…).
 */
import { parseArgs } from "node:util";
import { NoProviderError } from "../../ai/resolve.js";
import { ApiServerConfigError, startApiServer } from "../../gateway/api-server/index.js";
import { loadCliContext } from "../home-env.js";

export interface ApiServerCommandOptions {
  profile?: string;
  /** Resolves when the server should stop (tests); default SIGINT/SIGTERM. */
  stopSignal?: Promise<void>;
}

const USAGE = `Usage: hermes api-server [options]

Serves the Hermes agent as an OpenAI-compatible API (/v1/chat/completions, /v1/responses,
/v1/models). Every request needs Authorization: Bearer <API_SERVER_KEY>.

Options:
      --host <host>   address to listen on (default API_SERVER_HOST or 127.0.0.1)
      --port <port>   port (default API_SERVER_PORT or 8642; 0 picks a free one)
  -h, --help          show this help

Environment: API_SERVER_KEY (required), API_SERVER_HOST, API_SERVER_PORT,
API_SERVER_MODEL_NAME (default hermes-agent), API_SERVER_CORS_ORIGINS (comma-separated).
Config: gateway.api_server.max_concurrent_runs (default 10).
`;

/** Runs `hermes api-server <argv…>` until stopped; returns the exit code. */
export async function runApiServerCommand(
  argv: readonly string[],
  options: ApiServerCommandOptions = {},
): Promise<number> {
  const err = (text: string) => process.stderr.write(`${text}\n`);
  let flags: { host?: string; port?: string; help?: boolean; profile?: string };
  try {
    flags = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: "string" },
        port: { type: "string" },
        profile: { type: "string", short: "p" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (error) {
    err(`hermes api-server: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let port: number | undefined;
  if (flags.port !== undefined) {
    port = Number(flags.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      err(`hermes api-server: --port expects a port number (0-65535), got "${flags.port}".`);
      return 2;
    }
  }
  const context = await loadCliContext(flags.profile ?? options.profile);
  if ("exitCode" in context) return context.exitCode;

  // Opens nothing until the first line; every line passes the process's secret redactor.
  const { homeLogger } = await import("../../util/log.js");
  const logger = homeLogger(context.home, context.config.logging, { component: "gateway.api_server" });
  let server: Awaited<ReturnType<typeof startApiServer>>;
  try {
    server = await startApiServer({
      home: context.home,
      config: context.config,
      env: context.env,
      ...(flags.host ? { host: flags.host } : {}),
      ...(port !== undefined ? { port } : {}),
      onWarning: (message) => {
        logger.warning(message);
        err(`hermes api-server: ${message}`);
      },
      logger,
    });
  } catch (error) {
    if (error instanceof ApiServerConfigError || error instanceof NoProviderError) {
      err(`hermes api-server: ${error.message}`);
      return 2;
    }
    err(`hermes api-server: could not start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  process.stdout.write(`Listening on ${server.url} (model ${server.model})\n`);

  const stop =
    options.stopSignal ??
    new Promise<void>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (stopping) {
          // A second signal: stop now without waiting for running requests.
          process.exit(signal === "SIGINT" ? 130 : 143);
        }
        stopping = true;
        err("hermes api-server: stopping; waiting for running requests (signal again to force)…");
        resolve();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    });
  await stop;
  await server.close();
  return 0;
}
