/** skills_list: metadata of the installed skills, filtered and paged. */
import { Type } from "@sinclair/typebox";
import { discoverSkills } from "../../knowledge/skills/discovery.js";
import { oneLine } from "../../knowledge/skills/prompt-index.js";
import { defineTool } from "../types.js";
import { discoverOptionsOf } from "./shared.js";
import description from "./skills-list.md";

export const SKILLS_PAGE_SIZE = 50;

const parameters = Type.Object({
  query: Type.Optional(Type.String({ description: "Words to match in name, description or tags." })),
  category: Type.Optional(Type.String({ description: "Only this category." })),
  page: Type.Optional(Type.Integer({ minimum: 1, description: "1-based; the reply gives the page count." })),
});

export const skillsListTool = defineTool({
  name: "skills_list",
  toolset: "skills",
  description,
  parameters,
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "📚",
  handler(args, ctx) {
    const { skills, warnings } = discoverSkills({ ...discoverOptionsOf(ctx), verifyBundled: false });
    const categories = [...new Set(skills.map((s) => s.category).filter(Boolean))];
    let list = skills;
    const category = args.category?.trim().toLowerCase();
    if (category) {
      list = list.filter((s) => s.category.toLowerCase() === category);
      if (list.length === 0) {
        return {
          error: `No skills in category "${args.category}". Categories: ${categories.join(", ") || "(none)"}.`,
        };
      }
    }
    const words = (args.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length > 0) {
      list = list.filter((s) => {
        const haystack = `${s.name} ${s.description} ${s.tags.join(" ")} ${s.category}`.toLowerCase();
        return words.every((w) => haystack.includes(w));
      });
    }
    const pages = Math.max(1, Math.ceil(list.length / SKILLS_PAGE_SIZE));
    const page = args.page ?? 1;
    if (page > pages) {
      return { error: `page ${page} is past the last page (${pages}); ${list.length} skills match.` };
    }
    const shown = list.slice((page - 1) * SKILLS_PAGE_SIZE, page * SKILLS_PAGE_SIZE).map((s) => ({
      name: s.name,
      description: oneLine(s.description, 300),
      category: s.category || null,
      ...(s.tags.length > 0 ? { tags: s.tags.slice(0, 12) } : {}),
      ...(s.missingEnv.length > 0 ? { missing_env: s.missingEnv } : {}),
    }));
    return jsonOnePerLine({
      count: list.length,
      page,
      pages,
      skills: shown,
      ...(category ? {} : { categories }),
      ...(warnings.length > 0 ? { warnings: warnings.slice(0, 5) } : {}),
      next:
        list.length === 0
          ? words.length > 0
            ? "No skill matches; try fewer or other words, or list without query."
            : "No skills are installed yet; create one with skill_manage when an approach is worth keeping."
          : page < pages
            ? `More on page ${page + 1}. Load a skill with skill_view(name).`
            : "Load a skill with skill_view(name).",
    });
  },
});

/**
 * JSON with each element of each top-level array on a line of its own. Still one JSON value, but
 * no line grows with the number of skills, so the registry's per-line cap never cuts it.
 */
export function jsonOnePerLine(value: Record<string, unknown>): string {
  const parts = Object.entries(value).map(([key, field]) =>
    Array.isArray(field) && field.length > 0
      ? `${JSON.stringify(key)}:[\n${field.map((item) => JSON.stringify(item)).join(",\n")}\n]`
      : `${JSON.stringify(key)}:${JSON.stringify(field)}`,
  );
  return `{${parts.join(",")}}`;
}
