/**
 * Keeps a page within what the model should read at once. Up to the limit it passes untouched;
 * longer, an auxiliary model (`auxiliary.web_extract`) writes a dense summary; when none is
 * available, the call fails, or the page is enormous, it is cut at a line boundary. Either way
 * the result says what happened and how long the original was.
 */
import { type AuxiliaryRuntime, auxiliaryComplete, resolveAuxiliaryChain } from "../../ai/auxiliary.js";
import { type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { Env } from "./web-env.js";

/** Pages longer than this are cut without asking a model (too costly to send whole). */
export const SUMMARY_MAX_INPUT_CHARS = 500_000;

export interface Condensed {
  content: string;
  /** What was done, for the model: summarised or truncated, and the original length. */
  note?: string;
  summarized?: true;
  truncated?: true;
  original_chars?: number;
}

export interface CondenseInput {
  url: string;
  title: string;
  content: string;
  /** Characters the result may have. */
  limit: number;
}

export interface CondenseContext {
  config: Readonly<Record<string, unknown>>;
  env: Env;
  /** The run's home, whose OAuth logins the models may use. */
  home: string;
  signal: AbortSignal | undefined;
  progress?: ((message: string) => void) | undefined;
}

const SYSTEM_PROMPT = [
  "You condense web pages for an AI agent that cannot read the whole page.",
  "Write markdown that keeps everything the agent may need: facts, figures, dates, names, definitions,",
  "steps, warnings, code and commands verbatim, and the URLs of important links.",
  "Drop navigation, ads, repetition and filler. Do not add opinions or information that is not on the page.",
].join(" ");

const number = (n: number) => n.toLocaleString("en-US");

/** The `web_extract` auxiliary chain, or undefined when no model at all is configured. */
export function webExtractChain(
  config: Readonly<Record<string, unknown>>,
  env: Env,
  home: string,
): AuxiliaryRuntime[] | undefined {
  const hermes = config as unknown as HermesConfig;
  let main: ResolvedRuntime | undefined;
  try {
    main = resolveRuntime({ flags: {}, config: hermes, env, home });
  } catch {
    main = undefined;
  }
  // Without a main model, an explicit auxiliary.web_extract or an OpenRouter/Nous key may still serve.
  const placeholder: ResolvedRuntime = {
    provider: "none",
    model: "",
    baseUrl: "",
    apiKey: undefined,
    apiMode: "chat_completions",
  };
  let chain: AuxiliaryRuntime[];
  try {
    chain = resolveAuxiliaryChain("web_extract", {
      config: hermes,
      env,
      main: main ?? placeholder,
      home,
    });
  } catch {
    return undefined;
  }
  const usable = chain.filter((r) => r.baseUrl !== "" && r.model !== "");
  return usable.length > 0 ? usable : undefined;
}

/** The first `limit` characters, ending at a line break when one is near. */
export function cutAt(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const slice = text.slice(0, limit);
  const lineEnd = slice.lastIndexOf("\n");
  return (lineEnd > limit * 0.8 ? slice.slice(0, lineEnd) : slice).trimEnd();
}

function truncated(input: CondenseInput, why: string): Condensed {
  const total = input.content.length;
  const content = cutAt(input.content, input.limit);
  return {
    content,
    truncated: true,
    original_chars: total,
    note: `Truncated: showing the first ${number(content.length)} of ${number(total)} characters (${why}). A larger char_limit shows more.`,
  };
}

/** Returns the content as is, summarised, or cut; never throws except when the user interrupts. */
export async function condense(input: CondenseInput, ctx: CondenseContext): Promise<Condensed> {
  const total = input.content.length;
  if (total <= input.limit) return { content: input.content };
  if (total > SUMMARY_MAX_INPUT_CHARS) {
    return truncated(
      input,
      `the page is too large to summarise; over ${number(SUMMARY_MAX_INPUT_CHARS)} characters`,
    );
  }
  const chain = webExtractChain(ctx.config, ctx.env, ctx.home);
  if (!chain) return truncated(input, "no auxiliary model is configured to summarise it");
  ctx.progress?.(`Summarising ${input.url} (${number(total)} characters)`);
  const prompt = [
    ...(input.title ? [`Title: ${input.title}`] : []),
    `URL: ${input.url}`,
    `Length: ${number(total)} characters`,
    `Write the condensed version in at most ${number(Math.floor(input.limit * 0.9))} characters.`,
    "",
    "PAGE CONTENT:",
    input.content,
  ].join("\n");
  try {
    const result = await auxiliaryComplete(
      chain,
      [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: prompt },
      ],
      { signal: ctx.signal, maxTokens: Math.min(8000, Math.max(1000, Math.ceil(input.limit / 3))) },
    );
    const summary = cutAt(result.text, input.limit);
    return {
      content: summary,
      summarized: true,
      original_chars: total,
      note: `Summary written by an auxiliary model (${result.runtime.model}); the extracted page was ${number(total)} characters.`,
    };
  } catch (error) {
    if (ctx.signal?.aborted) throw error;
    const reason = ((error as Error).message ?? String(error)).slice(0, 300);
    return truncated(input, `summarising failed: ${reason}`);
  }
}
