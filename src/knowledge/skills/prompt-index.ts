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
  /**
   * Budget mode: the whole block stays within this many characters however many skills there
   * are. Skills are taken in `scores` order (highest first; ties keep the given order): short
   * descriptions while they fit in about two thirds of the budget, then names only, then a count
   * and a pointer to `skills_list` for the rest. Without it, the older growth rules above apply.
   */
  budgetChars?: number;
  /** Rank of each skill by name for budget mode (see index-rank.ts); absent names rank 0. */
  scores?: ReadonlyMap<string, number>;
}

/** The per-request skills index budget of a session prompt (about 800 tokens). */
export const DEFAULT_INDEX_BUDGET_CHARS = 2800;

/** Bare names cost more tokens per character than prose (hyphens, rare words); weigh them so. */
const NAME_WEIGHT = 1.4;

/** One line of text: whitespace collapsed, cut at a word boundary to `max` characters with "…". */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  const head = space > max * 0.6 ? cut.slice(0, space) : cut;
  return `${head.replace(/[\s,;:.(\u2014-]+$/u, "")}…`;
}

/** The first clause of a description: up to the first sentence end, semicolon, dash or bracket. */
function firstClause(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/(?:[.;!?](?:\s|$)|\s[\u2014\u2013-]\s|\s\()/u);
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
  if (options.budgetChars !== undefined) {
    // What fits whole is shown as before (full or short descriptions, category order).
    const whole = renderSkillsIndex(skills, { ...options, budgetChars: undefined, maxListed: skills.length });
    if (whole.length <= options.budgetChars) return whole;
    return renderBudgeted(skills, options, options.budgetChars, shortChars, canManage);
  }
  const listed = skills.slice(0, maxListed);
  const lines = header(options, canManage);
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

function header(options: SkillsIndexOptions, canManage: boolean): string[] {
  const lines = ["## Skills"];
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
  return lines;
}

/**
 * Budget mode of {@link renderSkillsIndex}: ranked skills, short descriptions first, then names,
 * then a pointer; never longer than `budget` characters (the header and pointer included).
 */
function renderBudgeted(
  skills: readonly SkillMeta[],
  options: SkillsIndexOptions,
  budget: number,
  shortChars: number,
  canManage: boolean,
): string {
  const scores = options.scores;
  const ranked = skills
    .map((skill, index) => ({ skill, index, score: scores?.get(skill.name) ?? 0 }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const head = header(options, canManage);
  // Reserve room for the closing tag, the "Also:" prefix and the pointer line.
  const pointerReserve = 160;
  let used = head.join("\n").length + "\n<skills>\n</skills>".length + pointerReserve;
  const entries = ranked.map(({ skill, index }) => {
    const description = oneLine(firstClause(skill.description), shortChars);
    const line = description ? `${skill.name}: ${description}` : skill.name;
    const category = skill.category || "uncategorised";
    // A description line, with its category header counted once (approximately: per category).
    return {
      skill,
      index,
      line,
      describedCost: line.length + 1,
      category,
      namedCost: (skill.name.length + 2) * NAME_WEIGHT,
    };
  });
  const categoryCost = (list: readonly { category: string }[]) =>
    [...new Set(list.map((e) => e.category))].reduce((sum, c) => sum + c.length + 3, 0);
  // When every skill can be listed (some by name), describe as many of the top-ranked as fit.
  let describedCount = -1;
  let namedTotal = entries.reduce((sum, e) => sum + e.namedCost, 0);
  let describedTotal = 0;
  for (let k = 0; k <= entries.length; k++) {
    if (k > 0) {
      const e = entries[k - 1] as (typeof entries)[number];
      describedTotal += e.describedCost;
      namedTotal -= e.namedCost;
    }
    // Everything listed: no pointer line, only the "Also: " prefix to reserve.
    const total = used - pointerReserve + 8 + describedTotal + categoryCost(entries.slice(0, k)) + namedTotal;
    if (total <= budget) describedCount = k;
  }
  const described: typeof entries = [];
  const named: typeof entries = [];
  if (describedCount >= 0) {
    described.push(...entries.slice(0, describedCount));
    named.push(...entries.slice(describedCount));
  } else {
    // Too many even by name: descriptions for about two thirds of the budget, then names.
    let describing = true;
    for (const e of entries) {
      if (
        describing &&
        used + e.describedCost + categoryCost([...described, e]) - categoryCost(described) <= budget * 0.67
      ) {
        used += e.describedCost + categoryCost([...described, e]) - categoryCost(described);
        described.push(e);
        continue;
      }
      describing = false;
      if (used + e.namedCost > budget) break;
      named.push(e);
      used += e.namedCost;
    }
  }
  const lines = [...head, "<skills>"];
  let category: string | undefined;
  // Listed in the usual category order, so related skills sit together.
  for (const { skill, line } of described.sort((a, b) => a.index - b.index)) {
    if (skill.category !== category) {
      category = skill.category;
      lines.push(`[${category || "uncategorised"}]`);
    }
    lines.push(line);
  }
  if (named.length > 0) {
    lines.push(
      `Also: ${named
        .sort((a, b) => a.index - b.index)
        .map((n) => n.skill.name)
        .join(", ")}`,
    );
  }
  lines.push("</skills>");
  const rest = skills.length - described.length - named.length;
  if (rest > 0) {
    lines.push(
      `${rest} more skills are not listed here: call skills_list(query=...) to search them all, ` +
        "or skills_list() to page through them.",
    );
  }
  return lines.join("\n");
}

export interface SkillsIndexShape {
  /** Skills listed with a description. */
  described: number;
  /** Skills listed by name only ("Also: …"). */
  named: number;
  /** Skills left to `skills_list`. */
  unlisted: number;
}

/** What an index block lists (for `hermes prompt-size`): counts read back from its text. */
export function skillsIndexShape(text: string): SkillsIndexShape {
  const body = text.slice(text.indexOf("<skills>") + 1, text.indexOf("</skills>"));
  const lines = body.split("\n").slice(1);
  const also = lines.find((l) => l.startsWith("Also: "));
  return {
    described: lines.filter((l) => l && !l.startsWith("[") && !l.startsWith("Also: ")).length,
    named: also ? also.slice(6).split(", ").length : 0,
    unlisted: Number(/(\d+) more skills are not listed/.exec(text)?.[1] ?? 0),
  };
}
