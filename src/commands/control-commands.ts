/**
 * Slash commands about the running turn, settings and information: /stop, /steer, /queue (/q),
 * /verbose, /yolo, /usage, /status, /tools, /toolsets, /compress, /help, /quit.
 */

import { nextToolProgress, type ToolProgress, toolEmoji } from "../agent/tool-display.js";
import { TOOLSETS } from "../tools/toolsets.js";
import { permitted } from "./dispatch.js";
import { formatStatus, formatUsage } from "./format.js";
import { runToolsSubcommand } from "./tools-commands.js";
import type { CommandDef } from "./types.js";

const PROGRESS_MEANING: Record<ToolProgress, string> = {
  off: "no tool lines",
  new: "a line when the tool changes",
  all: "a line for every tool call",
  verbose: "every call, with arguments and the start of the result",
};

const stopCommand: CommandDef = {
  name: "stop",
  description: "interrupt the running turn (what was said so far is kept)",
  category: "Turn",
  availableWhileRunning: true,
  run(_args, ctx) {
    if (!ctx.running) {
      ctx.reply(ctx.paint.dim("Nothing is running."));
      return;
    }
    ctx.stop();
    // A chat never shows the stopped turn's answer; the terminal keeps what already streamed.
    ctx.reply(ctx.surface.kind === "chat" ? "⏹ Stopped." : ctx.paint.dim("⏹ Stopping the turn…"));
  },
};

const steerCommand: CommandDef = {
  name: "steer",
  args: "<text>",
  description: "give the running turn a note it sees after its next tool call",
  category: "Turn",
  availableWhileRunning: true,
  run(args, ctx) {
    if (!args) {
      ctx.reply(ctx.paint.yellow("Usage: /steer <text>"));
      return;
    }
    if (!ctx.running) {
      ctx.reply(ctx.paint.dim("No turn is running; sending it as a message."));
      ctx.send(args);
      return;
    }
    ctx.session.steer(args);
    ctx.reply(ctx.paint.dim(`↪ Steering: ${args}`));
  },
};

const queueCommand: CommandDef = {
  name: "queue",
  // `/q` is /queue, as upstream has it everywhere; the REPL leaves with /quit or /exit.
  aliases: ["q"],
  args: "<text> | clear",
  description: "send a message after the running turn; no text lists the queue",
  category: "Turn",
  availableWhileRunning: true,
  run(args, ctx) {
    const s = ctx.paint;
    if (!args) {
      const waiting = ctx.queue.list();
      if (waiting.length === 0) ctx.reply(s.dim("The queue is empty."));
      else
        ctx.reply(
          s.bold("Queued"),
          ...waiting.map((t, i) => `  ${s.dim(`${i + 1}.`)} ${t.replace(/\s+/g, " ")}`),
        );
      return;
    }
    if (args === "clear") {
      const n = ctx.queue.clear();
      ctx.reply(s.dim(`Dropped ${n} queued message${n === 1 ? "" : "s"}.`));
      return;
    }
    if (!ctx.running) {
      ctx.send(args);
      return;
    }
    const n = ctx.queue.enqueue(args);
    ctx.reply(s.dim(`⏳ Queued (${n} waiting).`));
  },
};

const verboseCommand: CommandDef = {
  name: "verbose",
  description: "cycle tool progress: off → new → all → verbose",
  category: "Settings",
  availableWhileRunning: true,
  run(_args, ctx) {
    const next = nextToolProgress(ctx.settings.toolProgress);
    ctx.settings.toolProgress = next;
    ctx.reply(`Tool progress: ${ctx.paint.bold(next)} ${ctx.paint.dim(`(${PROGRESS_MEANING[next]})`)}`);
  },
};

const yoloCommand: CommandDef = {
  name: "yolo",
  description: "toggle approving dangerous commands without asking",
  category: "Settings",
  adminOnly: true,
  availableWhileRunning: true,
  run(_args, ctx) {
    const on = !ctx.settings.yolo;
    ctx.settings.yolo = on;
    ctx.session.agent.yolo = on;
    const s = ctx.paint;
    ctx.reply(
      on
        ? `YOLO ${s.red("on")}: dangerous commands run without asking ${s.dim("(hardline ones stay blocked; protected paths still ask)")}.`
        : `YOLO ${s.green("off")}: dangerous commands ask first.`,
    );
  },
};

const usageCommand: CommandDef = {
  name: "usage",
  description: "tokens, API calls, cost and context used this session",
  category: "Info",
  availableWhileRunning: true,
  async run(_args, ctx) {
    ctx.reply(...formatUsage(await ctx.session.usageReport(), ctx.paint));
  },
};

