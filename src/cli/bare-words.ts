/**
 * What `hermes WORD ...` means. One rule decides it, so a mistyped command never becomes a prompt
 * sent to a paid model: the first argument is a prompt when it reads like a sentence, i.e. it
 * contains whitespace or ends in `?`, `!` or `.` (`hermes "what is in this folder?"`); otherwise
 * it must be a command, and an unknown one is a usage error with suggestions. `-q`, `-z` and
 * `hermes chat WORDS` always take their words as a prompt.
 */
import { editDistance } from "../util/edit-distance.js";

/** The rule, stated once for `--help`, the README and the error message. */
export const PROMPT_RULE =
  'The first argument is a prompt only when it contains a space or ends in ?, ! or . (hermes "what is in this folder?"); any other first word must be a command. -q, -z and `hermes chat WORDS` always take a prompt.';

/** Whether the first positional argument is a prompt rather than a command name. */
export function isPromptArgument(first: string): boolean {
  return /\s/.test(first) || /[?!.]$/.test(first);
}

/**
 * Commands close to `word`: within an edit distance of about a third of its length (at least 1),
 * or starting with it (`sess` → sessions). Closest first; case does not matter.
 */
export function suggestCommands(word: string, commands: readonly string[]): string[] {
  const w = word.toLowerCase();
  const budget = Math.max(1, Math.floor(w.length / 3));
  return commands
    .map((name) => ({ name, d: editDistance(w, name.toLowerCase()) }))
    .filter(({ name, d }) => d <= budget || (w.length >= 3 && name.startsWith(w)))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .map(({ name }) => name);
}

/**
 * The error for `hermes WORD ...` where WORD is neither a command nor a prompt by
 * {@link PROMPT_RULE}; `words` are all the positional words, shown quoted as a `-q` prompt.
 */
export function unknownCommandMessage(words: readonly string[], commands: readonly string[]): string {
  const word = words[0] ?? "";
  const shown = JSON.stringify(word);
  const suggestions = suggestCommands(word, commands);
  const lines = [`hermes: ${shown} is not a command.`];
  if (suggestions.length > 0) lines.push(`Did you mean: ${suggestions.join(", ")}?`);
  lines.push(`Commands: ${[...commands].sort().join(", ")}.`);
  lines.push(`To ask the model instead: hermes -q ${shellQuote(words.join(" "))}. ${PROMPT_RULE}`);
  return `${lines.join("\n")}\n`;
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
