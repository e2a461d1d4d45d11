/**
 * The session's system prompt, built once and kept byte-stable for the whole session so the
 * provider's prompt cache keeps hitting. Lean by design: every byte here is paid on every request.
 *
 * `buildSystemPrompt` is the pure entry point over plain data (the layers of `layers.ts`, rendered);
 * `assembleSystemPrompt` (assemble.ts) adds the file reads (SOUL.md, project context) and
 * `buildSessionPrompt` (session-prompt.ts) adds tool resolution, as a new session does.
 */
import { buildPromptLayers, type PromptLayersInput, renderPrompt } from "./layers.js";

/** The builder's input; every field beyond the original six is optional. */
export type SystemPromptInput = PromptLayersInput;

/** The rendered system prompt for `input`. Pure: the same input gives the same string. */
export function buildSystemPrompt(input: SystemPromptInput): string {
  return renderPrompt(buildPromptLayers(input));
}
