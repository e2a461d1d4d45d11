/**
 * The checks a skill write passes before it is staged for approval: the same validation,
 * injection scan and ownership rules manage.ts applies when writing, run without writing, so a
 * write that could never apply is refused at once instead of queued for the user. Approving runs
 * every check again (the skill may have changed meanwhile).
 */

import { findSkill } from "../../knowledge/skills/discovery.js";
import {
  assertNotPinned,
  locateWritable,
  type SkillManageContext,
  SkillManageError,
} from "../../knowledge/skills/manage.js";
import {
  assertCategory,
  assertSkillName,
  supportFileParts,
  validateSkillMarkdown,
  validateSupportFile,
} from "../../knowledge/skills/validate.js";
import { threatRefusal } from "../../knowledge/threats.js";
import type { SkillManageArgs } from "./shared.js";

function need(value: string | undefined | null, field: string, action: string): string {
  if (value === undefined || value === null) {
    throw new SkillManageError(`${field} is required for action "${action}".`);
  }
  return value;
}

/** Throws `SkillManageError` naming the first rule `args` breaks; returns when it may be staged. */
export async function precheckSkillWrite(mc: SkillManageContext, args: SkillManageArgs): Promise<void> {
  const name = args.name.trim();
  const action = args.action;
  assertSkillName(name);
  switch (action) {
    case "create": {
      const parsed = validateSkillMarkdown(need(args.content, "content", action), name);
      const category = (args.category?.trim() || parsed.frontmatter.category || "").trim();
      if (category) assertCategory(category);
      const existing = findSkill(name, {
        home: mc.home,
        config: mc.config,
        env: mc.env,
        includeDisabled: true,
        includeOtherPlatforms: true,
      });
      if (existing) {
        throw new SkillManageError(
          `A skill named "${name}" already exists at ${existing.dir}. Use patch or edit to change it, or pick another name.`,
        );
      }
      return;
    }
    case "edit":
      locateWritable(mc, name, action);
      validateSkillMarkdown(need(args.content, "content", action), name);
      return;
    case "patch": {
      locateWritable(mc, name, action);
      need(args.old_string, "old_string", action);
      const refusal = threatRefusal(need(args.new_string, "new_string", action), "strict");
      if (refusal) throw new SkillManageError(`new_string: ${refusal}`);
      return;
    }
    case "write_file": {
      locateWritable(mc, name, action);
      const filePath = need(args.file_path, "file_path", action);
      supportFileParts(filePath);
      validateSupportFile(need(args.file_content, "file_content", action), filePath);
      return;
    }
    case "remove_file":
      locateWritable(mc, name, action);
      supportFileParts(need(args.file_path, "file_path", action));
      return;
    case "delete": {
      const skill = locateWritable(mc, name, action);
      // The home's usage store (PostgreSQL: a pin set on any instance), as the delete itself checks.
      await assertNotPinned(mc, skill.name);
      return;
    }
    default:
      throw new SkillManageError(
        `Unknown action "${String(action)}". Use one of: create, patch, edit, delete, write_file, remove_file.`,
      );
  }
}
