/**
 * Inline markdown (emphasis, code spans, links, images) of one line, rendered for the terminal.
 * Tokens come from `marked`'s inline lexer; only the rendering is ours.
 */
import { Lexer, type Token } from "marked";
import type { Style } from "./style.js";

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  "#39": "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
    const known = ENTITIES[name.toLowerCase()];
    if (known !== undefined) return known;
    if (name.startsWith("#")) {
      const code =
        name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      if (Number.isInteger(code) && code > 0 && code <= 0x10ffff) return String.fromCodePoint(code);
    }
    return whole;
  });
}

/**
 * Renders the inline markup of `text`. With colour: bold, italic, strikethrough, cyan code spans,
 * underlined link text followed by the dim URL. Without colour the markers are dropped, except the
 * backticks of code spans, which keep literal text recognisable; links read `text (url)`.
 */
export function renderInline(text: string, style: Style): string {
  if (text === "") return "";
  let tokens: Token[];
  try {
    tokens = Lexer.lexInline(text);
  } catch {
    return text;
  }
  return renderTokens(tokens, style);
}

function renderTokens(tokens: Token[], style: Style): string {
  let out = "";
  for (const token of tokens) out += renderToken(token, style);
  return out;
}

function inner(token: Token, style: Style): string {
  const { tokens: children, text } = token as { tokens?: Token[]; text?: string };
  return children ? renderTokens(children, style) : decodeEntities(text ?? token.raw);
}

function renderToken(token: Token, style: Style): string {
  switch (token.type) {
    case "text":
      return (token as { tokens?: Token[] }).tokens ? inner(token, style) : decodeEntities(token.text);
    case "escape":
      return token.text;
    case "strong":
      return style.bold(inner(token, style));
    case "em":
      return style.italic(inner(token, style));
    case "del":
      return style.strike(inner(token, style));
    case "codespan": {
      const code = decodeEntities(token.text);
      return style.enabled ? style.cyan(code) : `\`${code}\``;
    }
    case "br":
      return " ";
    case "link": {
      const href = String(token.href ?? "");
      const label = inner(token, style);
      const plainLabel = String(token.text ?? "");
      if (plainLabel === href || href === `mailto:${plainLabel}` || href === "") {
        return style.enabled ? style.underline(label) : label;
      }
      return style.enabled ? `${style.underline(label)} ${style.dim(`(${href})`)}` : `${label} (${href})`;
    }
    case "image": {
      const alt = String(token.text ?? "") || "image";
      const href = String(token.href ?? "");
      return style.enabled ? `${style.italic(`[${alt}]`)} ${style.dim(`(${href})`)}` : `[${alt}] (${href})`;
    }
    default:
      return token.raw;
  }
}
