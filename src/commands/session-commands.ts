/**
 * Slash commands that change which conversation is current or what it holds: /new, /title,
 * /resume, /sessions, /retry, /undo, /branch, /model.
 */
import { sessionModelList } from "../agent/model-switch.js";
import { loadEnvFile } from "../config/env-file.js";
import { formatRecap, formatSessionList } from "./format.js";
import {
  askableEndpoint,
  askEndpointInRepl,
  missingEndpointAdvice,
  parseModelArgs,
  saveModelChoice,
} from "./model-args.js";
import type { CommandContext, CommandDef } from "./types.js";

/** Titles of recent sessions, for completing `/resume` and `/title` arguments. */
async function recentTitles(ctx: CommandContext): Promise<string[]> {
  const titles = (await resumable(ctx, 50))
    .map((s) => s.title)
    .filter((t): t is string => typeof t === "string" && t !== "");
  return [...new Set(titles)];
}

function resumedLine(ctx: CommandContext, title: string | null, id: string): string {
  const s = ctx.paint;
  const count = ctx.session.agent.messages.length;
  return `${s.green("↻")} Resumed ${title ? s.bold(`“${title}”`) : id} ${s.dim(`(${id}, ${count} messages)`)}`;
}

const newCommand: CommandDef = {
  name: "new",
  aliases: ["reset"],
  args: "[title]",
  description: "start a fresh session (this one is kept)",
  category: "Session",
  // A chat may start over while the agent works: the running turn is stopped and dropped.
  availableWhileRunning: ["chat"],
  async run(args, ctx) {
    await ctx.newSession(args || undefined);
    const s = ctx.paint;
    if (ctx.surface.kind === "chat") {
      ctx.reply(`✨ New conversation started.${args ? ` Title: ${s.bold(args)}` : ""}`);
      return;
    }
    ctx.reply(`${s.green("✦")} New session ${s.dim(ctx.session.id)}${args ? ` ${s.bold(`“${args}”`)}` : ""}`);
  },
};

const titleCommand: CommandDef = {
  name: "title",
  args: "[text]",
  description: "show or set the session title",
  category: "Session",
  availableWhileRunning: true,
  completeArgs: (_prefix, ctx) => recentTitles(ctx),
  async run(args, ctx) {
    const s = ctx.paint;
    if (!args) {
      const title = await ctx.session.currentTitle();
      ctx.reply(
        title
          ? `Title: ${s.bold(title)}`
          : `${s.dim("This session has no title.")} Set one with /title <text>.`,
      );
      return;
    }
    const record = await ctx.session.setTitle(args);
    ctx.reply(`Title set: ${s.bold(record.title ?? args)}`);
  },
};

/**
 * The sessions `/resume` and `/sessions` offer, newest first. A chat sees only its own user's
 * sessions on its platform: never the terminal's, and never another chat user's (a member of a
 * shared group cannot open someone's private conversation). Rows recorded without a user (older
 * gateway sessions) stay reachable from the terminal only.
 */
async function resumable(
  ctx: CommandContext,
  limit: number,
): ReturnType<CommandContext["session"]["listSessions"]> {
  // A chat looks further back: the terminal's sessions in between are skipped.
  const all = await ctx.session.listSessions(ctx.surface.kind === "chat" ? Math.max(limit, 500) : limit);
  const shown =
    ctx.surface.kind === "chat"
      ? all.filter((r) => r.source === ctx.surface.platform && !!r.userId && r.userId === ctx.surface.userId)
      : all;
  return shown.slice(0, limit);
}

const resumeCommand: CommandDef = {
  name: "resume",
  args: "[id|title]",
  description: "switch to an earlier session: its id, title or number in /sessions (none: pick from a list)",
  category: "Session",
  completeArgs: (_prefix, ctx) => recentTitles(ctx),
  async run(args, ctx) {
    // The same numbered list as /sessions (the current session marked), so its numbers work here.
    const recent = await resumable(ctx, 15);
    let ref = args;
    if (!ref) {
      if (!recent.some((r) => r.id !== ctx.session.id)) {
        ctx.reply(ctx.paint.dim("No other sessions to resume."));
        return;
      }
      const answer = await ctx.ask(
        [
          ctx.paint.bold("Recent sessions"),
          ...formatSessionList(recent, ctx.session.id, ctx.now(), ctx.paint),
        ],
        ctx.surface.kind === "chat"
          ? "Reply with a number, id or title to resume it (a command cancels)."
          : "Resume which? (number, id or title; Enter to cancel): ",
      );
      ref = (answer ?? "").trim();
      if (!ref) {
        ctx.reply(ctx.paint.dim("Cancelled."));
        return;
      }
    }
    // A number picks from the list `/resume` and `/sessions` show.
    const n = Number(ref);
    if (/^\d+$/.test(ref) && n >= 1 && n <= recent.length) ref = recent[n - 1]?.id ?? ref;
    if (ctx.surface.kind === "chat") {
      // A chat reaches only its platform's sessions, never the terminal's by id or title.
      const wanted = ref.toLowerCase();
      const own = (await resumable(ctx, 500)).find((r) => r.id === ref || r.title?.toLowerCase() === wanted);
      if (!own) {
        ctx.reply(`No ${ctx.surface.platform} session is called "${ref}". /sessions lists them.`);
        return;
      }
      ref = own.id;
    }
    const record = await ctx.session.resume(ref);
    ctx.sessionChanged();
    ctx.reply(
      resumedLine(ctx, record.title, record.id),
      ...formatRecap(ctx.session.agent.messages, ctx.paint),
    );
  },
};

