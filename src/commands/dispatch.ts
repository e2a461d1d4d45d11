/**
 * Runs one submitted input on a surface: the single place that decides what `/word` means, so the
 * REPL and every chat behave alike. A built-in command runs when the surface offers it, the user
 * may run it (admin-only commands in chats) and the turn's state allows it; otherwise `/<name>` is
 * an installed skill loaded into a message; otherwise the user is told the closest commands and
 * nothing reaches the model. Text that is not a command (see `looksLikeCommand`) is left to the
 * caller as a message.
 */
import { type CommandRegistry, offeredOn, runsWhileBusy } from "./registry.js";
import type { CommandContext, CommandDef } from "./types.js";

export type DispatchOutcome =
  /** Not a command: the caller sends it to the model. */
  | { kind: "message" }
  | { kind: "command"; command: CommandDef }
  /** `/<skill-name>`: the skill's message was sent (or queued). */
  | { kind: "skill"; name: string }
  /** A command that may not run here or now; the user was told why. */
  | { kind: "refused"; command: CommandDef; reason: "surface" | "admin" | "busy" }
  /** No such command or skill; the user was given the closest names. */
  | { kind: "unknown"; name: string };

/** Whether this user may run `command` on this surface (admin tier in chats). */
export function permitted(command: CommandDef, ctx: Pick<CommandContext, "surface">): boolean {
  const { surface } = ctx;
  if (!command.adminOnly || surface.kind !== "chat" || surface.isAdmin) return true;
  return (surface.userAllowedCommands ?? []).some((n) => n.replace(/^\//, "").toLowerCase() === command.name);
}

export interface DispatchOptions {
  /**
   * Say nothing about an unknown `/word` (it still never reaches the model): a group chat where
   * the bot was not addressed, since the word may be meant for another bot there.
   */
  quietUnknown?: boolean;
}

export async function dispatchInput(
  registry: CommandRegistry,
  text: string,
  ctx: CommandContext,
  options: DispatchOptions = {},
): Promise<DispatchOutcome> {
  const surface = ctx.surface.kind;
  const parsed = registry.parse(text, surface);
  if (parsed.kind === "message") return { kind: "message" };
  const s = ctx.paint;
  if (parsed.kind === "unknown") {
    const skill = parsed.name ? await skillMessage(ctx, parsed.name, parsed.args) : undefined;
    if (skill !== undefined) {
      if (ctx.running) {
        ctx.queue.enqueue(skill);
        ctx.reply(s.dim(`Skill /${parsed.name} queued for after this turn.`));
      } else {
        ctx.reply(s.dim(`⚡ Loaded skill ${parsed.name}`));
        ctx.send(skill);
      }
      return { kind: "skill", name: parsed.name };
    }
    if (options.quietUnknown) return { kind: "unknown", name: parsed.name };
    const near = registry.closest(parsed.name, surface);
    const hint = near.length ? ` Did you mean ${orList(near.map((n) => `/${n}`))}?` : "";
    ctx.reply(s.yellow(`Unknown command /${parsed.name}. Type /help.${hint}`));
    return { kind: "unknown", name: parsed.name };
  }
  const { command, args } = parsed;
  if (!offeredOn(command, surface)) {
    ctx.reply(
      s.yellow(`/${command.name} works only ${surface === "chat" ? "in the terminal" : "in chats"}.`),
    );
    return { kind: "refused", command, reason: "surface" };
  }
  if (!permitted(command, ctx)) {
    ctx.reply(`⛔ /${command.name} is for this bot's admins only.`);
    return { kind: "refused", command, reason: "admin" };
  }
  if (ctx.running && !runsWhileBusy(command, surface)) {
    ctx.reply(
      s.yellow(`/${command.name} cannot run during a turn: /stop it first, or wait for it to finish.`),
    );
    return { kind: "refused", command, reason: "busy" };
  }
  try {
    await command.run(args, ctx);
  } catch (error) {
    ctx.reply(`${s.red("✗")} ${error instanceof Error ? error.message : String(error)}`);
  }
  return { kind: "command", command };
}

async function skillMessage(ctx: CommandContext, name: string, request: string): Promise<string | undefined> {
  try {
    return await ctx.session.skillMessage(name, request);
  } catch {
    return undefined;
  }
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
