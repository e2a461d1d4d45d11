/** Helpers shared by the skill tools: the `skills` section of the config, read defensively. */
import type { SkillsConfig } from "../../knowledge/skills/types.js";
import type { ToolContext } from "../types.js";

function strings(value: unknown): string[] {
  if (typeof value === "string") return value.trim() ? [value] : [];
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === "string" && v.trim() !== "");
}

/** `skills.external_dirs` and `skills.disabled` from the run's config (a bare string counts as one entry). */
export function skillsConfigOf(config: ToolContext["config"]): SkillsConfig {
  const section = config.skills;
  if (!section || typeof section !== "object" || Array.isArray(section)) return {};
  const { external_dirs, disabled } = section as Record<string, unknown>;
  return { external_dirs: strings(external_dirs), disabled: strings(disabled) };
}

/** What discovery needs from a tool call. */
export function discoverOptionsOf(ctx: ToolContext) {
  return { home: ctx.home, config: skillsConfigOf(ctx.config), env: ctx.env };
}

/** Arguments of a skill write, as the tool takes them and as a staged payload replays them. */
export interface SkillManageArgs {
  action: string;
  name: string;
  category?: string | undefined;
  content?: string | undefined;
  old_string?: string | undefined;
  new_string?: string | undefined;
  replace_all?: boolean | undefined;
  file_path?: string | undefined;
  file_content?: string | undefined;
}
