/**
 * Markdown to WhatsApp's own markup, shared by the Cloud API and the personal-account (baileys)
 * adapters. WhatsApp renders `*bold*`, `_italic_`, `~strike~`, `` `code` `` and ```` ``` ```` blocks,
 * `> quotes` and `-`/`1.` lists; it shows headings, `**double**` markers and `[label](url)` links
 * literally. So: `**x**`/`__x__` → `*x*`, `*x*`/`_x_` → `_x_`, `~~x~~` → `~x~`, headings → a bold
 * line, links → `label (url)`. Code (fenced or inline) is left untouched.
 *
 * Pure: no I/O.
 */

// Characters WhatsApp draws as boxes or stray marks in front of text (zero-width joiners that are
// not part of an emoji sequence, odd spaces).
const INVISIBLE = /[\u200b\u2060\u2063\ufeff]/g;
const ODD_SPACE = /[\u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]/g;

const INLINE =
  /`([^`\n]+)`|\*\*(?=\S)([^\n]+?)\*\*|__(?=\S)([^\n]+?)__|~~(?=\S)([^\n]+?)~~|(?<![\w*])\*(?=[^\s*])([^*\n]+?)\*(?![\w*])|(?<![\w_])_(?=[^\s_])([^_\n]+?)_(?![\w_])|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

/** Inline markdown of one line rewritten into WhatsApp's markers. */
function inline(line: string): string {
  return line.replace(INLINE, (whole, code, b1, b2, strike, i1, i2, label, url) => {
    if (code !== undefined) return whole;
    const bold = (b1 ?? b2) as string | undefined;
    if (bold !== undefined) return `*${inline(bold)}*`;
    if (strike !== undefined) return `~${inline(strike as string)}~`;
    const italic = (i1 ?? i2) as string | undefined;
    if (italic !== undefined) return `_${inline(italic)}_`;
    const text = inline(label as string);
    return text === url ? (url as string) : `${text} (${url as string})`;
  });
}

/** The agent's markdown as WhatsApp shows it. */
export function markdownToWhatsApp(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const raw of markdown.replace(/\r\n?/g, "\n").split("\n")) {
    const fenceMark = /^\s{0,3}(```|~~~)/.exec(raw)?.[1];
    if (fence) {
      // Inside a block only the closing fence changes: WhatsApp's block marker is always ```.
      if (fenceMark === fence && raw.trim() === fence) {
        out.push("```");
        fence = undefined;
      } else out.push(raw);
      continue;
    }
    if (fenceMark) {
      fence = fenceMark;
      out.push("```"); // the language tag would show as text
      continue;
    }
    const line = raw.replace(INVISIBLE, "").replace(ODD_SPACE, " ");
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const inner = heading[1]?.replace(/^\*\*(.*)\*\*$/, "$1").replace(/^\*(.*)\*$/, "$1") ?? "";
      out.push(inner ? `*${inline(inner).replace(/^\*(.*)\*$/, "$1")}*` : "");
      continue;
    }
    // `* item` is a bullet in markdown but would open bold on WhatsApp.
    out.push(inline(line.replace(/^(\s*)[*+]\s+/, "$1- ")));
  }
  if (fence) out.push("```");
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** A phone number or WhatsApp id for logs: 15551234567 → 1555***4567. */
export function redactWaId(id: string): string {
  const bare = id.split("@")[0] ?? id;
  if (bare.length <= 8) return bare.length > 4 ? `${bare.slice(0, 2)}***${bare.slice(-2)}` : "****";
  return `${bare.slice(0, 4)}***${bare.slice(-4)}`;
}
