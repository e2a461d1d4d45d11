/**
 * Toolsets as data, named as Hermes names them. Resolution is pure: a toolset expands to its tools
 * plus the tools of the toolsets it includes, with cycle protection. Names of tools not built here
 * are kept in the data (they resolve once the tool exists) and skipped by the registry.
 */

export interface ToolsetSpec {
  description: string;
  tools: readonly string[];
  includes?: readonly string[];
}

const BROWSER_TOOLS = [
  "browser_navigate",
  "browser_snapshot",
  "browser_click",
  "browser_type",
  "browser_scroll",
  "browser_back",
  "browser_press",
  "browser_get_images",
  "browser_vision",
  "browser_console",
  "browser_cdp",
  "browser_dialog",
  "browser_close",
] as const;

const HA_TOOLS = ["ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"] as const;

/** The default bundle for the CLI and every messaging platform. */
export const CORE_TOOLS: readonly string[] = [
  "web_search",
  "web_extract",
  "terminal",
  "process",
  "read_file",
  "write_file",
  "patch",
  "search_files",
  "vision_analyze",
  "image_generate",
  "skills_list",
  "skill_view",
  "skill_manage",
  ...BROWSER_TOOLS,
  "text_to_speech",
  "todo",
  "memory",
  "session_search",
  "clarify",
  "execute_code",
  "delegate_task",
  "cronjob",
  ...HA_TOOLS,
];

/** Surfaces whose `hermes-<platform>` toolset is the core tools (Discord, the API server and webhooks have their own). */
export const CORE_TOOLSET_PLATFORMS = [
  "cli",
  "cron",
  "telegram",
  "whatsapp",
  "slack",
  "signal",
  "bluebubbles",
  "homeassistant",
  "email",
  "mattermost",
  "matrix",
  "dingtalk",
  "weixin",
  "qqbot",
  "wecom",
  "wecom-callback",
  "sms",
  "whatsapp_cloud",
] as const;

function platformToolsets(): Record<string, ToolsetSpec> {
  const out: Record<string, ToolsetSpec> = {};
  for (const platform of CORE_TOOLSET_PLATFORMS) {
    out[`hermes-${platform}`] = {
      description: `Default tools for the ${platform} surface`,
      tools: CORE_TOOLS,
    };
  }
  return out;
}

const withoutTools = (exclude: readonly string[]): string[] => CORE_TOOLS.filter((t) => !exclude.includes(t));