const sessionsCommand: CommandDef = {
  name: "sessions",
  description: "list recent sessions",
  category: "Session",
  availableWhileRunning: true,
  async run(_args, ctx) {
    const list = await resumable(ctx, 15);
    ctx.reply(
      ctx.paint.bold("Recent sessions"),
      ...formatSessionList(list, ctx.session.id, ctx.now(), ctx.paint),
      ...(list.length > 0 ? [ctx.paint.dim("Resume one with /resume <number|id|title>.")] : []),
    );
  },
};

const retryCommand: CommandDef = {
  name: "retry",
  description: "send the last message again (the last answer is undone)",
  category: "Turn",
  async run(_args, ctx) {
    const text = await ctx.session.retryText();
    if (text === null) {
      ctx.reply(ctx.paint.dim("Nothing to retry yet."));
      return;
    }
    ctx.sessionChanged();
    ctx.reply(ctx.paint.dim(`↻ Retrying: ${oneLine(text)}`));
    ctx.send(text);
  },
};

const undoCommand: CommandDef = {
  name: "undo",
  args: "[N]",
  description: "take back the last N turns (default 1)",
  category: "Turn",
  async run(args, ctx) {
    const n = args ? Number(args) : 1;
    if (!Number.isInteger(n) || n < 1) {
      ctx.reply(ctx.paint.yellow(`/undo expects a positive whole number of turns, got "${args}".`));
      return;
    }
    const { removed, userText } = await ctx.session.undo(n);
    if (removed === 0) {
      ctx.reply(ctx.paint.dim("Nothing to undo."));
      return;
    }
    ctx.sessionChanged();
    ctx.reply(
      `${ctx.paint.green("↶")} Undid ${n} turn${n === 1 ? "" : "s"} (${removed} messages).` +
        (userText ? ctx.paint.dim(` It began: ${oneLine(userText)}`) : ""),
    );
  },
};

const branchCommand: CommandDef = {
  name: "branch",
  aliases: ["fork"],
  args: "[name]",
  description: "fork this conversation into a new session",
  category: "Session",
  async run(args, ctx) {
    const record = await ctx.session.branch(args || undefined);
    ctx.sessionChanged();
    const s = ctx.paint;
    ctx.reply(
      `${s.green("⑂")} Branched into ${record.title ? s.bold(`“${record.title}”`) : record.id} ${s.dim(`(${record.id})`)}`,
    );
  },
};

const modelCommand: CommandDef = {
  name: "model",
  args: "[name|provider:model] [--provider NAME] [--global|--session] [--refresh]",
  description: "show the model and the provider's list, or use another one from the next turn",
  category: "Settings",
  adminOnly: true,
  availableWhileRunning: true,
  async run(args, ctx) {
    const s = ctx.paint;
    const parsed = parseModelArgs(args);
    if ("error" in parsed) {
      ctx.reply(s.yellow(parsed.error));
      return;
    }
    if (parsed.spec === undefined) {
      const provider = ctx.session.provider;
      const { home, config } = ctx.session.agent;
      const list = await sessionModelList({
        provider,
        model: ctx.session.model,
        config,
        home,
        env: loadEnvFile(home, process.env).env,
        refresh: parsed.refresh,
      });
      ctx.reply(
        [
          `Model: ${s.bold(ctx.session.model)}${provider ? s.dim(` via ${provider}`) : ""}`,
          ...(list.lines.length > 0 ? [s.dim(`${provider}'s models:`), ...list.lines] : []),
          ...(list.note ? [s.dim(list.note)] : []),
          s.dim("/model NAME or /model provider:model switches from the next turn (--global also saves it)."),
        ].join("\n"),
      );
      return;
    }
    if (ctx.running) {
      ctx.reply(s.yellow("A turn is running; /stop it or wait before changing the model."));
      return;
    }
    try {
      await ctx.session.setModel(parsed.spec);
    } catch (error) {
      // No endpoint to call (azure-foundry, custom): nothing switched. The REPL asks for an Azure
      // endpoint right there; elsewhere (a chat, a custom server) the message says what to run.
      const advice = missingEndpointAdvice(error, parsed.spec, ctx.surface.kind);
      if (!advice) throw error;
      const askable = ctx.surface.kind === "repl" ? askableEndpoint(error) : undefined;
      if (!askable) {
        ctx.reply(s.yellow(advice[0] as string), ...advice.slice(1));
        return;
      }
      const baseUrl = await askEndpointInRepl(ctx, askable, ctx.session.agent.home);
      if (!baseUrl) {
        ctx.reply(s.dim("No endpoint given; the model was not changed."));
        return;
      }
      await ctx.session.setModel(parsed.spec, { baseUrl });
    }
    ctx.sessionChanged();
    const via = ctx.session.provider ? s.dim(` via ${ctx.session.provider}`) : "";
    ctx.reply(`Model set to ${s.bold(ctx.session.model)}${via} from the next turn on.`);
    if (parsed.global) {
      const { home, config } = ctx.session.agent;
      const saved = saveModelChoice(home, config.model, {
        model: ctx.session.model,
        provider: ctx.session.provider,
        baseUrl: ctx.session.baseUrl,
      });
      ctx.reply(s.dim(`Saved for new sessions in ${home}/config.yaml: ${saved.join(", ")}.`));
    }
  },
};

function oneLine(text: string, max = 70): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const SESSION_COMMANDS: readonly CommandDef[] = [
  newCommand,
  titleCommand,
  resumeCommand,
  sessionsCommand,
  branchCommand,
  retryCommand,
  undoCommand,
  modelCommand,
];
