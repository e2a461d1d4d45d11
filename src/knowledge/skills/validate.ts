/**
 * The rules every write to a skill passes: a well-formed SKILL.md whose name matches its folder,
 * sizes within limits, and no prompt-injection or exfiltration text (skills are loaded into
 * future conversations, so content the agent writes is scanned at the strict level).
 */
import { threatRefusal } from "../threats.js";
import { type ParsedSkill, parseSkillMarkdown, SkillParseError } from "./frontmatter.js";
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_SKILL_MD_CHARS,
  MAX_SUPPORT_FILE_BYTES,
  nameProblem,
  SUPPORT_DIRS,
  splitRelativePath,
} from "./paths.js";

/** A refused skill change; the message says what is wrong and what to do instead. */
export class SkillManageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SkillManageError";
  }
}

function fail(message: string): never {
  throw new SkillManageError(message);
}

/** Throws when `name` is not a valid skill name. */
export function assertSkillName(name: string): void {
  const problem = nameProblem(name, "skill name");
  if (problem) fail(problem);
}

/** Throws when `category` is not a valid category (one folder name). */
export function assertCategory(category: string): void {
  const problem = nameProblem(category, "category");
  if (problem) fail(problem);
}

/**
 * Checks a full SKILL.md about to be written as skill `expectedName`, returning it parsed.
 * Throws {@link SkillManageError} naming the first rule it breaks.
 */
export function validateSkillMarkdown(content: string, expectedName: string): ParsedSkill {
  if (!content.trim()) {
    fail(
      "The SKILL.md content is empty. Give the full file: frontmatter (name, description) and the instructions.",
    );
  }
  if (content.length > MAX_SKILL_MD_CHARS) {
    fail(
      `SKILL.md would be ${content.length.toLocaleString("en-US")} characters; the limit is ` +
        `${MAX_SKILL_MD_CHARS.toLocaleString("en-US")}. Move detail into references/ files (write_file) and keep SKILL.md to the procedure.`,
    );
  }
  let parsed: ParsedSkill;
  try {
    parsed = parseSkillMarkdown(content, "SKILL.md");
  } catch (error) {
    if (error instanceof SkillParseError) fail(error.message);
    throw error;
  }
  const { frontmatter, body } = parsed;
  const nameIssue = nameProblem(frontmatter.name, "skill name");
  if (nameIssue) fail(`SKILL.md frontmatter: ${nameIssue}`);
  if (frontmatter.name !== expectedName) {
    fail(
      `The frontmatter says name: ${frontmatter.name}, but the skill is "${expectedName}". ` +
        `They must match; set "name: ${expectedName}" (to rename a skill, create a new one and delete the old).`,
    );
  }
  if (frontmatter.description.length > MAX_DESCRIPTION_LENGTH) {
    fail(
      `The description is ${frontmatter.description.length} characters; the limit is ${MAX_DESCRIPTION_LENGTH}. ` +
        "Keep it to one sentence about what the skill does and when to use it.",
    );
  }
  if (!body.trim()) {
    fail(
      "SKILL.md has no instructions after the frontmatter. Add the procedure: when to use it, steps, pitfalls.",
    );
  }
  assertClean(content, "SKILL.md");
  return parsed;
}

/** Throws when text the agent is writing into a skill carries injection or exfiltration patterns. */
export function assertClean(text: string, label: string): void {
  const refusal = threatRefusal(text, "strict");
  if (refusal) fail(`${label}: ${refusal}`);
}

/**
 * The segments of a supporting-file path (`references/x.md`), or a thrown error: it must be
 * relative, stay inside the skill, and start with references/, templates/, scripts/ or assets/.
 */
export function supportFileParts(filePath: string): string[] {
  const parts = splitRelativePath(filePath);
  if (!Array.isArray(parts)) fail(parts.error);
  const [first] = parts;
  if (!first || !SUPPORT_DIRS.includes(first)) {
    fail(
      `file_path "${filePath}" must be under ${SUPPORT_DIRS.map((d) => `${d}/`).join(", ")} ` +
        '(e.g. "references/notes.md"); SKILL.md itself is changed with edit or patch.',
    );
  }
  if (parts.length < 2)
    fail(`file_path "${filePath}" names a folder; add a file name, e.g. "${first}/notes.md".`);
  return parts;
}

/** Throws when a supporting file's content is too large or unsafe. */
export function validateSupportFile(content: string, filePath: string): void {
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > MAX_SUPPORT_FILE_BYTES) {
    fail(
      `${filePath} would be ${bytes.toLocaleString("en-US")} bytes; the limit is 1 MiB per supporting file. Split it.`,
    );
  }
  if (content.length > MAX_SKILL_MD_CHARS) {
    fail(
      `${filePath} would be ${content.length.toLocaleString("en-US")} characters; the limit is ` +
        `${MAX_SKILL_MD_CHARS.toLocaleString("en-US")} per file (as for SKILL.md). Split it into smaller files.`,
    );
  }
  assertClean(content, filePath);
}
