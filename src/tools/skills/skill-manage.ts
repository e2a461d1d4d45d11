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
  writeSkillFile,
} from "../../knowledge/skills/manage.js";
import { fuzzyReplace } from "../file/fuzzy-match.js";
import { defineTool, type ToolContext } from "../types.js";
import { skillsConfigOf } from "./shared.js";
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
  if (value === undefined) throw new Error(`${field} is required for action "${action}": ${example}`);
  return value;
}

function manageContext(ctx: ToolContext): SkillManageContext {
  return {
    home: ctx.home,
    config: skillsConfigOf(ctx.config),
    env: ctx.env,
    replace: fuzzyReplace,
    // created_by follows the write origin: "agent" only inside the background review or curator.
  };
}

export const skillManageTool = defineTool({
  name: "skill_manage",
  toolset: "skills",
  description,
  parameters,
  parallelSafe: false,
  emoji: "📝",
  async handler(args, ctx) {
    const mc = manageContext(ctx);
    const name = args.name;
    let change: SkillChange;
    switch (args.action) {
      case "create":
        change = await createSkill(mc, {
          name,
          category: args.category,
          content: need(
            args.content,
            "content",
            "create",
            "the full SKILL.md (frontmatter and instructions).",
          ),
        });
        break;
      case "edit":
        change = await editSkill(mc, {
          name,
          content: need(args.content, "content", "edit", "the full new SKILL.md (view the skill first)."),
        });
        break;
      case "patch":
        change = await patchSkill(mc, {
          name,
          oldString: need(args.old_string, "old_string", "patch", "the exact text to find."),
          newString: need(args.new_string, "new_string", "patch", 'the replacement text ("" to delete).'),
          replaceAll: args.replace_all ?? false,
          filePath: args.file_path,
        });
        break;
      case "delete":
        change = await deleteSkill(mc, { name });
        break;
      case "write_file":
        change = await writeSkillFile(mc, {
          name,
          filePath: need(args.file_path, "file_path", "write_file", 'e.g. "references/notes.md".'),
          content: need(args.file_content, "file_content", "write_file", "the text of the file."),
        });
        break;
      case "remove_file":
        change = await removeSkillFile(mc, {
          name,
          filePath: need(args.file_path, "file_path", "remove_file", 'e.g. "references/notes.md".'),
        });
        break;
      default:
        return { error: `Unknown action "${String(args.action)}". Use one of: ${ACTIONS.join(", ")}.` };
    }
    return { success: true, message: change.message, path: change.file ?? change.dir };
  },
});
