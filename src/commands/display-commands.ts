/**
 * Slash commands about what the terminal shows: /clear (a clean screen and a new session, as
 * upstream's CLI does) and /statusbar (the status line above the prompt). REPL only.
 */
import type { CommandDef } from "./types.js";

const clearCommand: CommandDef = {
  name: "clear",
  description: "clear the screen and start a new session (this one is kept)",
  category: "Session",
  surfaces: "repl",
  async run(_args, ctx) {
    await ctx.newSession();
    ctx.clearScreen?.();
    const s = ctx.paint;
    ctx.reply(`${s.green("✦")} New session ${s.dim(ctx.session.id)}`);
  },
};

const statusBarCommand: CommandDef = {
  name: "statusbar",
  aliases: ["sb"],
  args: "[on|off]",
  description: "show or hide the status line (model, context, tokens, cost, cwd)",
  category: "Settings",
  surfaces: "repl",
  availableWhileRunning: true,
  completeArgs: () => ["on", "off"],
  run(args, ctx) {
    const word = args.trim().toLowerCase();
    if (word !== "" && word !== "on" && word !== "off") {
      throw new Error(
        `Unknown /statusbar argument "${args.trim()}": use /statusbar, /statusbar on or /statusbar off.`,
      );
    }
    const shown = word === "" ? !(ctx.settings.statusBar ?? false) : word === "on";
    ctx.settings.statusBar = shown;
    ctx.reply(
      ctx.paint.dim(
        shown
          ? "Status line on (its fields: display.runtime_footer.fields)."
          : "Status line off (/statusbar brings it back).",
      ),
    );
  },
};

export const DISPLAY_COMMANDS: readonly CommandDef[] = [clearCommand, statusBarCommand];
