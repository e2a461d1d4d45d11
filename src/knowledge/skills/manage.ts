/**
 * Creating and changing skills: create, patch, edit, delete, write_file, remove_file. Every write
 * is validated (see validate.ts) and atomic; new skills go to `<home>/skills/[<category>/]<name>/`.
 * Skills the agent does not own are refused: an unmodified bundled skill is refreshed by updates
 * and a hub install is pinned to its published content, so changing either in place would be
 * lost or break its integrity check. Errors are {@link SkillManageError}s with actionable text.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  unlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { knowledgeStores } from "../stores.js";
import { findSkill, resolveExternalDirs } from "./discovery.js";
import { isInside, posixRelative, resolveInsideSkill, skillsRoot } from "./paths.js";
import type { SkillMeta, SkillsConfig, SkillWriteSink } from "./types.js";
import type { SkillUsageRecords } from "./usage.js";
import {
  assertCategory,
  assertSkillName,
  SkillManageError,
  supportFileParts,
  validateSkillMarkdown,
  validateSupportFile,
} from "./validate.js";

export { SkillManageError } from "./validate.js";

/** The outcome of a find-and-replace; structurally what the file tools' fuzzy matcher returns. */
export type ReplaceResult =
  | { ok: true; content: string; count: number; strategy?: string }
  | { ok: false; reason: "not_found" | "ambiguous"; count?: number; hint?: string };

/** Replaces `oldString` in `content`: one unique match, or every match when `replaceAll`. */
export type TextReplacer = (
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
) => ReplaceResult;

export interface SkillManageContext {
  home: string;
  config?: SkillsConfig | undefined;
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Matching used by patch; default exact. The tool passes a whitespace-tolerant matcher. */
  replace?: TextReplacer;
  /**
   * Recorded as `created_by` in `.usage.json` on create. Default: from the current skill write
   * origin (usage.ts): "agent" inside the background review or curator, null otherwise.
   */
  createdBy?: "agent" | null;
  now?: () => Date;
  /**
   * Where changes are also kept when skills live in a database (see `SkillWriteSink`); default the
   * home's backend's (`knowledgeStores(home).skillSink`: none for a file home).
   */
  sink?: SkillWriteSink | undefined;
  /** Usage records (counts, `created_by`, pins); default the home's (`knowledgeStores`). */
  usage?: SkillUsageRecords | undefined;
}

const sinkOf = (ctx: SkillManageContext): SkillWriteSink | undefined =>
  ctx.sink ?? knowledgeStores(ctx.home).skillSink;

export interface SkillChange {
  /** One sentence for the model or the user: what changed and where. */
  message: string;
  name: string;
  /** The skill folder. */
  dir: string;
  /** The file written or removed (absent for delete). */
  file?: string;
}

/** Exact find-and-replace, the default {@link TextReplacer}. */
export const exactReplace: TextReplacer = (content, oldString, newString, replaceAll) => {
  const count = oldString ? content.split(oldString).length - 1 : 0;
  if (count === 0) return { ok: false, reason: "not_found" };
  if (count > 1 && !replaceAll) return { ok: false, reason: "ambiguous", count };
  const next = replaceAll
    ? content.split(oldString).join(newString)
    : content.replace(oldString, () => newString);
  return { ok: true, content: next, count: replaceAll ? count : 1, strategy: "exact" };
};

function fail(message: string): never {
  throw new SkillManageError(message);
}

/** Any skill called `name`, wherever it lives and whatever its state (disabled, other platforms). */
export function findAnySkill(
  ctx: Pick<SkillManageContext, "home" | "config" | "env">,
  name: string,
): SkillMeta | undefined {
  if (!name) return undefined;
  return findSkill(name, {
    home: ctx.home,
    config: ctx.config,
    env: ctx.env,
    includeDisabled: true,
    includeOtherPlatforms: true,
  });
}