const statusCommand: CommandDef = {
  name: "status",
  description: "session, model, directory, and what is running or queued",
  category: "Info",
  availableWhileRunning: true,
  async run(_args, ctx) {
    const session = ctx.session;
    const record = await session.loadRecord();
    ctx.reply(
      ...formatStatus(
        {
          id: session.id,
          title: record?.title ?? null,
          model: session.model,
          provider: session.provider,
          cwd: session.agent.cwd,
          running: ctx.running,
          runningSeconds: ctx.turnSeconds,
          queued: ctx.queue.list(),
          messages: session.agent.messages.length,
          recorded: record !== null,
          toolProgress: ctx.settings.toolProgress,
          busyMode: ctx.settings.busyMode,
          yolo: ctx.settings.yolo,
        },
        ctx.paint,
      ),
    );
  },
};

const toolsCommand: CommandDef = {
  name: "tools",
  args: "[list | enable|disable <toolset|server:tool>...]",
  description: "the tools of this session; list, enable or disable toolsets (from the next message)",
  category: "Info",
  availableWhileRunning: true,
  completeArgs: (prefix) => ["list", "enable", "disable"].filter((w) => w.startsWith(prefix)),
  async run(args, ctx) {
    if (/^(enable|disable)\b/.test(args) && ctx.surface.kind === "chat" && !ctx.surface.isAdmin) {
      ctx.reply("Only an admin of this gateway can change which tools are enabled.");
      return;
    }
    if (args && (await runToolsSubcommand(args, ctx))) return;
    const names = await ctx.session.agent.toolNames();
    if (names.length === 0) {
      ctx.reply(ctx.paint.dim("No tools are enabled in this session."));
      return;
    }
    ctx.reply(ctx.paint.bold(`${names.length} tools`), ...names.map((n) => `  ${toolEmoji(n)} ${n}`));
  },
};

const toolsetsCommand: CommandDef = {
  name: "toolsets",
  description: "list the toolsets (● marks the ones this session uses)",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const s = ctx.paint;
    const active = new Set(ctx.toolsets);
    const width = Math.max(...Object.keys(TOOLSETS).map((n) => n.length)) + 2;
    ctx.reply(
      s.bold("Toolsets"),
      ...Object.entries(TOOLSETS).map(
        ([name, spec]) =>
          `${active.has(name) ? s.green("●") : " "} ${name.padEnd(width)}${s.dim(spec.description)}`,
      ),
    );
  },
};

const compressCommand: CommandDef = {
  name: "compress",
  args: "[focus TOPIC]",
  description:
    "summarise the middle of the conversation now to free context (a focus topic is kept in detail)",
  category: "Session",
  async run(args, ctx) {
    const focus = args.replace(/^focus\s+/i, "").trim();
    const report = await ctx.session.compress(focus || undefined);
    const s = ctx.paint;
    if (report.status === "compressed") {
      ctx.reply(
        s.dim(`Compressed: about ${report.tokensBefore} → ${report.tokensAfter} tokens of conversation.`),
      );
    } else if (report.status === "nothing_to_compress") {
      ctx.reply(s.dim("Nothing to compress yet: the conversation fits in the protected head and tail."));
    } else {
      ctx.reply(s.yellow(report.error ?? "Compression did not change anything."));
    }
  },
};

const helpCommand: CommandDef = {
  name: "help",
  aliases: ["?", "commands", "start"],
  description: "show the commands you can use here",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const s = ctx.paint;
    const surface = ctx.surface.kind;
    if (surface === "chat") {
      ctx.reply(
        "Send me a message and I'll get to work. /<skill-name> [request] uses one of my skills.",
        "",
        ...ctx.registry.helpLines(s, "chat", { locked: (command) => !permitted(command, ctx) }),
      );
      return;
    }
    ctx.reply(
      ...ctx.registry.helpLines(s, surface),
      s.bold("Keys"),
      `  ${"Enter".padEnd(16)}send · end a line with \\ to continue it · pasted lines are sent together`,
      `  ${"Tab".padEnd(16)}complete commands, skill names and session titles · ↑/↓ history`,
      `  ${"Ctrl+C".padEnd(16)}interrupt the turn (twice within 2 s: quit) · clear the line`,
      `  ${"Ctrl+D".padEnd(16)}quit (on an empty line)`,
      s.dim("While a turn runs, plain text follows display.busy_input_mode (interrupt, queue or steer)."),
      s.dim(
        "A line whose first word has a second slash or a dot (/tmp/x, //…, /notes.md) is sent as a message.",
      ),
      s.dim("/<skill-name> [request] loads an installed skill into your message."),
    );
  },
};

const quitCommand: CommandDef = {
  name: "quit",
  aliases: ["exit"],
  description: "leave (the session is kept: hermes -c continues it)",
  category: "Exit",
  surfaces: "repl",
  availableWhileRunning: true,
  run(_args, ctx) {
    ctx.exit?.(0);
  },
};

export const CONTROL_COMMANDS: readonly CommandDef[] = [
  stopCommand,
  steerCommand,
  queueCommand,
  verboseCommand,
  yoloCommand,
  usageCommand,
  statusCommand,
  toolsCommand,
  toolsetsCommand,
  compressCommand,
  helpCommand,
  quitCommand,
];
