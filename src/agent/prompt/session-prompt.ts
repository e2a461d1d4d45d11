/**
 * What a new session sends before the first user message: the tool schemas of the resolved
 * toolsets and the assembled system prompt. One path for the agent (`freezeSession` in
 * `session-freeze.ts`) and for `hermes prompt-size`, so the report measures exactly what a session
 * would send.
 */
import { join } from "node:path";
import type { ToolSchema } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import { preview } from "../../knowledge/memory/format.js";
import { MemoryStore } from "../../knowledge/memory/store.js";
import type { MemoryTarget } from "../../knowledge/memory/types.js";
import { discoverSkills, resolveExternalDirs } from "../../knowledge/skills/discovery.js";
import { projectSignals, projectWords, rankSkills } from "../../knowledge/skills/index-rank.js";
import { skillsRoot } from "../../knowledge/skills/paths.js";
import { DEFAULT_INDEX_BUDGET_CHARS, renderSkillsIndex } from "../../knowledge/skills/prompt-index.js";
import {
  HUB_LOCK_FILE,
  MANIFEST_FILE,
  readUsage,
  type SkillUsageRecord,
  USAGE_FILE,
} from "../../knowledge/skills/provenance.js";
import { knowledgeStores, registeredSkillUsage } from "../../knowledge/stores.js";
import { createBuiltinRegistry } from "../../tools/builtin.js";
import { mcpToolsets } from "../../tools/mcp/toolsets.js";
import { pluginToolsets } from "../../tools/plugin-toolsets.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { resolveToolsets } from "../../tools/toolsets.js";
import { memoryProviderToolNames } from "../memory-provider-hook.js";
import { assembleSystemPrompt } from "./assemble.js";
import type { ProjectContext } from "./context-files.js";
import type { PromptLayer } from "./layers.js";
import { cachedSkillsIndex, cachedSkillsIndexAsync } from "./skills-index-cache.js";

export interface SessionPromptOptions {
  home: string;
  config: HermesConfig;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Toolset names; default `config.toolsets`. `[]` for no tools. The registry's `mcp-<server>`
   * toolsets are added to any non-empty list.
   */
  toolsets?: readonly string[];
  /** Surface name; default `cli`. */
  platform?: string;
  /** Default: a fresh built-in registry. */
  registry?: ToolRegistry;
  /** Model id; default `config.model.default`. */
  model?: string;
  /** Personality name overriding `display.personality`. */
  personality?: string;
  /** `--ignore-rules`: no SOUL.md and no project context file. */
  skipContextFiles?: boolean;
  /** Where the terminal and file tools act (`describeEnvironment`); default the configured backend. */
  environment?: string;
  /** Today's date; default today (local time). */
  date?: string | Date;
  /** OS description; default from `node:os`. */
  os?: string;
  /**
   * The skills index; default: rendered from the home's skills (and `skills.external_dirs`) when a
   * skills tool is offered.
   */
  skillsIndex?: string;
  /**
   * The memory snapshot blocks; default: MEMORY.md and USER.md as they are on disk now, each when
   * enabled in `memory.*`. This is the session's frozen snapshot: writes later in the session
   * reach the next session's prompt, never this one's.
   */
  memoryBlocks?: readonly string[];
  /** Hermes's `skip_memory` (cron runs, `--ignore-rules`): no memory snapshot. */
  skipMemory?: boolean;
}

export interface SessionPrompt {
  text: string;
  layers: PromptLayer[];
  /** Function schemas exactly as sent with every request. */
  tools: ToolSchema[];
  toolNames: string[];
  /** Toolset names that are neither built in nor custom. */
  unknownToolsets: string[];
  contextFile?: string;
  context?: ProjectContext;
  personality?: string;
  warnings: string[];
}

/**
 * Resolves the session's tools (toolsets → available tools → schemas, as the agent does) and
 * assembles its system prompt. Calls no model; reads SOUL.md and the project context file.
 */