/** The skill to change, or a thrown error when it is unknown or not ours to change. */
export function locateWritable(ctx: SkillManageContext, name: string, action: string): SkillMeta {
  assertSkillName(name);
  const skill = findAnySkill(ctx, name);
  if (!skill) {
    fail(
      `No skill named "${name}". Call skills_list to see the installed skills, or use action "create" to make it.`,
    );
  }
  if (skill.origin === "bundled") {
    fail(
      `"${name}" is a bundled skill that ships with Hermes and is refreshed on updates, so it cannot be ` +
        `changed in place (${action} refused). Create a new skill with another name (e.g. "${name}-custom") ` +
        "that adapts it, and use that one.",
    );
  }
  if (skill.origin === "hub") {
    fail(
      `"${name}" was installed from the skills hub; changing it in place would be overwritten by ` +
        `\`hermes skills update\` and break its integrity check (${action} refused). Create a new skill with ` +
        `another name (e.g. "${name}-custom") that adapts it, or ask the user to uninstall it with ` +
        `\`hermes skills uninstall ${name}\`.`,
    );
  }
  return skill;
}

/** Creates `<home>/skills/[<category>/]<name>/SKILL.md` from a full SKILL.md. */
export async function createSkill(
  ctx: SkillManageContext,
  args: { name: string; content: string; category?: string | undefined },
): Promise<SkillChange> {
  const name = args.name.trim();
  assertSkillName(name);
  const parsed = validateSkillMarkdown(args.content, name);
  const category = (args.category?.trim() || parsed.frontmatter.category || "").trim();
  if (category) assertCategory(category);
  const existing = findAnySkill(ctx, name);
  if (existing) {
    fail(
      `A skill named "${name}" already exists at ${existing.dir}. Use patch or edit to change it, or pick ` +
        "another name.",
    );
  }
  const root = skillsRoot(ctx.home);
  if (category && existsSync(join(root, category, "SKILL.md"))) {
    fail(`The category "${category}" is itself a skill folder; choose another category.`);
  }
  const dir = category ? join(root, category, name) : join(root, name);
  if (existsSync(dir)) {
    fail(`${dir} already exists (a category folder or a leftover); pick another name or category.`);
  }
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "SKILL.md");
  await atomicWriteFile(file, args.content);
  await sinkOf(ctx)?.saved({ name, dir, created: true });
  await usageOf(ctx).record(name, "create", usageOptions(ctx));
  return {
    message:
      `Created skill "${name}" at ${file}. Add supporting files with action "write_file" ` +
      '(e.g. file_path "references/notes.md").',
    name,
    dir,
    file,
  };
}

/** Replaces the whole SKILL.md of an existing skill. */
export async function editSkill(
  ctx: SkillManageContext,
  args: { name: string; content: string },
): Promise<SkillChange> {
  const skill = locateWritable(ctx, args.name.trim(), "edit");
  validateSkillMarkdown(args.content, skill.name);
  await atomicWriteFile(skill.file, args.content);
  await sinkOf(ctx)?.saved({ name: skill.name, dir: skill.dir, created: false });
  await usageOf(ctx).record(skill.name, "patch", usageOptions(ctx));
  return {
    message: `Rewrote SKILL.md of "${skill.name}" (${skill.file}).`,
    name: skill.name,
    dir: skill.dir,
    file: skill.file,
  };
}

/**
 * Find-and-replace in SKILL.md (default) or in a supporting file: `oldString` must match exactly
 * one place unless `replaceAll`. The result is validated like any other write.
 */
