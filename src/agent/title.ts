/**
 * Session titles: after the first exchange of a new session, a short title is asked of the
 * auxiliary model (`auxiliary.title_generation`), so `hermes sessions list` and `/resume` show
 * what each conversation was about. Best effort: a failure leaves the session untitled.
 */
import type { Message } from "../ai/types.js";

/** Characters of the user's message and of the answer that the title model reads. */
const EXCERPT_CHARS = 1200;
/** Longest title kept (Hermes's limit for a session title). */
export const MAX_TITLE_CHARS = 100;

/** The one user message asking for a title for this exchange. */
export function titlePrompt(userText: string, answerText: string): Message[] {
  const user = excerpt(userText);
  const answer = excerpt(answerText);
  return [
    {
      role: "user",
      content:
        "Write a title for the conversation below: 3 to 7 words naming its subject, in the " +
        "conversation's language, no quotes, no closing punctuation. Reply with the title only.\n\n" +
        `<user>\n${user}\n</user>\n<assistant>\n${answer}\n</assistant>`,
    },
  ];
}

/**
 * The title in a model's reply: first non-empty line, without a `Title:` label, quotes, markdown
 * emphasis or closing punctuation, capped at {@link MAX_TITLE_CHARS}. Undefined when nothing is left.
 */
export function cleanTitle(reply: string): string | undefined {
  const line = reply
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (!line) return undefined;
  let title = line
    .replace(/^#+\s*/, "")
    .replace(/^(session\s+)?title\s*[:\uff1a-]\s*/i, "")
    .replace(
      /^[*_`"'\u201c\u201d\u2018\u2019\u00ab\u00bb]+|[*_`"'\u201c\u201d\u2018\u2019\u00ab\u00bb]+$/g,
      "",
    )
    .replace(/[.!?\u3002;:,]+$/u, "")
    .replace(/\s+/g, " ")
    .trim();
  if (title.length > MAX_TITLE_CHARS) title = `${title.slice(0, MAX_TITLE_CHARS - 1).trimEnd()}…`;
  return title === "" ? undefined : title;
}

/** `base`, or `base #2`, `base #3`… the first one `taken` says is free. */
export async function uniqueTitle(base: string, taken: (title: string) => Promise<boolean>): Promise<string> {
  if (!(await taken(base))) return base;
  for (let n = 2; n < 1000; n++) {
    const candidate = `${base} #${n}`;
    if (!(await taken(candidate))) return candidate;
  }
  return `${base} #${Date.now()}`;
}

function excerpt(text: string): string {
  const flat = text.trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}
