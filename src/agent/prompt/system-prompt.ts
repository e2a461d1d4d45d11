/**
 * The session's system prompt, built once and kept byte-stable for the whole session so the
 * provider's prompt cache keeps hitting. Lean by design: every byte here is paid on every request.
 */

export interface SystemPromptInput {
  /** Replaces the default identity (SOUL.md or a caller's own). */
  identity?: string;
  platform: string;
  cwd: string;
  os: string;
  shell?: string;
  toolNames: readonly string[];
  /** Date line; injected so tests are deterministic. */
  date: string;
}

const DEFAULT_IDENTITY =
  "You are Hermes, a capable personal AI agent made by Nous Research. You help the user by thinking clearly, " +
  "using your tools to act on their machine and the web, and answering directly. Be concise and accurate; " +
  "say so when you are unsure.";

const PLATFORM_HINTS: Record<string, string> = {
  cli: "You are running in a terminal. Plain text and simple markdown render well.",
};

export function buildSystemPrompt(input: SystemPromptInput): string {
  const sections = [input.identity?.trim() || DEFAULT_IDENTITY];
  const hint = PLATFORM_HINTS[input.platform];
  if (hint) sections.push(hint);
  sections.push(
    `Environment: ${input.os}${input.shell ? `, shell ${input.shell}` : ""}; working directory ${input.cwd}; today is ${input.date}.`,
  );
  if (input.toolNames.length > 0) {
    const guidance = [
      "Use tools to act rather than describing what you would do. Call independent tools together in one step.",
    ];
    if (input.toolNames.includes("read_file")) {
      guidance.push("Read files before editing them; prefer `patch` for small edits.");
    }
    if (input.toolNames.includes("todo")) guidance.push("For multi-step work, keep a plan with `todo`.");
    sections.push(guidance.join(" "));
  }
  return sections.join("\n\n");
}
