/**
 * Slash commands about the running turn, settings and information: /stop, /steer, /queue, /verbose,
 * /yolo, /usage, /status, /tools, /toolsets, /compress, /help, /quit.
 */
import { TOOLSETS } from "../../../tools/toolsets.js";
import { formatStatus, formatUsage } from "../info.js";
import { nextToolProgress, type ToolProgress, toolEmoji } from "../tool-line.js";
import type { SlashContext } from "./context.js";
import type { SlashCommand } from "./registry.js";

type Command = SlashCommand<SlashContext>;

const PROGRESS_MEANING: Record<ToolProgress, string> = {
  off: "no tool lines",
  new: "a line when the tool changes",
  all: "a line for every tool call",
  verbose: "every call, with arguments and the start of the result",
};

const stopCommand: Command = {
  name: "stop",
  description: "interrupt the running turn (what was said so far is kept)",
  category: "Turn",
  availableWhileRunning: true,
  run(_args, ctx) {
    if (!ctx.running) {
      ctx.print(ctx.style.dim("Nothing is running."));
      return;
    }
    ctx.stop();
  },
};

const steerCommand: Command = {
  name: "steer",
  args: "<text>",
  description: "give the running turn a note it sees after its next tool call",
  category: "Turn",
  availableWhileRunning: true,
  run(args, ctx) {
    if (!args) {
      ctx.print(ctx.style.yellow("Usage: /steer <text>"));
      return;
    }
    if (!ctx.running) {
      ctx.print(ctx.style.dim("No turn is running; sending it as a message."));
      ctx.send(args);
      return;
    }
    ctx.session.steer(args);
    ctx.print(ctx.style.dim(`↪ Steering: ${args}`));
  },
};

const queueCommand: Command = {
  name: "queue",
  args: "<text> | clear",
  description: "send a message after the running turn; no text lists the queue",
  category: "Turn",
  availableWhileRunning: true,
  run(args, ctx) {
    const s = ctx.style;
    if (!args) {
      const waiting = ctx.pending.list();
      if (waiting.length === 0) ctx.print(s.dim("The queue is empty."));
      else
        ctx.print(
          s.bold("Queued"),
          ...waiting.map((t, i) => `  ${s.dim(`${i + 1}.`)} ${t.replace(/\s+/g, " ")}`),
        );
      return;
    }
    if (args === "clear") {
      const n = ctx.pending.clear();
      ctx.print(s.dim(`Dropped ${n} queued message${n === 1 ? "" : "s"}.`));
      return;
    }
    if (!ctx.running) {
      ctx.send(args);
      return;
    }
    const n = ctx.pending.enqueue(args);
    ctx.print(s.dim(`⏳ Queued (${n} waiting).`));
  },
};

const verboseCommand: Command = {
  name: "verbose",
  description: "cycle tool progress: off → new → all → verbose",
  category: "Settings",
  availableWhileRunning: true,
  run(_args, ctx) {
    const next = nextToolProgress(ctx.settings.toolProgress);
    ctx.settings.toolProgress = next;
    ctx.print(`Tool progress: ${ctx.style.bold(next)} ${ctx.style.dim(`(${PROGRESS_MEANING[next]})`)}`);
  },
};

const yoloCommand: Command = {
  name: "yolo",
  description: "toggle approving dangerous commands without asking",
  category: "Settings",
  availableWhileRunning: true,
  run(_args, ctx) {
    const on = !ctx.settings.yolo;
    ctx.settings.yolo = on;
    ctx.session.agent.yolo = on;
    const s = ctx.style;
    ctx.print(
      on
        ? `YOLO ${s.red("on")}: dangerous commands run without asking ${s.dim("(hardline ones stay blocked; protected paths still ask)")}.`
        : `YOLO ${s.green("off")}: dangerous commands ask first.`,
    );
  },
};

