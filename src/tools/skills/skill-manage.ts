/** skill_manage: create, patch, edit and delete skills and their supporting files. */

import { Type } from "@sinclair/typebox";
import {
  createSkill,
  deleteSkill,
  editSkill,
  patchSkill,
  removeSkillFile,
  type SkillChange,
  type SkillManageContext,
  SkillManageError,
  writeSkillFile,
} from "../../knowledge/skills/manage.js";
import { createdByForOrigin } from "../../knowledge/skills/usage.js";
import { knowledgeStores } from "../../knowledge/stores.js";
import { fuzzyReplace } from "../file/fuzzy-match.js";
import { defineTool, type ToolContext } from "../types.js";
import { gateOn, payloadOf, stageWrite } from "../write-approval/stage.js";
import { precheckSkillWrite } from "./skill-precheck.js";

export type { SkillManageArgs } from "./shared.js";

import { type SkillManageArgs, skillsConfigOf } from "./shared.js";
import description from "./skill-manage.md";

const ACTIONS = ["create", "patch", "edit", "delete", "write_file", "remove_file"] as const;
type Action = (typeof ACTIONS)[number];

const parameters = Type.Object({
  action: Type.Unsafe<Action>({ type: "string", enum: [...ACTIONS] }),
  name: Type.String({ minLength: 1 }),
  category: Type.Optional(Type.String()),
  content: Type.Optional(Type.String()),
  old_string: Type.Optional(Type.String()),
  new_string: Type.Optional(Type.String()),
  replace_all: Type.Optional(Type.Boolean()),
  file_path: Type.Optional(Type.String()),
  file_content: Type.Optional(Type.String()),
});

function need<T>(value: T | undefined, field: string, action: Action, example: string): T {
  if (value === undefined || value === null)
    throw new SkillManageError(`${field} is required for action "${action}": ${example}`);
  return value;
}

/**
 * How the tool's skill writes are made: whitespace-tolerant patches, and `created_by` from the
 * write origin ("agent" only for the background review or the curator; a skill made in a
 * conversation is the user's own).
 */
export function skillManageContext(
  ctx: Pick<ToolContext, "home" | "config" | "env" | "writeOrigin" | "skillSink">,
): SkillManageContext {
  // The state backend's sink (PostgreSQL: the skill is stored for every instance) unless given one.
  const sink = ctx.skillSink ?? knowledgeStores(ctx.home).skillSink;
  return {
    ...(sink ? { sink } : {}),
    home: ctx.home,
    config: skillsConfigOf(ctx.config),
    env: ctx.env,
    replace: fuzzyReplace,
    createdBy: createdByForOrigin(ctx.writeOrigin),
  };
}

/**
 * Applies one skill write through manage.ts (validation, injection scan, ownership, atomic
 * writes). The tool's direct path and approving a staged write both end here. Throws
 * `SkillManageError` with text the model or the user can act on.
 */
export async function runSkillManage(mc: SkillManageContext, args: SkillManageArgs): Promise<SkillChange> {
  const name = args.name;
  const action = args.action as Action;
  switch (action) {
    case "create":
      return createSkill(mc, {
        name,
        category: args.category,
        content: need(args.content, "content", "create", "the full SKILL.md (frontmatter and instructions)."),
      });
    case "edit":
      return editSkill(mc, {
        name,
        content: need(args.content, "content", "edit", "the full new SKILL.md (view the skill first)."),
      });
    case "patch":
      return patchSkill(mc, {
        name,
        oldString: need(args.old_string, "old_string", "patch", "the exact text to find."),
        newString: need(args.new_string, "new_string", "patch", 'the replacement text ("" to delete).'),
        replaceAll: args.replace_all ?? false,
        filePath: args.file_path,
      });
    case "delete":
      return deleteSkill(mc, { name });
    case "write_file":
      return writeSkillFile(mc, {
        name,
        filePath: need(args.file_path, "file_path", "write_file", 'e.g. "references/notes.md".'),
        content: need(args.file_content, "file_content", "write_file", "the text of the file."),
      });
    case "remove_file":
      return removeSkillFile(mc, {
        name,
        filePath: need(args.file_path, "file_path", "remove_file", 'e.g. "references/notes.md".'),
      });
    default:
      throw new SkillManageError(
        `Unknown action "${String(args.action)}". Use one of: ${ACTIONS.join(", ")}.`,
      );
  }
}

export const skillManageTool = defineTool({
  name: "skill_manage",
  toolset: "skills",
  description,
  parameters,
  parallelSafe: false,
  emoji: "📝",
  async handler(args, ctx) {
    const mc = skillManageContext(ctx);
    if (gateOn(ctx, "skills")) {
      await precheckSkillWrite(mc, args);
      return stageWrite(ctx, "skills", payloadOf({ ...args }), mc);
    }
    const change = await runSkillManage(mc, args);
    return { success: true, message: change.message, path: change.file ?? change.dir };
  },
});
