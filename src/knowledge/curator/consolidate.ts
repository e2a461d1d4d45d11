/**
 * The consolidation review (`curator.consolidate: true`): the auxiliary model (`auxiliary.curator`)
 * reads the curator-managed skills and proposes merges of near-duplicates into one umbrella skill.
 * The prompt and the parsing of its answer are pure; run.ts applies what passes validation
 * (writes the umbrella, archives the absorbed skills) or, under write approval or `--dry-run`,
 * only reports it. A proposal that names an unknown, pinned, foreign or cron-bound skill is
 * dropped with the reason, never half-applied.
 */
import { parseSkillMarkdown } from "../skills/frontmatter.js";
import { nameProblem } from "../skills/paths.js";

export interface ConsolidationCandidate {
  name: string;
  description: string;
  /** The SKILL.md text (cut to a few thousand characters for the prompt). */
  content: string;
  useCount: number;
  lastActivity: string | null;
}

export interface MergeProposal {
  /** The umbrella: an existing candidate (rewritten) or a new skill name (created). */
  into: string;
  /** Skills absorbed into it and then archived (never `into` itself). */
  from: string[];
  reason: string;
  /** The umbrella's full new SKILL.md. */
  skillMd: string;
}

export interface ParsedProposals {
  merges: MergeProposal[];
  /** Proposals left out, with why (shown in the report). */
  rejected: { proposal: string; why: string }[];
}

const PER_SKILL_CHARS = 2500;

/** The messages for the review: the rules, then every candidate with its text. */
export function consolidationPrompt(candidates: readonly ConsolidationCandidate[]): {
  system: string;
  user: string;
} {
  const system = [
    "You maintain a library of skills (SKILL.md procedures) that an AI agent wrote for itself.",
    "Find groups of skills that cover the same task or are narrow variants of one class of task,",
    "and propose merging each group into ONE umbrella skill whose SKILL.md keeps every distinct,",
    "still-useful step of its members (labelled sections are fine). Do not merge skills that merely",
    "share a topic but serve different tasks. Proposing nothing is a valid answer.",
    "",
    'Answer with JSON only: {"merges": [{"into": "<umbrella name>", "from": ["<absorbed>", ...],',
    '"reason": "<one sentence>", "skill_md": "<the umbrella\'s complete SKILL.md with --- frontmatter',
    'including name and description --->"}]}. "into" may be one of the skills below (it is rewritten)',
    'or a new lowercase-hyphenated name. "from" lists only skills below, never "into" itself.',
  ].join("\n");
  const blocks = candidates.map((c) =>
    [
      `### ${c.name} (used ${c.useCount}x, last activity ${c.lastActivity ?? "never"})`,
      c.content.length > PER_SKILL_CHARS ? `${c.content.slice(0, PER_SKILL_CHARS)}\n[…cut]` : c.content,
    ].join("\n"),
  );
  return { system, user: `The skills (${candidates.length}):\n\n${blocks.join("\n\n")}` };
}

/** The JSON object in a model answer: a fenced block, or the outermost braces. */
function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/i.exec(text)?.[1];
  const candidates = [fenced, text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // Try the next reading.
    }
  }
  return undefined;
}

/**
 * The valid merges in the model's answer. `known` are the candidates (the only skills a merge may
 * absorb); `protectedNames` are skills that must not be absorbed or rewritten (pinned, cron-bound,
 * bundled, hub, the user's own). An unreadable answer yields no merges and one rejection.
 */
export function parseProposals(
  answer: string,
  known: ReadonlySet<string>,
  protectedNames: ReadonlySet<string>,
): ParsedProposals {
  const result: ParsedProposals = { merges: [], rejected: [] };
  const data = extractJson(answer);
  const merges = (data as { merges?: unknown } | undefined)?.merges;
  if (!Array.isArray(merges)) {
    if (answer.trim())
      result.rejected.push({ proposal: answer.slice(0, 120), why: "not the JSON asked for" });
    return result;
  }
  const absorbed = new Set<string>();
  for (const raw of merges) {
    const m = (raw ?? {}) as Record<string, unknown>;
    const into = typeof m["into"] === "string" ? m["into"].trim() : "";
    const from = Array.isArray(m["from"])
      ? [...new Set(m["from"].filter((f): f is string => typeof f === "string").map((f) => f.trim()))]
      : [];
    const label = `${from.join(", ")} → ${into || "?"}`;
    const reject = (why: string) => result.rejected.push({ proposal: label, why });
    const skillMd = typeof m["skill_md"] === "string" ? m["skill_md"] : "";
    const problem = nameProblem(into, "skill name");
    if (problem) {
      reject(problem);
      continue;
    }
    if (from.length === 0) {
      reject('"from" names no skill to absorb');
      continue;
    }
    if (from.includes(into)) {
      reject(`"${into}" cannot absorb itself`);
      continue;
    }
    const unknown = from.filter((f) => !known.has(f));
    if (unknown.length > 0) {
      reject(`not a curator-managed skill: ${unknown.join(", ")}`);
      continue;
    }
    const guarded = [into, ...from].filter((n) => protectedNames.has(n));
    if (guarded.length > 0) {
      reject(`protected (pinned, cron, or not agent-made): ${guarded.join(", ")}`);
      continue;
    }
    const twice = [into, ...from].filter((n) => absorbed.has(n));
    if (twice.length > 0) {
      reject(`already part of another merge: ${twice.join(", ")}`);
      continue;
    }
    let parsedName: string;
    try {
      parsedName = parseSkillMarkdown(skillMd).frontmatter.name;
    } catch (error) {
      reject(`its SKILL.md does not parse: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (parsedName !== into) {
      reject(`its SKILL.md is named "${parsedName}", not "${into}"`);
      continue;
    }
    for (const n of [into, ...from]) absorbed.add(n);
    result.merges.push({
      into,
      from,
      reason: typeof m["reason"] === "string" ? m["reason"].trim() : "",
      skillMd,
    });
  }
  return result;
}
