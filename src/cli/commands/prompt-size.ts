/**
 * `hermes prompt-size [--json] [-t CSV] [--platform NAME] [-m MODEL] [--personality NAME]
 * [--ignore-rules]`: what a new session sends with every request before the first user message —
 * each system-prompt layer, each tool schema, and the total — built by the same path a session
 * uses (`buildSessionPrompt`), without calling any model. Results on stdout, warnings on stderr.
 * Exit codes: 0 success, 1 failure, 2 usage or configuration error.
 */

import pc from "picocolors";
import { buildSessionPrompt, type SessionPrompt } from "../../agent/prompt/session-prompt.js";
import { measurePrompt, type PromptSize } from "../../agent/prompt/size.js";
import { seedBundledSkills } from "../../knowledge/skills/bundled.js";
import {
  DEFAULT_INDEX_BUDGET_CHARS,
  type SkillsIndexShape,
  skillsIndexShape,
} from "../../knowledge/skills/prompt-index.js";
import {
  type CliCommand,
  CliFailure,
  type ConfigContext,
  defineCommand,
  type RunOptions,
} from "../command.js";
import { renderTable } from "../format/table.js";
import { formatCount } from "../format/time.js";

/** What tests pin down so the report does not depend on the machine. */
export interface PromptSizeSetup {
  /** Working directory of the would-be session; default `process.cwd()`. */
  cwd?: string;
  /** Today's date for the environment layer (tests); default today. */
  date?: string;
  /** OS description for the environment layer (tests); default from `node:os`. */
  os?: string;
}

export interface PromptSizeCommandOptions extends RunOptions, PromptSizeSetup {}

interface PromptSizeFlags {
  json?: boolean;
  toolsets?: string;
  platform?: string;
  model?: string;
  personality?: string;
  ignoreRules?: boolean;
}

/** Runs `hermes prompt-size <argv…>` and returns the exit code. Never throws for expected failures. */
export function runPromptSizeCommand(
  argv: readonly string[],
  options: PromptSizeCommandOptions = {},
): Promise<number> {
  return promptSizeCommand(options).run(argv, options);
}

/** `hermes prompt-size [options]`. */
export function promptSizeCommand(setup: PromptSizeSetup = {}): CliCommand {
  return defineCommand({
    name: "prompt-size",
    description:
      "Shows what a new session sends with every request: each system-prompt layer, each tool " +
      "schema and the total, in bytes and tokens (o200k_base). Calls no model.",
    needs: "config",
    parse: (cmd) =>
      cmd
        .option("-t, --toolsets <csv>", "toolsets to resolve (default: config toolsets)")
        .option("--platform <name>", "surface whose hint to include (default: cli)")
        .option("-m, --model <id>", "model id (decides the tool-use enforcement layer)")
        .option("--personality <n>", "personality overlay (default: display.personality)")
        .option("--ignore-rules", "leave out SOUL.md and the project context file")
        .option("--json", "print the report as JSON"),
    run: (ctx, flags: PromptSizeFlags) => promptSize(ctx, flags, setup),
  });
}

