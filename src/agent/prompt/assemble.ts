/**
 * Assembles a session's system prompt: reads the identity (SOUL.md) and the project context file,
 * resolves the personality, and renders the layers. The only file reads of prompt assembly happen
 * here; the result depends on nothing but the options and those files (no clock beyond `date`,
 * sorted directory listings), so the same inputs give the same bytes.
 */
import { type as osType, release } from "node:os";
import { defaultConfig, type HermesConfig } from "../../config/defaults.js";
import { loadProjectContext, type ProjectContext } from "./context-files.js";
import { type Identity, loadIdentity } from "./identity.js";
import { buildPromptLayers, type PromptLayer, renderPrompt } from "./layers.js";
import { isNoPersonality, resolvePersonality } from "./personalities.js";

export interface AssembleOptions {
  /** HERMES_HOME, where SOUL.md lives. */
  home: string;
  /** The session's working directory, where the project context file is looked for. */
  cwd: string;
  config?: HermesConfig;
  /** Tools offered this session (guidance is given only for these). */
  toolNames: readonly string[];
  /** Model id (decides `agent.tool_use_enforcement: auto`). */
  model?: string;
  /** Surface name; default `cli`. */
  platform?: string;
  /** Today's date (`YYYY-MM-DD` string, or a Date formatted in local time); default today. */
  date?: string | Date;
  /** Environment (SHELL); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** OS description; default from `node:os` (e.g. "Linux 6.8.0"). */
  os?: string;
  /** Personality name, overriding `display.personality`; "none" for no overlay. */
  personality?: string;
  /** Pre-rendered skills index (the skills layer); absent or "" for none. */
  skillsIndex?: string;
  /** Pre-rendered memory snapshot blocks (USER PROFILE, MEMORY); absent for none. */
  memoryBlocks?: readonly string[];
  /**
   * Hermes's `--ignore-rules` / `skip_context_files`: load neither the project context file nor
   * SOUL.md (the default identity is used). Memory and skills are the caller's to leave out.
   */
  skipContextFiles?: boolean;
  /**
   * Where the terminal and file tools act, as the environment describes itself ("docker: the
   * container ..."); default: the configured `terminal.backend`.
   */
  environment?: string;
}

export interface AssembledPrompt {
  /** The system prompt, exactly as sent. */
  text: string;
  layers: PromptLayer[];
  /** Absolute path of the project context file loaded (first one, for the cursor kind). */
  contextFile?: string;
  context?: ProjectContext;
  identity: Identity;
  /** The personality applied, if any. */
  personality?: string;
  /** Things the user should hear about (blocked or truncated files, an unknown personality). */
  warnings: string[];
}

/** `YYYY-MM-DD` in local time. */
export function localDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Builds the system prompt for a session from the home, the working directory and the options. */
export function assembleSystemPrompt(options: AssembleOptions): AssembledPrompt {
  const config = options.config ?? defaultConfig();
  const env = options.env ?? process.env;
  const warnings: string[] = [];
  const maxChars = config.limits?.context_file_max_chars ?? null;

  const identity: Identity = options.skipContextFiles
    ? { text: "", source: "default", truncated: false }
    : loadIdentity(options.home, { maxChars });
  if (identity.warning) warnings.push(identity.warning);
  if (identity.blocked) {
    warnings.push(
      `${identity.file} was not loaded: it looks like prompt injection (${identity.blocked
        .map((f) => `${f.family}: ${f.id}`)
        .join(", ")}); using the default identity.`,
    );
  }
  if (identity.truncated) warnings.push(`${identity.file} is longer than the context file cap and was cut.`);

  const context = options.skipContextFiles
    ? undefined
    : loadProjectContext({ cwd: options.cwd, maxChars, warn: (m) => warnings.push(m) });
  if (context?.blocked) {
    warnings.push(
      `${context.label} was not loaded: it looks like prompt injection (${context.blocked
        .map((f) => `${f.family}: ${f.id}`)
        .join(", ")}).`,
    );
  }
  if (context?.truncated) {
    warnings.push(
      `${context.label} has ${context.chars} characters, over the cap; the middle was cut ` +
        "(raise limits.context_file_max_chars or trim the file).",
    );
  }

  const personalityName = options.personality ?? config.display?.personality ?? "";
  const personality = resolvePersonality(personalityName, config);
  if (!personality && !isNoPersonality(personalityName)) {
    warnings.push(`Unknown personality "${personalityName}"; none applied.`);
  }

  const date = typeof options.date === "string" ? options.date : localDate(options.date ?? new Date());
  const layers = buildPromptLayers({
    ...(identity.source === "soul" || identity.blocked
      ? { identity: identity.text, identitySource: identity.blocked ? "default, SOUL.md blocked" : "SOUL.md" }
      : {}),
    ...(personality ? { personality: { name: personality.name, text: personality.text } } : {}),
    platform: options.platform ?? "cli",
    ...platformHints(config),
    os: options.os ?? `${osType()} ${release()}`,
    cwd: options.cwd,
    ...(env["SHELL"] ? { shell: env["SHELL"] } : {}),
    ...(options.environment
      ? { terminalBackend: options.environment }
      : config.terminal?.backend
        ? { terminalBackend: config.terminal.backend }
        : {}),
    date,
    toolNames: options.toolNames,
    ...(options.model ? { model: options.model } : {}),
    toolUseEnforcement: config.agent?.["tool_use_enforcement"] ?? "auto",
    ...(options.skillsIndex ? { skillsIndex: options.skillsIndex } : {}),
    ...(context ? { projectContext: { label: context.label, content: context.content } } : {}),
    ...(options.memoryBlocks ? { memoryBlocks: options.memoryBlocks } : {}),
  });
  return {
    text: renderPrompt(layers),
    layers,
    ...(context ? { contextFile: context.file, context } : {}),
    identity,
    ...(personality ? { personality: personality.name } : {}),
    warnings,
  };
}

/** `platform_hints` from config.yaml: string values only. */
function platformHints(config: HermesConfig): { platformHints?: Record<string, string> } {
  const raw = config["platform_hints"];
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return {};
  const hints: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof value === "string") hints[name] = value;
  }
  return Object.keys(hints).length > 0 ? { platformHints: hints } : {};
}