export const TOOLSETS: Readonly<Record<string, ToolsetSpec>> = {
  web: { description: "Web search and page extraction", tools: ["web_search", "web_extract"] },
  search: { description: "Web search only", tools: ["web_search"] },
  vision: { description: "Image analysis", tools: ["vision_analyze"] },
  image_gen: { description: "Image generation", tools: ["image_generate"] },
  terminal: { description: "Shell commands and background processes", tools: ["terminal", "process"] },
  file: {
    description: "Read, write, patch and search files",
    tools: ["read_file", "write_file", "patch", "search_files"],
  },
  skills: {
    description: "List, view and manage skills",
    tools: ["skills_list", "skill_view", "skill_manage"],
  },
  browser: { description: "Browser automation", tools: [...BROWSER_TOOLS, "web_search"] },
  cronjob: { description: "Scheduled jobs", tools: ["cronjob"] },
  tts: { description: "Text to speech", tools: ["text_to_speech"] },
  todo: { description: "Session task list", tools: ["todo"] },
  memory: { description: "Persistent memory", tools: ["memory"] },
  session_search: { description: "Search past sessions", tools: ["session_search"] },
  clarify: { description: "Ask the user a question", tools: ["clarify"] },
  code_execution: { description: "Scripts that call tools", tools: ["execute_code"] },
  delegation: { description: "Subagent delegation", tools: ["delegate_task"] },
  homeassistant: { description: "Home Assistant control", tools: HA_TOOLS },
  // Opt-in: several paid model calls per use, so never part of a default or platform toolset.
  moa: {
    description: "Mixture of agents: several models answer, one combines",
    tools: ["mixture_of_agents"],
  },
  debugging: {
    description: "Terminal plus web and file tools",
    tools: ["terminal", "process"],
    includes: ["web", "file"],
  },
  safe: { description: "No terminal or file access", tools: [], includes: ["web", "vision", "image_gen"] },
  coding: {
    description: "Coding posture: files, terminal, web, skills, browser, planning",
    tools: [
      "read_file",
      "write_file",
      "patch",
      "search_files",
      "terminal",
      "process",
      "web_search",
      "web_extract",
      "vision_analyze",
      "skills_list",
      "skill_view",
      "skill_manage",
      ...BROWSER_TOOLS,
      "todo",
      "memory",
      "session_search",
      "clarify",
      "execute_code",
      "delegate_task",
    ],
  },
  ...platformToolsets(),
  "hermes-acp": {
    description: "Editor (ACP) sessions",
    // Upstream leaves clarify out; here a clarify question with choices is asked in the editor as
    // a permission request (acp/permissions.ts), so it stays.
    tools: withoutTools(["cronjob", "image_generate", "text_to_speech", ...HA_TOOLS]),
  },
  "hermes-api-server": {
    description: "OpenAI-compatible API server",
    tools: withoutTools(["clarify", "text_to_speech"]),
  },
  "hermes-discord": { description: "Discord", tools: [...CORE_TOOLS, "discord", "discord_admin"] },
  "hermes-webhook": {
    description: "Webhooks (untrusted input)",
    tools: ["web_search", "web_extract", "vision_analyze", "clarify"],
  },
  "hermes-gateway": {
    description: "Every messaging platform",
    tools: [],
    includes: [
      ...CORE_TOOLSET_PLATFORMS.filter((p) => p !== "cli" && p !== "cron").map((p) => `hermes-${p}`),
      "hermes-discord",
    ],
  },
};

export interface ResolveResult {
  /** Tool names in first-seen order, without duplicates. */
  tools: string[];
  /** Toolset names that are neither built in nor custom. */
  unknown: string[];
}

/**
 * Expands toolset names to tool names. `all` or `*` is the union of every toolset. Custom toolsets
 * (config `custom_toolsets`) extend or override the built-ins. Cycles and diamonds are harmless.
 * A name that is a tool rather than a toolset is accepted as that single tool.
 */
export function resolveToolsets(
  names: readonly string[],
  options: {
    custom?: Readonly<Record<string, { tools?: readonly string[]; includes?: readonly string[] }>>;
    disabled?: readonly string[];
    knownTools?: ReadonlySet<string>;
  } = {},
): ResolveResult {
  const table: Record<string, { tools?: readonly string[]; includes?: readonly string[] }> = {
    ...TOOLSETS,
    ...(options.custom ?? {}),
  };
  const disabled = new Set(options.disabled ?? []);
  const tools: string[] = [];
  const seenTools = new Set<string>();
  const unknown: string[] = [];
  const visiting = new Set<string>();
  const done = new Set<string>();

  const addTool = (tool: string) => {
    if (!seenTools.has(tool)) {
      seenTools.add(tool);
      tools.push(tool);
    }
  };

  const visit = (name: string) => {
    if (disabled.has(name) || done.has(name) || visiting.has(name)) return;
    if (name === "all" || name === "*") {
      for (const key of Object.keys(table)) visit(key);
      return;
    }
    const spec = table[name];
    if (!spec) {
      if (options.knownTools?.has(name)) addTool(name);
      else unknown.push(name);
      return;
    }
    visiting.add(name);
    for (const tool of spec.tools ?? []) addTool(tool);
    for (const inc of spec.includes ?? []) visit(inc);
    visiting.delete(name);
    done.add(name);
  };

  for (const name of names) visit(name.trim());
  return { tools, unknown };
}

/** Which toolset a tool belongs to by the built-in table (first match), for display. */
export function toolsetNames(): string[] {
  return Object.keys(TOOLSETS);
}