async function promptSize(
  ctx: ConfigContext,
  flags: PromptSizeFlags,
  options: PromptSizeSetup,
): Promise<number> {
  const { home, config, io } = ctx;
  const fullEnv = ctx.env;
  const err = io.err;
  const out = io.out;

  const toolsets =
    flags.toolsets !== undefined
      ? flags.toolsets
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
  let session: SessionPrompt;
  let size: PromptSize;
  try {
    // A new session starts by installing new or updated bundled skills; measure what it would send.
    for (const error of seedBundledSkills(home).errors) err(`hermes: bundled skill not installed: ${error}`);
    session = await buildSessionPrompt({
      home,
      config,
      cwd: options.cwd ?? process.cwd(),
      env: fullEnv,
      ...(toolsets ? { toolsets } : {}),
      ...(flags.platform ? { platform: flags.platform } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.personality !== undefined ? { personality: flags.personality } : {}),
      ...(flags.ignoreRules ? { skipContextFiles: true, skipMemory: true } : {}),
      ...(options.date ? { date: options.date } : {}),
      ...(options.os ? { os: options.os } : {}),
    });
    size = measurePrompt({ layers: session.layers, tools: session.tools });
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 1);
  }
  for (const warning of session.warnings) err(`hermes prompt-size: warning: ${warning}`);

  const skillsLayer = session.layers.find((l) => l.id === "skills");
  const skillsIndex = skillsLayer
    ? { ...skillsIndexShape(skillsLayer.text), budgetChars: DEFAULT_INDEX_BUDGET_CHARS }
    : null;
  const platform = flags.platform ?? "cli";
  const model = flags.model ?? config.model.default;
  const usedToolsets = toolsets ?? config.toolsets;
  if (flags.json) {
    out(
      JSON.stringify(
        {
          platform,
          model: model || null,
          toolsets: usedToolsets,
          contextFile: session.contextFile ?? null,
          personality: session.personality ?? null,
          skillsIndex,
          ...size,
          warnings: session.warnings,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  const color = io.color;
  out(
    renderReport(size, {
      platform,
      model,
      toolsets: usedToolsets,
      ...(session.contextFile ? { contextFile: session.contextFile } : {}),
      ...(skillsIndex ? { skillsIndex } : {}),
      color,
    }),
  );
  return 0;
}

/** The text report. Pure: the same sizes and options give the same text. */
export function renderReport(
  size: PromptSize,
  opts: {
    platform: string;
    model: string;
    toolsets: readonly string[];
    contextFile?: string;
    skillsIndex?: SkillsIndexShape & { budgetChars: number };
    color: boolean;
  },
): string {
  const c = (fn: (s: string) => string, s: string) => (opts.color ? fn(s) : s);
  const n = formatCount;
  const lines: string[] = [];
  lines.push(
    c(pc.bold, `Fixed overhead of a new ${opts.platform} session`) +
      c(
        pc.dim,
        ` (model ${opts.model || "default"}; toolsets ${opts.toolsets.join(", ") || "none"}; tokens: o200k_base)`,
      ),
  );
  if (opts.contextFile) lines.push(c(pc.dim, `Project context: ${opts.contextFile}`));
  if (opts.skillsIndex) {
    const k = opts.skillsIndex;
    lines.push(
      c(
        pc.dim,
        `Skills index: ${k.described} described, ${k.named} by name only, ${k.unlisted} left to skills_list ` +
          `(at most ${formatCount(k.budgetChars)} characters; ranked by use and this project's files)`,
      ),
    );
  }
  lines.push("");
  const { systemPrompt, tools, fixed } = size.totals;
  lines.push(
    ...renderTable(
      [
        { header: "System prompt layer", flex: true },
        { header: "Bytes", align: "right" },
        { header: "Tokens", align: "right" },
      ],
      [
        ...size.layers.map((l) => [l.title, n(l.bytes), n(l.tokens)]),
        ["Total (with separators)", n(systemPrompt.bytes), n(systemPrompt.tokens)],
      ],
      { paintHeader: (s) => c(pc.bold, s) },
    ),
  );
  lines.push("");
  if (size.tools.length === 0) {
    lines.push("No tools offered.");
  } else {
    lines.push(
      ...renderTable(
        [
          { header: "Tool schema", flex: true },
          { header: "Bytes", align: "right" },
          { header: "Tokens", align: "right" },
        ],
        [
          ...size.tools.map((t) => [t.name, n(t.bytes), n(t.tokens)]),
          [`Total (${tools.count} tools)`, n(tools.bytes), n(tools.tokens)],
        ],
        { paintHeader: (s) => c(pc.bold, s) },
      ),
    );
  }
  lines.push("");
  lines.push(c(pc.bold, `Sent with every request: ${n(fixed.bytes)} bytes, ${n(fixed.tokens)} tokens`));
  return lines.join("\n");
}