export async function patchSkill(
  ctx: SkillManageContext,
  args: {
    name: string;
    oldString: string;
    newString: string;
    replaceAll?: boolean;
    filePath?: string | undefined;
  },
): Promise<SkillChange> {
  const skill = locateWritable(ctx, args.name.trim(), "patch");
  if (!args.oldString) fail("old_string is empty: give the exact text to replace (view the skill first).");
  const onSkillMd = !args.filePath || /^(?:\.\/)?SKILL\.md$/.test(args.filePath.trim());
  const label = onSkillMd ? "SKILL.md" : (args.filePath as string).trim();
  const target = onSkillMd ? skill.file : supportTarget(skill, label);
  let content: string;
  try {
    content = readFileSync(target, "utf8");
  } catch {
    fail(`${label} does not exist in skill "${skill.name}". Linked files: ${linkedList(skill)}.`);
  }
  const outcome = (ctx.replace ?? exactReplace)(
    content,
    args.oldString,
    args.newString,
    args.replaceAll ?? false,
  );
  if (!outcome.ok) {
    if (outcome.reason === "ambiguous") {
      fail(
        `old_string matches ${outcome.count ?? "several"} places in ${label}. Include more surrounding text so it ` +
          "matches exactly one, or set replace_all to true.",
      );
    }
    fail(
      `old_string was not found in ${label} of "${skill.name}".${outcome.hint ? ` ${outcome.hint}` : ""} ` +
        `Call skill_view to see the current text and copy the part to change exactly.`,
    );
  }
  if (onSkillMd) {
    try {
      validateSkillMarkdown(outcome.content, skill.name);
    } catch (error) {
      if (error instanceof SkillManageError) fail(`The patch would break SKILL.md: ${error.message}`);
      throw error;
    }
  } else {
    validateSupportFile(outcome.content, label);
  }
  await atomicWriteFile(target, outcome.content);
  await sinkOf(ctx)?.saved({ name: skill.name, dir: skill.dir, created: false });
  await usageOf(ctx).record(skill.name, "patch", usageOptions(ctx));
  const how = outcome.strategy && outcome.strategy !== "exact" ? `, ${outcome.strategy} match` : "";
  const times = outcome.count === 1 ? "1 replacement" : `${outcome.count} replacements`;
  return {
    message: `Patched ${label} of "${skill.name}" (${times}${how}).`,
    name: skill.name,
    dir: skill.dir,
    file: target,
  };
}

/** The home's usage records: the context's, else the state backend's (the file, or PostgreSQL). */
function usageOf(ctx: Pick<SkillManageContext, "home" | "usage">): SkillUsageRecords {
  return ctx.usage ?? knowledgeStores(ctx.home).skillUsage;
}

/**
 * Throws when `name` is pinned, which protects it from deletion. Read from the home's usage store
 * each time (on PostgreSQL, a pin set on any instance holds here at once); a store that cannot be
 * read refuses the delete rather than assuming no pin.
 */
export async function assertNotPinned(
  ctx: Pick<SkillManageContext, "home" | "usage">,
  name: string,
): Promise<void> {
  let pinned: boolean;
  try {
    pinned = (await usageOf(ctx).read())[name]?.pinned === true;
  } catch (error) {
    fail(
      `Could not check whether "${name}" is pinned (${error instanceof Error ? error.message : String(error)}), ` +
        "so it was not deleted. Try again once the skill usage store answers.",
    );
  }
  if (pinned) {
    fail(
      `"${name}" is pinned, which protects it from deletion. Ask the user to unpin it first ` +
        "(hermes curator unpin); patch and edit still work on pinned skills.",
    );
  }
}

/** Deletes a skill folder (never a skills root, never through a symlink), and its usage record. */
export async function deleteSkill(ctx: SkillManageContext, args: { name: string }): Promise<SkillChange> {
  const skill = locateWritable(ctx, args.name.trim(), "delete");
  await assertNotPinned(ctx, skill.name);
  const dir = skill.dir;
  if (lstatSync(dir).isSymbolicLink()) {
    fail(
      `Refusing to delete "${skill.name}": ${dir} is a symbolic link. Remove the link by hand if intended.`,
    );
  }
  const real = realpathSync(dir);
  const roots = [
    skillsRoot(ctx.home),
    ...resolveExternalDirs(ctx.home, ctx.config?.external_dirs, ctx.env).dirs,
  ]
    .map((r) => {
      try {
        return realpathSync(r);
      } catch {
        return undefined;
      }
    })
    .filter((r): r is string => r !== undefined);
  const root = roots.find((r) => isInside(r, real) && r !== real);
  if (!root) fail(`Refusing to delete "${skill.name}": ${dir} is not inside a skills folder.`);
  rmSync(dir, { recursive: true, force: true });
  // Drop a category folder the deletion emptied (never the skills root itself).
  const parent = dirname(real);
  if (parent !== root && isInside(root, parent)) {
    try {
      if (readdirSync(parent).length === 0) rmdirSync(parent);
    } catch {
      // Best effort.
    }
  }
  await sinkOf(ctx)?.deleted({ name: skill.name, dir });
  await usageOf(ctx).record(skill.name, "delete", usageOptions(ctx));
  return { message: `Deleted skill "${skill.name}" (${dir}).`, name: skill.name, dir };
}

