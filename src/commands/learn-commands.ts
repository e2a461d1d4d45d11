/**
 * `/learn <what>`: distil a reusable skill from a folder, a file, a web page, this conversation or
 * pasted notes. The material is gathered here (bounded, scanned, credentials never read) and sent
 * as one turn asking the agent to write the skill with `skill_manage`, so the skill passes the
 * same validation, injection scan and write approval as any other skill write.
 */
import { LEARN_USAGE, prepareLearnTurn } from "../agent/learn/index.js";
import type { CommandDef } from "./types.js";

const learnCommand: CommandDef = {
  name: "learn",
  args: '<folder | URL | "this chat" | notes>',
  description: "distil a reusable skill from a folder, a web page, this chat or pasted notes",
  category: "Turn",
  async run(args, ctx) {
    if (!args.trim()) {
      ctx.reply(ctx.paint.yellow(LEARN_USAGE));
      return;
    }
    const agent = ctx.session.agent;
    const turn = prepareLearnTurn({
      what: args,
      cwd: agent.cwd,
      home: agent.home,
      env: process.env,
      config: agent.config as unknown as Record<string, unknown>,
      conversationLength: agent.messages.length,
      tools: await agent.toolNames(),
    });
    if (!turn.ok) {
      ctx.reply(ctx.paint.yellow(turn.error));
      return;
    }
    ctx.reply(...turn.notice.map((line, i) => (i === 0 ? line : ctx.paint.dim(line))));
    ctx.send(turn.prompt);
  },
};

export const LEARN_COMMANDS: readonly CommandDef[] = [learnCommand];
