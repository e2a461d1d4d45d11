/**
 * `@` context references in a one-shot prompt (`hermes -q`, `-z`, or the prompt as words): the
 * REPL's expansion (agent/references/expand.ts) with the same guards: paths inside the working
 * directory only, never a secret, git without the repository's hooks or pagers, size limits of the
 * model's window. Only a prompt the user typed on the command line is expanded; text piped on
 * stdin is data (a mail, a log) the user may not have read, so an `@file:` in it stays text.
 * Chat platforms never expand references: a chat user must not read the host's files.
 */
import { catalogContextLength, DEFAULT_CONTEXT_LENGTH } from "../ai/context-length.js";
import type { HermesConfig } from "../config/defaults.js";

export interface OneShotExpansion {
  /** What to send: the prompt, then the attached context (the prompt unchanged when none). */
  message: string;
  /** Lines for stderr (unreadable references, size warnings). */
  warnings: string[];
  /** The line saying what was attached, or undefined when nothing was. */
  attached?: string;
  /** Together the references exceed half the window: nothing may be sent. */
  blocked: boolean;
}

/** Expands the references of `prompt`; a prompt without `@` comes back at once, untouched. */
export async function expandOneShotReferences(
  prompt: string,
  options: {
    cwd: string;
    home: string;
    env: Readonly<Record<string, string | undefined>>;
    config: HermesConfig;
    model: string;
  },
): Promise<OneShotExpansion> {
  const untouched = { message: prompt, warnings: [], blocked: false };
  // Most prompts hold no `@`: nothing is loaded for them.
  if (!prompt.includes("@")) return untouched;
  const { parseReferences } = await import("../agent/references/parse.js");
  if (parseReferences(prompt).length === 0) return untouched;
  const [{ expandReferences }, { pageFetcher }] = await Promise.all([
    import("../agent/references/expand.js"),
    import("./tui/attachments.js"),
  ]);
  const { config } = options;
  const expanded = await expandReferences(prompt, {
    cwd: options.cwd,
    home: options.home,
    env: options.env,
    contextLength:
      config.model.context_length ?? catalogContextLength(options.model) ?? DEFAULT_CONTEXT_LENGTH,
    fetchUrl: pageFetcher(config),
  });
  const count = expanded.references.length;
  return {
    message: expanded.message,
    warnings: expanded.warnings,
    blocked: expanded.blocked,
    ...(count > 0 && expanded.injectedTokens > 0
      ? {
          attached: `@ attached ${count} reference${count === 1 ? "" : "s"} (about ${expanded.injectedTokens} tokens)`,
        }
      : {}),
  };
}
