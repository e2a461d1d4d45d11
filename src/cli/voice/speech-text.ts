/**
 * What of an answer is read aloud: the prose. Code blocks and inline code, markdown marks, links'
 * targets, images, tables' rules, HTML tags and bare URLs are dropped; a long answer is cut at the
 * last sentence end that fits, so speech never stops mid-word.
 */

/** Characters spoken at most (about a minute and a half of speech). */
export const MAX_SPOKEN_CHARS = 1200;

export function textForSpeech(markdown: string, maxChars = MAX_SPOKEN_CHARS): string {
  let text = markdown.replace(/\r\n?/g, "\n");
  text = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm, " ");
  text = text.replace(/`[^`\n]*`/g, " ");
  text = text.replace(/!\[[^\]]*\]\([^)]*\)/g, " ");
  text = text.replace(/\[([^\]]+)\]\([^)]*\)/g, "$1");
  text = text.replace(/<\/?[a-z][^>]*>/gi, " ");
  text = text.replace(/https?:\/\/\S+/g, " ");
  text = text.replace(/^\s*\|?\s*:?-{3,}.*$/gm, " ");
  text = text.replace(/\|/g, ", ");
  text = text.replace(/^\s{0,3}#{1,6}\s+(.*)$/gm, "$1.");
  text = text.replace(/^\s*>\s?/gm, "");
  text = text.replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, "");
  text = text.replace(/^\s*(?:-{3,}|\*{3,}|_{3,})\s*$/gm, " ");
  text = text.replace(/(\*\*|__)(.+?)\1/g, "$2").replace(/(\*|_)(\S(?:.*?\S)?)\1/g, "$2");
  text = text.replace(/~~(.+?)~~/g, "$1");
  text = text.replace(/[*#`~]/g, " ");
  text = text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter((p) => p !== "" && /[\p{L}\p{N}]/u.test(p))
    .map((p) => (/[.!?:;,]$/.test(p) ? p : `${p}.`))
    .join(" ")
    .replace(/\.\.(?!\.)/g, ".")
    .replace(/\s+([.,!?;:])/g, "$1");
  return cutAtSentence(text, maxChars);
}

/** `text` up to `max` characters, cut after the last sentence end that fits (else a word end). */
export function cutAtSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max + 1);
  let cut = -1;
  for (const m of head.matchAll(/[.!?](?=\s|$)/g))
    if (m.index !== undefined && m.index < max) cut = m.index + 1;
  if (cut > max / 3) return head.slice(0, cut).trim();
  const space = head.lastIndexOf(" ", max);
  return `${head.slice(0, space > 0 ? space : max).trim()}…`;
}
