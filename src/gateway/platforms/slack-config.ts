/**
 * Where the Slack adapter's settings come from: tokens, the receiving mode (Socket Mode or the
 * HTTP Events API) and addresses, from `.env` and the adapter's options.
 */
import { join } from "node:path";
import { PlatformError } from "./types.js";

const DEFAULT_API_URL = "https://slack.com/api/";

export interface SlackAdapterOptions {
  /** Default: Socket Mode when `SLACK_APP_TOKEN` is set, else HTTP when `SLACK_SIGNING_SECRET` is. */
  mode?: "socket" | "http";
  /** HTTP mode: address to listen on (default `SLACK_HTTP_HOST`, else 127.0.0.1). */
  host?: string;
  /** HTTP mode: port (default `SLACK_HTTP_PORT`, else 3000; 0 picks a free one). */
  port?: number;
  /** Web API base URL (default `SLACK_API_URL`, else Slack's). */
  slackApiUrl?: string;
}

export interface SlackConfig {
  mode: "socket" | "http";
  botToken: string;
  appToken?: string | undefined;
  signingSecret?: string | undefined;
  host: string;
  port: number;
  apiUrl: string;
}

/**
 * Reads tokens, mode and addresses from the environment and options. Throws `PlatformError` naming
 * the variable to set when something required is missing or malformed.
 */
export function resolveSlackConfig(
  env: Readonly<Record<string, string | undefined>>,
  options: SlackAdapterOptions = {},
  home = "~/.hermes",
  sendOnly = false,
): SlackConfig {
  const envFile = join(home, ".env");
  const botToken = env.SLACK_BOT_TOKEN?.trim();
  const appToken = env.SLACK_APP_TOKEN?.trim() || undefined;
  const signingSecret = env.SLACK_SIGNING_SECRET?.trim() || undefined;
  // Sending needs only the bot token; a mode matters when events are received.
  const mode = options.mode ?? (appToken ? "socket" : signingSecret || sendOnly ? "http" : undefined);
  const problem = !botToken
    ? `SLACK_BOT_TOKEN is not set. Add the app's Bot User OAuth Token (xoxb-…) to ${envFile}.`
    : sendOnly
      ? undefined
      : !mode
        ? `set SLACK_APP_TOKEN (xapp-…, for Socket Mode) or SLACK_SIGNING_SECRET (for the HTTP Events API) in ${envFile}; neither is set.`
        : mode === "socket" && !appToken
          ? "Socket Mode needs SLACK_APP_TOKEN, an app-level token (xapp-…) with the connections:write scope."
          : mode === "http" && !signingSecret
            ? "HTTP mode needs SLACK_SIGNING_SECRET (the app's Basic Information → Signing Secret)."
            : undefined;
  if (problem || !botToken || !mode) throw new PlatformError(`Slack: ${problem}`);
  let port = options.port;
  if (port === undefined) {
    const raw = env.SLACK_HTTP_PORT?.trim() || "3000";
    port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(port <= 65535)) {
      throw new PlatformError(`Slack: SLACK_HTTP_PORT must be a port number (0-65535), got "${raw}".`);
    }
  }
  return {
    mode,
    botToken,
    appToken,
    signingSecret,
    host: options.host ?? (env.SLACK_HTTP_HOST?.trim() || "127.0.0.1"),
    port,
    apiUrl: options.slackApiUrl ?? (env.SLACK_API_URL?.trim() || DEFAULT_API_URL),
  };
}
