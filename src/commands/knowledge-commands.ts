/**
 * Slash commands about what the agent knows and how it speaks: /personality and /skills. A skill is
 * also a command of its own (`/<skill-name>`), resolved by the dispatcher when no built-in matches.
 */
import { isNoPersonality, listPersonalities, resolvePersonality } from "../agent/prompt/personalities.js";
import { discoverSkills } from "../knowledge/skills/discovery.js";
import { HUB_COMPLETIONS, isHubVerb, runSkillsHub } from "./skills-hub-commands.js";
import type { CommandDef } from "./types.js";
import { isWriteApprovalVerb, runWriteApproval } from "./write-approval-commands.js";

const personalityCommand: CommandDef = {
  name: "personality",
  args: "[name | none]",
  description: "list personalities, or speak with one from now on (rebuilds the system prompt)",
  category: "Settings",
  completeArgs: (prefix, ctx) =>
    ["none", ...listPersonalities(ctx.session.agent.config).map((p) => p.name)].filter((n) =>
      n.startsWith(prefix.toLowerCase()),
    ),
  async run(args, ctx) {
    const s = ctx.paint;
    const config = ctx.session.agent.config;
    const current = ctx.session.personality ?? config.display.personality ?? "";
    const name = args.trim().toLowerCase();
    if (!name) {
      const all = listPersonalities(config);
      const width = Math.max(...all.map((p) => p.name.length)) + 2;
      ctx.reply(
        s.bold("Personalities"),
        ...all.map(
          (p) =>
            `${p.name === current.toLowerCase() ? s.green("●") : " "} ${p.name.padEnd(width)}${s.dim(p.description)}`,
        ),
        s.dim(
          "/personality NAME applies one; /personality none removes it. Custom ones: agent.personalities in config.yaml.",
        ),
      );
      return;
    }
    if (!isNoPersonality(name) && !resolvePersonality(name, config)) {
      ctx.reply(s.yellow(`No personality called "${name}". Type /personality to list them.`));
      return;
    }
    await ctx.session.setPersonality(isNoPersonality(name) ? "none" : name);
    ctx.reply(
      isNoPersonality(name)
        ? s.dim("Personality removed; the default voice applies from the next message.")
        : s.dim(`Personality "${name}" applies from the next message.`),
    );
  },
};

const skillsCommand: CommandDef = {
  name: "skills",
  args: "[filter | search|browse|inspect|install|audit|check | pending|approve|reject|diff|approval]",
  description:
    "list installed skills (/<skill-name> [request] loads one), find and install hub skills, or review pending skill writes",
  category: "Info",
  availableWhileRunning: true,
  completeArgs: (prefix) => HUB_COMPLETIONS.filter((v) => v.startsWith(prefix.toLowerCase())),
  run(args, ctx) {
    if (isHubVerb(args)) return runSkillsHub(args, ctx);
    if (isWriteApprovalVerb(args)) return runWriteApproval("skills", args, ctx);
    const s = ctx.paint;
    const { home, config } = ctx.session.agent;
    const { skills } = discoverSkills({ home, config: config.skills });
    const filter = args.trim().toLowerCase();
    const shown = filter
      ? skills.filter((k) => `${k.name} ${k.category} ${k.description}`.toLowerCase().includes(filter))
      : skills;
    if (shown.length === 0) {
      ctx.reply(s.dim(filter ? `No skill matches "${filter}".` : "No skills installed."));
      return;
    }
    const width = Math.max(...shown.map((k) => k.name.length)) + 2;
    ctx.reply(
      s.bold(`${shown.length} skills`),
      ...shown.map(
        (k) => `  ${k.name.padEnd(width)}${s.dim(k.description.replace(/\s+/g, " ").slice(0, 70))}`,
      ),
      s.dim("Type /<skill-name> [request] to use one."),
    );
  },
};

export const KNOWLEDGE_COMMANDS: readonly CommandDef[] = [personalityCommand, skillsCommand];
