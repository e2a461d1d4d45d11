/**
 * `hermes send -t PLATFORM[:CHAT[:THREAD]] MESSAGE`: delivers a message to a chat without the
 * agent. No chat means the platform's home channel. `-` (or no message) reads it from stdin.
 * `MEDIA:<path>` lines are sent as attachments. The platform is reached with its token from `.env`
 * in send-only mode, so a running gateway keeps its connection.
 * Exit codes: 0 delivered, 1 the platform refused or could not be reached, 2 usage or configuration.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { deliverText, parseChatRef, resolveTarget } from "../../gateway/messaging/deliver.js";
import { createAdapter, PLATFORMS } from "../../gateway/platforms/registry.js";
import { loadCliContext } from "../home-env.js";

export interface SendCommandOptions {
  profile?: string;
  /** Message text when none is given and stdin is not used (tests). */
  stdin?: () => string;
}

const USAGE = `Usage: hermes send -t PLATFORM[:CHAT[:THREAD]] [MESSAGE | -]

Delivers MESSAGE to a chat without running the agent. Without CHAT it goes to the platform's
home channel (/sethome, or <PLATFORM>_HOME_CHANNEL). With "-" or no MESSAGE the text is read
from stdin. Lines "MEDIA:/path/to/file" are sent as attachments.

Options:
  -t, --to <target>      telegram, telegram:-1001234, discord:987654321, slack:C0123:1712.5
  -p, --profile <name>   use ~/.hermes/profiles/<name>
  -h, --help             show this help

Platforms: ${Object.keys(PLATFORMS).join(", ")}
`;

/** Runs `hermes send <argv…>`; returns the exit code. */
export async function runSendCommand(
  argv: readonly string[],
  options: SendCommandOptions = {},
): Promise<number> {
  const err = (text: string) => process.stderr.write(`${text}\n`);
  let values: { to?: string; profile?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        to: { type: "string", short: "t" },
        profile: { type: "string", short: "p" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    err(`hermes send: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.to) {
    err(`hermes send: say where with -t PLATFORM[:CHAT[:THREAD]].\n\n${USAGE}`);
    return 2;
  }
  const cut = values.to.indexOf(":");
  const platform = (cut < 0 ? values.to : values.to.slice(0, cut)).trim().toLowerCase();
  const chat = cut < 0 ? undefined : parseChatRef(values.to.slice(cut + 1));
  const spec = PLATFORMS[platform];
  if (!spec) {
    err(`hermes send: unknown platform "${platform}". Known: ${Object.keys(PLATFORMS).join(", ")}.`);
    return 2;
  }
  let text = positionals.join(" ");
  if (!text || text === "-") {
    text = options.stdin ? options.stdin() : readFileSync(0, "utf8");
  }
  if (!text.trim()) {
    err("hermes send: the message is empty.");
    return 2;
  }

  const context = await loadCliContext(values.profile ?? options.profile);
  if ("exitCode" in context) return context.exitCode;
  const { home, config, env } = context;
  if (!env[spec.token]?.trim()) {
    err(`hermes send: ${platform} is not set up: put ${spec.token} in ${home}/.env.`);
    return 2;
  }
  let target: ReturnType<typeof resolveTarget>;
  try {
    target = resolveTarget(platform, chat ?? {}, env, config);
  } catch (error) {
    err(`hermes send: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  const adapter = createAdapter(platform, { home, config, env });
  try {
    await adapter.connect(
      { onMessage: () => undefined, onAction: () => undefined, onError: (m) => err(`${platform}: ${m}`) },
      { receive: false },
    );
    await deliverText(adapter, target, text);
  } catch (error) {
    err(`hermes send: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await adapter.disconnect().catch(() => undefined);
  }
  process.stdout.write(
    `Sent to ${platform}:${target.chatId}${target.threadId ? `:${target.threadId}` : ""}.\n`,
  );
  return 0;
}
