/**
 * `hermes send -t PLATFORM[:CHAT[:THREAD]] MESSAGE`: delivers a message to a chat without the
 * agent. No chat means the platform's home channel. `-` (or no message) reads it from stdin.
 * `MEDIA:<path>` lines are sent as attachments. The platform is reached with its token from `.env`
 * in send-only mode, so a running gateway keeps its connection; a platform that allows only one
 * connection (a personal WhatsApp account) goes through the running gateway's control socket
 * (`messages.send`) instead, so the gateway keeps its link.
 * Exit codes: 0 delivered, 1 the platform refused or could not be reached, 2 usage or configuration.
 */
import { deliverText, parseChatRef, resolveTarget } from "../../gateway/messaging/deliver.js";
import { createAdapter, PLATFORMS } from "../../gateway/platforms/registry.js";
import type { OutboundTarget } from "../../gateway/platforms/types.js";
import { connectGatewayControl } from "../../state/gateway-control.js";
import { CliFailure, type ConfigContext, defineCommand, type RunOptions } from "../command.js";
import { readAllStdin } from "../io.js";

/** Runs `hermes send <argv…>`; returns the exit code. */
export function runSendCommand(argv: readonly string[], options: RunOptions = {}): Promise<number> {
  return sendCommand.run(argv, options);
}

export const sendCommand = defineCommand({
  name: "send",
  description:
    "Delivers MESSAGE to a chat without running the agent. Without CHAT it goes to the platform's " +
    'home channel (/sethome, or <PLATFORM>_HOME_CHANNEL). With "-" or no MESSAGE the text is read ' +
    'from stdin. Lines "MEDIA:/path/to/file" are sent as attachments. A personal WhatsApp account ' +
    "goes through the running gateway (it allows one connection), which must be connected then.",
  needs: "config",
  parse: (cmd) =>
    cmd
      .usage("-t PLATFORM[:CHAT[:THREAD]] [MESSAGE | -]")
      .argument("[message...]", 'the text, or "-" to read it from stdin')
      .option("-t, --to <target>", "telegram, telegram:-1001234, discord:987654321, slack:C0123:1712.5")
      .addHelpText("after", `\nPlatforms: ${Object.keys(PLATFORMS).join(", ")}`),
  run: (ctx, words: string[], flags: { to?: string }) => send(ctx, words, flags),
});

async function send(ctx: ConfigContext, words: string[], flags: { to?: string }): Promise<number> {
  const { io, home, config, env } = ctx;
  if (!flags.to) throw new CliFailure("say where with -t PLATFORM[:CHAT[:THREAD]].", 2);
  const cut = flags.to.indexOf(":");
  const platform = (cut < 0 ? flags.to : flags.to.slice(0, cut)).trim().toLowerCase();
  const chat = cut < 0 ? undefined : parseChatRef(flags.to.slice(cut + 1));
  const spec = PLATFORMS[platform];
  if (!spec) {
    throw new CliFailure(`unknown platform "${platform}". Known: ${Object.keys(PLATFORMS).join(", ")}.`, 2);
  }
  let text = words.join(" ");
  if (!text || text === "-") text = await readAllStdin(io);
  if (!text.trim()) throw new CliFailure("the message is empty.", 2);
  if (!env[spec.token]?.trim()) {
    throw new CliFailure(`${platform} is not set up: put ${spec.token} in ${home}/.env.`, 2);
  }
  let target: ReturnType<typeof resolveTarget>;
  try {
    target = resolveTarget(platform, chat ?? {}, env, config);
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 2);
  }
  const describe = (t: OutboundTarget) => `${platform}:${t.chatId}${t.threadId ? `:${t.threadId}` : ""}`;
  if (spec.oneConnection) {
    const sent = await sendThroughGateway(home, platform, describe(target), text);
    if (sent) {
      io.out(`Sent to ${sent} (through the running gateway).`);
      return 0;
    }
  }
  const adapter = await createAdapter(platform, { home, config, env });
  try {
    await adapter.connect(
      {
        onMessage: () => undefined,
        onAction: () => undefined,
        onError: (m) => io.err(`${platform}: ${m}`),
      },
      { receive: false },
    );
    await deliverText(adapter, target, text);
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 1);
  } finally {
    await adapter.disconnect().catch(() => undefined);
  }
  io.out(`Sent to ${describe(target)}.`);
  return 0;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Sends through the home's running gateway when it runs `platform`: the sent target, or null when
 * no gateway runs or it does not run that platform (then the caller connects itself). A gateway
 * that runs the platform but cannot send (not connected right now) is a failure: a second
 * connection would take the account over from it.
 */
async function sendThroughGateway(
  home: string,
  platform: string,
  target: string,
  message: string,
): Promise<string | null> {
  let control: Awaited<ReturnType<typeof connectGatewayControl>>;
  try {
    control = await connectGatewayControl(home);
  } catch (error) {
    throw new CliFailure(errorText(error), 1);
  }
  if (!control) return null;
  try {
    const status = await control.call("status", {}, { timeoutMs: 10_000 });
    if (!status.platforms.some((p) => p.name === platform)) return null;
    const sent = await control.call("messages.send", { target, message }, { timeoutMs: 120_000 });
    return sent.target;
  } catch (error) {
    throw new CliFailure(
      `the running gateway (pid in ${home}/gateway.pid) could not send to ${target}: ${errorText(error)}. ` +
        `It holds the ${platform} connection, so hermes send does not open a second one; see "hermes gateway status".`,
      1,
    );
  } finally {
    control.close();
  }
}