export async function buildSessionPrompt(options: SessionPromptOptions): Promise<SessionPrompt> {
  const { config, env } = options;
  const registry = options.registry ?? createBuiltinRegistry();
  const requested = options.toolsets ?? config.toolsets;
  // Every MCP server's toolset joins any session that has tools at all; `agent.disabled_toolsets`
  // naming `mcp-<server>` keeps one out.
  // Plugins' toolsets (`plugin-<name>`) join the same way: only enabled plugins load.
  const mcp = { ...mcpToolsets(registry), ...pluginToolsets(registry) };
  const resolved = resolveToolsets(requested.length > 0 ? [...requested, ...Object.keys(mcp)] : requested, {
    custom: { ...mcp, ...config.custom_toolsets },
    disabled: config.agent.disabled_toolsets,
    knownTools: new Set(registry.names()),
  });
  // An external memory provider's tools (memory.provider) come with the built-in `memory` tool.
  const wanted = resolved.tools.includes("memory")
    ? [...resolved.tools, ...memoryProviderToolNames(registry)]
    : resolved.tools;
  const toolNames = await registry.available(wanted, {
    env,
    config: config as Record<string, unknown>,
    home: options.home,
  });
  // Tools whose descriptions state configured limits (delegate_task) describe this config.
  const tools = registry.schemas(toolNames, {
    env,
    config: config as Record<string, unknown>,
  }) as ToolSchema[];

  const knowledgeWarnings: string[] = [];
  const skillsIndex = options.skillsIndex ?? (await loadSkillsIndex(options, toolNames, knowledgeWarnings));
  const memoryBlocks =
    options.memoryBlocks ??
    (options.skipMemory ? undefined : await loadMemoryBlocks(options, knowledgeWarnings));

  const model = options.model ?? config.model.default;
  const assembled = assembleSystemPrompt({
    home: options.home,
    cwd: options.cwd,
    config,
    toolNames,
    ...(model ? { model } : {}),
    platform: options.platform ?? "cli",
    env,
    ...(options.date !== undefined ? { date: options.date } : {}),
    ...(options.os !== undefined ? { os: options.os } : {}),
    ...(options.personality !== undefined ? { personality: options.personality } : {}),
    ...(options.skipContextFiles ? { skipContextFiles: true } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
    ...(skillsIndex ? { skillsIndex } : {}),
    ...(memoryBlocks ? { memoryBlocks } : {}),
  });
  const warnings = [...knowledgeWarnings, ...assembled.warnings];
  if (resolved.unknown.length > 0) warnings.push(`Unknown toolsets: ${resolved.unknown.join(", ")}.`);
  return {
    text: assembled.text,
    layers: assembled.layers,
    tools,
    toolNames,
    unknownToolsets: resolved.unknown,
    ...(assembled.contextFile ? { contextFile: assembled.contextFile } : {}),
    ...(assembled.context ? { context: assembled.context } : {}),
    ...(assembled.personality ? { personality: assembled.personality } : {}),
    warnings,
  };
}

const SKILL_TOOLS = ["skills_list", "skill_view", "skill_manage"];

async function loadSkillsIndex(
  options: SessionPromptOptions,
  toolNames: readonly string[],
  warnings: string[],
): Promise<string> {
  if (!toolNames.some((name) => SKILL_TOOLS.includes(name))) return "";
  const canManage = toolNames.includes("skill_manage");
  const home = options.home;
  const root = skillsRoot(home);
  const external = resolveExternalDirs(home, options.config.skills.external_dirs, options.env);
  const key = [
    home,
    options.cwd,
    canManage,
    options.config.skills,
    process.platform,
    Object.keys(options.env)
      .filter((name) => options.env[name])
      .sort(),
  ];
  const files = [options.cwd, join(root, MANIFEST_FILE), join(root, HUB_LOCK_FILE), ...external.missing];
  const roots = [root, ...external.dirs];
  const usage = registeredSkillUsage(home);
  if (!usage) {
    // skills/.usage.json: read inside the build, its stat part of the stamp (no await on this path).
    const made = cachedSkillsIndex(JSON.stringify(key), roots, [...files, join(root, USAGE_FILE)], () => {
      const made: string[] = [];
      return { index: buildSkillsIndex(options, readUsage(home), canManage, made), warnings: made };
    });
    warnings.push(...made.warnings);
    return made.index;
  }
  // A backend's store (PostgreSQL): its usage version keys the index, so a use recorded on any
  // instance makes the next session here rank with it. A store without a version, or one that
  // does not answer, builds every time (unreachable: ranked without usage, and said so).
  let unreadable = false;
  const noted = (into: string[]) => (error: unknown) => {
    unreadable = true;
    into.push(`Skill usage was not read for the skills index: ${errorText(error)}`);
    return undefined;
  };
  const version = usage.version ? await usage.version().catch(noted(warnings)) : undefined;
  const build = async () => {
    const made: string[] = [];
    const records = unreadable ? undefined : await usage.read().catch(noted(made));
    return { index: buildSkillsIndex(options, records ?? {}, canManage, made), warnings: made };
  };
  const made =
    version === undefined
      ? await build()
      : await cachedSkillsIndexAsync(JSON.stringify([...key, `usage@${version}`]), roots, files, build);
  warnings.push(...made.warnings);
  return made.index;
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function buildSkillsIndex(
  options: SessionPromptOptions,
  usage: Readonly<Record<string, SkillUsageRecord>>,
  canManage: boolean,
  warnings: string[],
): string {
  try {
    // Origins are not shown in the index, so seeded copies need not be hashed to tell edits apart.
    const found = discoverSkills({
      home: options.home,
      config: options.config.skills,
      env: options.env,
      verifyBundled: false,
      usage,
    });
    warnings.push(...found.warnings);
    // Ranked by use and by the project the session starts in (never by the message: the prompt
    // is frozen before it), and held to a fixed budget so a large library costs what a small one does.
    const signals = projectSignals(options.cwd);
    const scores = rankSkills(found.skills, usage, projectWords(signals.dirName, signals.files), new Date());
    // The guidance layer already says how to use skills; the index is the list alone.
    return renderSkillsIndex(found.skills, {
      instructions: false,
      canManage,
      budgetChars: DEFAULT_INDEX_BUDGET_CHARS,
      scores,
    });
  } catch (error) {
    warnings.push(`Skills were not listed in the prompt: ${errorText(error)}`);
    return "";
  }
}

async function loadMemoryBlocks(options: SessionPromptOptions, warnings: string[]): Promise<string[]> {
  const memory = options.config.memory;
  const targets: MemoryTarget[] = [];
  if (memory.memory_enabled) targets.push("memory");
  if (memory.user_profile_enabled) targets.push("user");
  if (targets.length === 0) return [];
  // The home's memory store (the state backend's); messages name where the file store keeps it.
  const store = knowledgeStores(options.home).memory(memory);
  const files = MemoryStore.forHome(options.home, memory);
  const blocks: string[] = [];
  for (const target of targets) {
    try {
      const { block, blocked } = await store.promptBlock(target);
      if (block) blocks.push(block);
      for (const { entry, reason } of blocked) {
        warnings.push(
          `${files.path(target)}: an entry was kept out of the prompt (${reason}): "${preview(entry, 60)}". ` +
            "Remove it with the memory tool or edit the file.",
        );
      }
    } catch (error) {
      warnings.push(
        `${files.path(target)} was not loaded into the prompt: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return blocks;
}
