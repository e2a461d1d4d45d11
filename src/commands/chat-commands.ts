/**
 * Commands only a chat has: /approve and /deny answer the pending dangerous-command approval (the
 * buttons do the same), /sethome makes this chat the platform's home channel for cron output and
 * notifications, /restart restarts the gateway (admins).
 */
import type { ApprovalDecision } from "../tools/types.js";
import type { CommandContext, CommandDef } from "./types.js";

function chatOnly(ctx: CommandContext) {
  if (!ctx.chat) throw new Error("This command works only in a chat.");
  return ctx.chat;
}

const approveCommand: CommandDef = {
  name: "approve",
  args: "[session|always]",
  description: "approve the pending command (session: for this session, always: from now on)",
  category: "Turn",
  surfaces: "chat",
  availableWhileRunning: true,
  run(args, ctx) {
    const scope = args.trim().toLowerCase();
    const decision: ApprovalDecision =
      scope === "session" ? "session" : scope === "always" ? "always" : "once";
    if (!chatOnly(ctx).answerApproval(decision)) ctx.reply("Nothing is waiting for approval.");
  },
};

const denyCommand: CommandDef = {
  name: "deny",
  description: "refuse the pending command",
  category: "Turn",
  surfaces: "chat",
  availableWhileRunning: true,
  run(_args, ctx) {
    if (!chatOnly(ctx).answerApproval("deny")) ctx.reply("Nothing is waiting for approval.");
  },
};

const sethomeCommand: CommandDef = {
  name: "sethome",
  aliases: ["set-home"],
  description: "make this chat the home channel (cron output, notifications)",
  category: "Session",
  surfaces: "chat",
  availableWhileRunning: true,
  adminOnly: true,
  run(_args, ctx) {
    const { variable, value } = chatOnly(ctx).setHome();
    ctx.reply(`🏠 This chat is now the ${ctx.surface.platform} home channel (${variable}=${value}).`);
  },
};

const restartCommand: CommandDef = {
  name: "restart",
  description: "restart the gateway once running turns finish (the chats it cuts off are told)",
  category: "Session",
  surfaces: "chat",
  availableWhileRunning: true,
  adminOnly: true,
  run(_args, ctx) {
    const waits = chatOnly(ctx).restartGateway?.() ?? null;
    if (waits === null) {
      ctx.reply("This gateway cannot restart itself here. Run `hermes gateway restart` on its host.");
      return;
    }
    const minutes = Math.round(waits / 60);
    ctx.reply(
      `🔄 Restarting the gateway. Running turns get up to ${minutes >= 1 ? `${minutes} min` : `${waits} s`} to finish; I'll be back shortly after.`,
    );
  },
};

export const CHAT_COMMANDS: readonly CommandDef[] = [
  approveCommand,
  denyCommand,
  sethomeCommand,
  restartCommand,
];
