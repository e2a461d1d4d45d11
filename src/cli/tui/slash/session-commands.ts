/**
 * Slash commands that change which conversation is current or what it holds: /new, /title,
 * /resume, /sessions, /retry, /undo, /branch, /model.
 */
import { formatRecap, formatSessionList } from "../info.js";
import type { SlashContext } from "./context.js";
import type { SlashCommand } from "./registry.js";

type Command = SlashCommand<SlashContext>;

/** Titles of recent sessions, for completing `/resume` and `/title` arguments. */
function recentTitles(ctx: SlashContext): string[] {
  const titles = ctx.session
    .listSessions(50)
    .map((s) => s.title)
    .filter((t): t is string => typeof t === "string" && t !== "");
  return [...new Set(titles)];
}

function resumedLine(ctx: SlashContext, title: string | null, id: string): string {
  const s = ctx.style;
  const count = ctx.session.agent.messages.length;
  return `${s.green("↻")} Resumed ${title ? s.bold(`“${title}”`) : id} ${s.dim(`(${id}, ${count} messages)`)}`;
}

const newCommand: Command = {
  name: "new",
  aliases: ["reset"],
  args: "[title]",
  description: "start a fresh session (this one is kept)",
  category: "Session",
  async run(args, ctx) {
    await ctx.session.newSession(args || undefined);
    ctx.sessionChanged();
    const s = ctx.style;
    ctx.print(`${s.green("✦")} New session ${s.dim(ctx.session.id)}${args ? ` ${s.bold(`“${args}”`)}` : ""}`);
  },
};

const titleCommand: Command = {
  name: "title",
  args: "[text]",
  description: "show or set the session title",
  category: "Session",
  availableWhileRunning: true,
  completeArgs: (_prefix, ctx) => recentTitles(ctx),
  run(args, ctx) {
    const s = ctx.style;
    if (!args) {
      const title = ctx.session.title;
      ctx.print(
        title
          ? `Title: ${s.bold(title)}`
          : `${s.dim("This session has no title.")} Set one with /title <text>.`,
      );
      return;
    }
    const record = ctx.session.setTitle(args);
    ctx.print(`Title set: ${s.bold(record.title ?? args)}`);
  },
};

const resumeCommand: Command = {
  name: "resume",
  args: "[id|title]",
  description: "switch to an earlier session (none given: pick from a list)",
  category: "Session",
  completeArgs: (_prefix, ctx) => recentTitles(ctx),
  async run(args, ctx) {
    let ref = args;
    if (!ref) {
      const recent = ctx.session.listSessions(10).filter((r) => r.id !== ctx.session.id);
      if (recent.length === 0) {
        ctx.print(ctx.style.dim("No other sessions to resume."));
        return;
      }
      const answer = await ctx.ask(
        [
          ctx.style.bold("Recent sessions"),
          ...formatSessionList(recent, ctx.session.id, ctx.now(), ctx.style),
        ],
        `Resume which? (number, id or title; Enter to cancel): `,
      );
      const picked = (answer ?? "").trim();
      if (!picked) {
        ctx.print(ctx.style.dim("Cancelled."));
        return;
      }
      const n = Number(picked);
      ref = Number.isInteger(n) && n >= 1 && n <= recent.length ? (recent[n - 1]?.id ?? picked) : picked;
    }
    const record = await ctx.session.resume(ref);
    ctx.sessionChanged();
    ctx.print(
      resumedLine(ctx, record.title, record.id),
      ...formatRecap(ctx.session.agent.messages, ctx.style),
    );
  },
};

const sessionsCommand: Command = {
  name: "sessions",
  description: "list recent sessions",
  category: "Session",
  availableWhileRunning: true,
  run(_args, ctx) {
    const list = ctx.session.listSessions(15);
    ctx.print(
      ctx.style.bold("Recent sessions"),
      ...formatSessionList(list, ctx.session.id, ctx.now(), ctx.style),
    );
    if (list.length > 0) ctx.print(ctx.style.dim("Resume one with /resume <number|id|title>."));
  },
};

const retryCommand: Command = {
  name: "retry",
  description: "send the last message again (the last answer is undone)",
  category: "Turn",
  async run(_args, ctx) {
    const text = await ctx.session.retryText();
    if (text === null) {
      ctx.print(ctx.style.dim("Nothing to retry yet."));
      return;
    }
    ctx.sessionChanged();
    ctx.print(ctx.style.dim(`↻ Retrying: ${oneLine(text)}`));
    ctx.send(text);
  },
};

const undoCommand: Command = {
  name: "undo",
  args: "[N]",
  description: "take back the last N turns (default 1)",
  category: "Turn",
  async run(args, ctx) {
    const n = args ? Number(args) : 1;
    if (!Number.isInteger(n) || n < 1) {
      ctx.print(ctx.style.yellow(`/undo expects a positive whole number of turns, got "${args}".`));
      return;
    }
    const { removed, userText } = await ctx.session.undo(n);
    if (removed === 0) {
      ctx.print(ctx.style.dim("Nothing to undo."));
      return;
    }
    ctx.sessionChanged();
    ctx.print(
      `${ctx.style.green("↶")} Undid ${n} turn${n === 1 ? "" : "s"} (${removed} messages).` +
        (userText ? ctx.style.dim(` It began: ${oneLine(userText)}`) : ""),
    );
  },
};

const branchCommand: Command = {
  name: "branch",
  aliases: ["fork"],
  args: "[name]",
  description: "fork this conversation into a new session",
  category: "Session",
  async run(args, ctx) {
    const record = await ctx.session.branch(args || undefined);
    ctx.sessionChanged();
    const s = ctx.style;
    ctx.print(
      `${s.green("⑂")} Branched into ${record.title ? s.bold(`“${record.title}”`) : record.id} ${s.dim(`(${record.id})`)}`,
    );
  },
};

const modelCommand: Command = {
  name: "model",
  args: "[name]",
  description: "show the model, or use another one from the next turn",
  category: "Settings",
  availableWhileRunning: true,
  async run(args, ctx) {
    const s = ctx.style;
    if (!args) {
      const provider = ctx.session.provider;
      ctx.print(`Model: ${s.bold(ctx.session.model)}${provider ? s.dim(` via ${provider}`) : ""}`);
      return;
    }
    if (ctx.running) {
      ctx.print(s.yellow("A turn is running; /stop it or wait before changing the model."));
      return;
    }
    await ctx.session.setModel(args);
    ctx.sessionChanged();
    ctx.print(`Model set to ${s.bold(ctx.session.model)} from the next turn on.`);
  },
};

function oneLine(text: string, max = 70): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const SESSION_COMMANDS: readonly Command[] = [
  newCommand,
  titleCommand,
  resumeCommand,
  sessionsCommand,
  branchCommand,
  retryCommand,
  undoCommand,
  modelCommand,
];
