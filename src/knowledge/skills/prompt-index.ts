/**
 * The skills index of the system prompt: one instruction paragraph and the skills grouped by
 * category. It is paid on every request, so it shrinks as the collection grows: full one-line
 * descriptions for a small collection, short ones for a large one, and past a hard cap only the
 * first skills with a pointer to `skills_list` for the rest. Pure and deterministic, so the system
 * prompt stays byte-stable for the same skills.
 */
import type { SkillMeta } from "./types.js";

export interface SkillsIndexOptions {
  /** Up to this many skills, each gets its description (up to `fullDescriptionChars`). Default 30. */
  fullThreshold?: number;
  /** Past the threshold, descriptions are cut to this many characters. Default 45. */
  shortDescriptionChars?: number;
  /** Description length in the full form. Default 120. */
  fullDescriptionChars?: number;
  /** At most this many skills are listed; the rest are reached through `skills_list`. Default 150. */
  maxListed?: number;
  /** Page size of `skills_list`, to name the page where the unlisted skills start. Default 50. */
  listPageSize?: number;
  /** Whether the model has `skill_manage` (the sentence about saving skills is left out otherwise). */
  canManage?: boolean;
  /**
   * Include the instruction paragraph (default true). Leave it out when another prompt layer
   * already tells the model how to use skills, to avoid paying for the same advice twice.
   */
  instructions?: boolean;
}

/** One line of text: whitespace collapsed, cut at a word boundary to `max` characters with "…". */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  const head = space > max * 0.6 ? cut.slice(0, space) : cut;
  return `${head.replace(/[\s,;:.(—-]+$/u, "")}…`;
}

/** The first clause of a description: up to the first sentence end, semicolon, dash or bracket. */
function firstClause(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/(?:[.;!?](?:\s|$)|\s[—–-]\s|\s\()/u);
  return end > 12 ? flat.slice(0, end) : flat;
}

/**
 * The index block for the system prompt, or "" when there are no skills. `skills` should already
 * be sorted (discovery sorts by category, then name); the order is kept, so the listed prefix
 * matches the first pages of `skills_list`.
 */
export function renderSkillsIndex(skills: readonly SkillMeta[], options: SkillsIndexOptions = {}): string {
  if (skills.length === 0) return "";
  const fullThreshold = options.fullThreshold ?? 30;
  const shortChars = options.shortDescriptionChars ?? 45;
  const fullChars = options.fullDescriptionChars ?? 120;
  const maxListed = options.maxListed ?? 150;
  const pageSize = options.listPageSize ?? 50;
  const canManage = options.canManage ?? true;

  const full = skills.length <= fullThreshold;
  const listed = skills.slice(0, maxListed);
  const lines: string[] = ["## Skills"];
  if (options.instructions ?? true) {
    lines.push(
      "Skills are saved, tested procedures for recurring tasks. Before replying, check whether a skill " +
        "below matches the task; if one does, load it with skill_view(name) and follow it. " +
        (canManage
          ? "When you work out a non-trivial approach that will be needed again, save it with skill_manage, " +
            "and patch a skill you used if it proved wrong or incomplete."
          : "Skip skills that do not clearly apply."),
    );
  }
  lines.push("<skills>");
  let category: string | undefined;
  for (const skill of listed) {
    if (skill.category !== category) {
      category = skill.category;
      lines.push(`[${category || "uncategorised"}]`);
    }
    const description = full
      ? oneLine(skill.description, fullChars)
      : oneLine(firstClause(skill.description), shortChars);
    lines.push(description ? `${skill.name}: ${description}` : skill.name);
  }
  lines.push("</skills>");
  const rest = skills.length - listed.length;
  if (rest > 0) {
    const page = Math.floor(listed.length / pageSize) + 1;
    lines.push(
      `${rest} more skills are not listed here: call skills_list(page=${page}) and onward, or ` +
        "skills_list(query=...) to search them all.",
    );
  }
  return lines.join("\n");
}
