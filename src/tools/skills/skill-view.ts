/**
 * skill_view: a skill's SKILL.md and linked files, or one of its supporting files. The reply is
 * plain text (a few header lines, then the file verbatim): skills are markdown meant to be read,
 * and JSON would put a whole SKILL.md on one escaped line.
 */
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import type { SkillMeta } from "../../knowledge/skills/types.js";
import { loadSkill, readSkillFile } from "../../knowledge/skills/view.js";
import { knowledgeStores } from "../../knowledge/stores.js";
import { defineTool } from "../types.js";
import { discoverOptionsOf } from "./shared.js";
import description from "./skill-view.md";

const parameters = Type.Object({
  name: Type.String({ minLength: 1, description: "Skill name, as listed." }),
  file_path: Type.Optional(
    Type.String({
      description:
        "One supporting file to read, relative to the skill folder (e.g. references/api.md), when a step needs it.",
    }),
  ),
});

const ORIGIN_TEXT: Record<SkillMeta["origin"], string> = {
  agent:
    "made by your background learning, editable with skill_manage (the curator archives it when long unused)",
  user: "made in this home (by the user or at their request), editable with skill_manage",
  bundled: "bundled with Hermes, read-only: adapt it in a new skill",
  hub: "installed from the skills hub, read-only: adapt it in a new skill",
};

export const skillViewTool = defineTool({
  name: "skill_view",
  toolset: "skills",
  description,
  parameters,
  parallelSafe: true,
  // A read; the view count it bumps is bookkeeping, not an action.
  sideEffectFree: true,
  emoji: "📖",
  async handler(args, ctx) {
    const { skill, content, platformNote } = loadSkill(args.name, discoverOptionsOf(ctx));
    if (args.file_path?.trim()) {
      const file = await readSkillFile(skill, args.file_path);
      // Reading a skill's file means following it: a use, not a look.
      await knowledgeStores(ctx.home).skillUsage.record(skill.name, "use");
      return `${file.file_path} of skill "${skill.name}" (${file.path}):\n\n${file.content}`;
    }
    await knowledgeStores(ctx.home).skillUsage.record(skill.name, "view");
    const lines = [
      `Skill "${skill.name}"${skill.category ? ` (category ${skill.category})` : ""}: ${ORIGIN_TEXT[skill.origin]}.`,
      `Folder: ${skill.dir}`,
    ];
    if (skill.linkedFiles.length > 0) {
      lines.push(
        `Linked files; read one with skill_view(name="${skill.name}", file_path=...) when a step needs it:`,
        ...skill.linkedFiles.map((f) => `- ${f}`),
      );
    }
    const missing = skill.requiredEnv.filter((v) => skill.missingEnv.includes(v.name));
    if (missing.length > 0) {
      const names = missing.map((v) => (v.prompt || v.help ? `${v.name} (${v.prompt ?? v.help})` : v.name));
      lines.push(
        `Not set: ${names.join(", ")}. Ask the user to add ${missing.length > 1 ? "them" : "it"} to ` +
          `${join(ctx.home, ".env")} (never to paste secrets into the chat), or skip the steps that need ${missing.length > 1 ? "them" : "it"}.`,
      );
    }
    if (platformNote) lines.push(`Note: ${platformNote}`);
    lines.push("", "SKILL.md:", content);
    return lines.join("\n");
  },
});
