/**
 * Reading a skill for the model or the user: the SKILL.md itself, one supporting file, and the
 * user message that `/<skill-name>` sends (the skill travels in a user message, never in the
 * system prompt, so the prompt cache stays valid).
 */
import { readFileSync, statSync } from "node:fs";
import { hasBinaryExtension, sniffBinaryFile } from "../../util/binary-file.js";
import { knowledgeStores } from "../stores.js";
import { type DiscoverOptions, findSkill, matchesPlatform } from "./discovery.js";
import { parseSkillMarkdown } from "./frontmatter.js";
import { posixRelative, resolveInsideSkill, splitRelativePath } from "./paths.js";
import type { SkillMeta, SkillsConfig } from "./types.js";

/** Longest supporting file returned whole; longer ones are cut with a note. */
export const MAX_VIEW_CHARS = 100_000;

/** A skill that cannot be shown; the message says why and what to do. */
export class SkillViewError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SkillViewError";
  }
}

export interface LoadedSkill {
  skill: SkillMeta;
  /** The whole SKILL.md, frontmatter included. */
  content: string;
  /** Set when the skill declares platforms that exclude this OS. */
  platformNote?: string;
}

/**
 * The skill called `name` (or `category/name`) with its SKILL.md text. Disabled skills are refused;
 * a skill for another OS is returned with `platformNote`. Throws {@link SkillViewError}.
 */
export function loadSkill(name: string, options: DiscoverOptions): LoadedSkill {
  const skill = findSkill(name, { ...options, includeDisabled: true, includeOtherPlatforms: true });
  if (!skill) {
    throw new SkillViewError(
      `No skill named "${name}". Call skills_list (optionally with query) to see the installed skills.`,
    );
  }
  if (options.config?.disabled?.includes(skill.name)) {
    throw new SkillViewError(
      `The skill "${skill.name}" is disabled in config.yaml (skills.disabled); it is not available in this run.`,
    );
  }
  let content: string;
  try {
    content = readFileSync(skill.file, "utf8");
  } catch (error) {
    throw new SkillViewError(`Cannot read ${skill.file}: ${(error as Error).message}`);
  }
  const platform = options.platform ?? process.platform;
  const loaded: LoadedSkill = { skill, content };
  if (!matchesPlatform(skill.platforms, platform)) {
    loaded.platformNote = `This skill is written for ${skill.platforms.join(", ")}; this machine runs ${platform}, so parts may not work.`;
  }
  return loaded;
}

/**
 * One file of a skill folder as text (`references/api.md`, `scripts/run.sh`, ...). Refuses paths
 * that leave the folder (`..`, absolute paths, symlinks pointing outside), folders, and binary
 * files. Throws {@link SkillViewError}.
 */
export async function readSkillFile(
  skill: SkillMeta,
  filePath: string,
): Promise<{ path: string; file_path: string; content: string; truncated?: boolean }> {
  const parts = splitRelativePath(filePath);
  if (!Array.isArray(parts)) throw new SkillViewError(parts.error);
  const target = resolveInsideSkill(skill.dir, parts);
  if (typeof target !== "string") throw new SkillViewError(target.error);
  const rel = posixRelative(skill.dir, target);
  const available = skill.linkedFiles.length > 0 ? skill.linkedFiles.join(", ") : "none";
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(target);
  } catch {
    throw new SkillViewError(
      `"${rel}" does not exist in skill "${skill.name}". Its linked files: ${available}.`,
    );
  }
  if (stats.isDirectory()) {
    const inside = skill.linkedFiles.filter((f) => f.startsWith(`${rel}/`));
    throw new SkillViewError(
      `"${rel}" is a folder. Pass one of its files: ${inside.length > 0 ? inside.join(", ") : "(none listed)"}.`,
    );
  }
  if (hasBinaryExtension(target) || (await sniffBinaryFile(target))) {
    throw new SkillViewError(
      `"${rel}" is a binary file (${stats.size} bytes) and cannot be shown as text. Use it by path: ${target}`,
    );
  }
  const text = readFileSync(target, "utf8");
  if (text.length <= MAX_VIEW_CHARS) return { path: target, file_path: rel, content: text };
  return {
    path: target,
    file_path: rel,
    content: `${text.slice(0, MAX_VIEW_CHARS)}\n[… ${text.length - MAX_VIEW_CHARS} more characters; read the rest with read_file at ${target}]`,
    truncated: true,
  };
}

export interface SkillMessageOptions {
  /** What the user typed after `/<skill-name>`, appended as their request. */
  instruction?: string;
  env?: Readonly<Record<string, string | undefined>>;
  platform?: string;
}

/**
 * The text of the user message that `/<skill-name>` sends: a header naming the skill and its
 * folder, the SKILL.md body, its linked files, and missing environment variables. Undefined when
 * no enabled skill has that name. Counts as a use in the home's usage records (best effort).
 */
export async function loadSkillMessage(
  home: string,
  name: string,
  config?: SkillsConfig,
  options: SkillMessageOptions = {},
): Promise<string | undefined> {
  let loaded: LoadedSkill;
  try {
    loaded = loadSkill(name, { home, config, env: options.env, platform: options.platform });
  } catch {
    return undefined;
  }
  const { skill } = loaded;
  let body: string;
  try {
    body = parseSkillMarkdown(loaded.content, skill.file, { fallbackName: skill.name }).body.trim();
  } catch {
    body = loaded.content.trim();
  }
  const lines = [
    `[Skill "${skill.name}" loaded by the user: follow these instructions for the request below. ` +
      `Skill folder: ${skill.dir}]`,
    "",
    body,
  ];
  if (skill.linkedFiles.length > 0) {
    lines.push(
      "",
      `Supporting files (read with skill_view(name="${skill.name}", file_path=...) when a step needs them):`,
      ...skill.linkedFiles.map((f) => `- ${f}`),
    );
  }
  if (skill.missingEnv.length > 0) {
    lines.push(
      "",
      `Not set in this environment: ${skill.missingEnv.join(", ")}. Ask the user before relying on them.`,
    );
  }
  if (loaded.platformNote) lines.push("", loaded.platformNote);
  const instruction = options.instruction?.trim();
  lines.push(
    "",
    instruction ? `User request: ${instruction}` : "User request: apply this skill to the current task.",
  );
  // The home's usage store: skills/.usage.json, or the shared database on a postgres home.
  await knowledgeStores(home).skillUsage.record(skill.name, "use");
  return lines.join("\n");
}
