/**
 * `hermes api-server [--host H] [--port P]`: runs the OpenAI-compatible API server in the
 * foreground until SIGINT or SIGTERM, then drains running requests and exits. The address is
 * printed on stdout (`Listening on http://127.0.0.1:8642`); problems go to stderr.
 * Exit codes: 0 stopped cleanly, 1 failed, 2 usage or configuration error (no API_SERVER_KEY…).
 */
import { NoProviderError } from "../../ai/resolve.js";
import { ApiServerConfigError, startApiServer } from "../../gateway/api-server/index.js";
import {
  type CliCommand,
  CliFailure,
  type ConfigContext,
  defineCommand,
  type RunOptions,
} from "../command.js";

export interface ApiServerCommandOptions extends RunOptions {
  /** Resolves when the server should stop (tests); default SIGINT/SIGTERM. */
  stopSignal?: Promise<void>;
}

/** Runs `hermes api-server <argv…>` until stopped; returns the exit code. */
export function runApiServerCommand(
  argv: readonly string[],
  options: ApiServerCommandOptions = {},
): Promise<number> {
  return apiServerCommand(options.stopSignal).run(argv, options);
}

/** `hermes api-server [--host H] [--port P]`; `stopSignal` stops it (tests). */
export function apiServerCommand(stopSignal?: Promise<void>): CliCommand {
  return defineCommand({
    name: "api-server",
    description:
      "Serves the Hermes agent as an OpenAI-compatible API (/v1/chat/completions, /v1/responses, " +
      "/v1/runs, /v1/models, /api/sessions, /api/jobs…). Every request but /health needs " +
      "Authorization: Bearer <API_SERVER_KEY> (at least 16 characters).",
    needs: "config",
    parse: (cmd) =>
      cmd
        .option("--host <host>", "address to listen on (default API_SERVER_HOST or 127.0.0.1)")
        .option("--port <port>", "port (default API_SERVER_PORT or 8642; 0 picks a free one)")
        .addHelpText(
          "after",
          "\nEnvironment: API_SERVER_KEY (required, 16+ characters), API_SERVER_HOST, API_SERVER_PORT,\n" +
            "API_SERVER_MODEL_NAME (default hermes-agent), API_SERVER_CORS_ORIGINS (comma-separated).\n" +
            "Config: gateway.api_server.max_concurrent_runs (default 10).",
        ),
    run: (ctx, flags: { host?: string; port?: string }) => serve(ctx, flags, stopSignal),
  });
}

async function serve(
  context: ConfigContext,
  flags: { host?: string; port?: string },
  stopSignal: Promise<void> | undefined,
): Promise<number> {
  const err = context.io.err;
  let port: number | undefined;
  if (flags.port !== undefined) {
    port = Number(flags.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new CliFailure(`--port expects a port number (0-65535), got "${flags.port}".`, 2);
    }
  }
  // Opens nothing until the first line; every line passes the process's secret redactor.
  const { homeLogger } = await import("../../util/log.js");
  const logger = homeLogger(context.home, context.config.logging, { component: "gateway.api_server" });
  // Shell hooks and enabled plugins' hooks guard API turns as they do in the gateway (nobody asked).
  const { startUnattendedHooks } = await import("./chat-hooks.js");
  await startUnattendedHooks({
    home: context.home,
    config: context.config,
    env: context.env,
    io: context.io,
    logger,
    warn: (message) => err(`hermes api-server: ${message}`),
  });
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
      throw new CliFailure(error.message, 2);
    }
    throw new CliFailure(`could not start: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
  context.io.out(`Listening on ${server.url} (model ${server.model})`);

  const stop =
    stopSignal ??
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
