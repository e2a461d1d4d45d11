/**
 * Answering the questions of `hermes setup` and `hermes model` in a tmux Terminal: wait until the
 * cursor line asks, then type. A question is asked when the last non-empty line shows it and ends
 * with its colon (nothing typed yet).
 */
import type { Terminal } from "./terminal.js";

/** The line the cursor waits on: the last non-empty one. */
export const lastLine = (screen: string): string =>
  screen
    .split("\n")
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .at(-1) ?? "";

/** Waits until the terminal asks `question`, then types `text` (if any) and Enter. */
export async function answer(
  term: Terminal,
  question: string,
  text: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = term.screen();
    const line = lastLine(screen);
    if (line.includes(question) && line.endsWith(":")) break;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for "${question}". Screen:\n${screen}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (text) term.type(text);
  term.keys("Enter");
}