const usageCommand: Command = {
  name: "usage",
  description: "tokens, API calls, cost and context used this session",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    ctx.print(...formatUsage(ctx.session.usageReport(), ctx.style));
  },
};

const statusCommand: Command = {
  name: "status",
  description: "session, model, directory, and what is running or queued",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const session = ctx.session;
    ctx.print(
      ...formatStatus(
        {
          id: session.id,
          title: session.title,
          model: session.model,
          provider: session.provider,
          cwd: session.agent.cwd,
          running: ctx.running,
          runningSeconds: ctx.turnSeconds,
          queued: ctx.pending.list(),
          messages: session.agent.messages.length,
          recorded: session.record() !== null,
          toolProgress: ctx.settings.toolProgress,
          busyMode: ctx.settings.busyMode,
          yolo: ctx.settings.yolo,
        },
        ctx.style,
      ),
    );
  },
};

const toolsCommand: Command = {
  name: "tools",
  description: "list the tools the model can use in this session",
  category: "Info",
  availableWhileRunning: true,
  async run(_args, ctx) {
    const names = await ctx.session.agent.toolNames();
    if (names.length === 0) {
      ctx.print(ctx.style.dim("No tools are enabled in this session."));
      return;
    }
    ctx.print(ctx.style.bold(`${names.length} tools`), ...names.map((n) => `  ${toolEmoji(n)} ${n}`));
  },
};

const toolsetsCommand: Command = {
  name: "toolsets",
  description: "list the toolsets (● marks the ones this session uses)",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const s = ctx.style;
    const active = new Set(ctx.toolsets);
    const width = Math.max(...Object.keys(TOOLSETS).map((n) => n.length)) + 2;
    ctx.print(
      s.bold("Toolsets"),
      ...Object.entries(TOOLSETS).map(
        ([name, spec]) =>
          `${active.has(name) ? s.green("●") : " "} ${name.padEnd(width)}${s.dim(spec.description)}`,
      ),
    );
  },
};

const compressCommand: Command = {
  name: "compress",
  args: "[focus TOPIC]",
  description:
    "summarise the middle of the conversation now to free context (a focus topic is kept in detail)",
  category: "Session",
  async run(args, ctx) {
    const focus = args.replace(/^focus\s+/i, "").trim();
    const report = await ctx.session.compress(focus || undefined);
    const s = ctx.style;
    if (report.status === "compressed") {
      ctx.print(
        s.dim(`Compressed: about ${report.tokensBefore} → ${report.tokensAfter} tokens of conversation.`),
      );
    } else if (report.status === "nothing_to_compress") {
      ctx.print(s.dim("Nothing to compress yet: the conversation fits in the protected head and tail."));
    } else {
      ctx.print(s.yellow(report.error ?? "Compression did not change anything."));
    }
  },
};

const helpCommand: Command = {
  name: "help",
  aliases: ["?"],
  description: "show this help",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const s = ctx.style;
    ctx.print(
      ...ctx.registry.helpLines(s),
      s.bold("Keys"),
      `  ${"Enter".padEnd(16)}send · end a line with \\ to continue it · pasted lines are sent together`,
      `  ${"Tab".padEnd(16)}complete commands and session titles · ↑/↓ history`,
      `  ${"Ctrl+C".padEnd(16)}interrupt the turn (twice within 2 s: quit) · clear the line`,
      `  ${"Ctrl+D".padEnd(16)}quit (on an empty line)`,
      s.dim("While a turn runs, plain text follows display.busy_input_mode (interrupt, queue or steer)."),
      s.dim("A line whose first word has a second slash (/tmp/x, //…) is sent as a message."),
    );
  },
};

const quitCommand: Command = {
  name: "quit",
  aliases: ["exit", "q"],
  description: "leave (the session is kept: hermes -c continues it)",
  category: "Exit",
  availableWhileRunning: true,
  run(_args, ctx) {
    ctx.exit(0);
  },
};

export const CONTROL_COMMANDS: readonly Command[] = [
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