/** Adds or replaces a supporting file under references/, templates/, scripts/ or assets/. */
export async function writeSkillFile(
  ctx: SkillManageContext,
  args: { name: string; filePath: string; content: string },
): Promise<SkillChange> {
  const skill = locateWritable(ctx, args.name.trim(), "write_file");
  const target = supportTarget(skill, args.filePath);
  validateSupportFile(args.content, args.filePath);
  let replaced = false;
  try {
    const stats = lstatSync(target);
    if (stats.isDirectory())
      fail(`"${args.filePath}" is a folder in skill "${skill.name}"; give a file name inside it.`);
    if (stats.isSymbolicLink())
      fail(`"${args.filePath}" is a symbolic link; remove it first with remove_file.`);
    replaced = true;
  } catch (error) {
    if (error instanceof SkillManageError) throw error;
  }
  mkdirSync(dirname(target), { recursive: true });
  await atomicWriteFile(target, args.content);
  await sinkOf(ctx)?.saved({ name: skill.name, dir: skill.dir, created: false });
  await usageOf(ctx).record(skill.name, "patch", usageOptions(ctx));
  const rel = posixRelative(skill.dir, target);
  const bytes = Buffer.byteLength(args.content, "utf8");
  return {
    message: `${replaced ? "Replaced" : "Wrote"} ${rel} (${bytes} bytes) in skill "${skill.name}" (${target}).`,
    name: skill.name,
    dir: skill.dir,
    file: target,
  };
}

/** Removes a supporting file, and the folders below the skill that it leaves empty. */
export async function removeSkillFile(
  ctx: SkillManageContext,
  args: { name: string; filePath: string },
): Promise<SkillChange> {
  const skill = locateWritable(ctx, args.name.trim(), "remove_file");
  const target = supportTarget(skill, args.filePath);
  let stats: ReturnType<typeof lstatSync>;
  try {
    stats = lstatSync(target);
  } catch {
    fail(`"${args.filePath}" does not exist in skill "${skill.name}". Linked files: ${linkedList(skill)}.`);
  }
  if (stats.isDirectory()) fail(`"${args.filePath}" is a folder; remove the files in it one by one.`);
  unlinkSync(target);
  let dir = dirname(target);
  while (dir !== skill.dir && isInside(skill.dir, dir)) {
    try {
      if (readdirSync(dir).length > 0) break;
      rmdirSync(dir);
    } catch {
      break;
    }
    dir = dirname(dir);
  }
  await sinkOf(ctx)?.saved({ name: skill.name, dir: skill.dir, created: false });
  await usageOf(ctx).record(skill.name, "patch", usageOptions(ctx));
  return {
    message: `Removed ${posixRelative(skill.dir, target)} from skill "${skill.name}".`,
    name: skill.name,
    dir: skill.dir,
    file: target,
  };
}

/** The absolute path of a supporting file, validated against traversal and symlink escapes. */
function supportTarget(skill: SkillMeta, filePath: string): string {
  const parts = supportFileParts(filePath);
  const target = resolveInsideSkill(skill.dir, parts);
  if (typeof target !== "string") fail(target.error);
  return target;
}

function linkedList(skill: SkillMeta): string {
  return skill.linkedFiles.length > 0 ? skill.linkedFiles.join(", ") : "none";
}

function usageOptions(ctx: SkillManageContext) {
  return {
    createdBy: ctx.createdBy ?? null,
    ...(ctx.now ? { now: ctx.now } : {}),
  } as const;
}
