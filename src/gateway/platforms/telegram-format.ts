/**
 * Agent markdown → the HTML subset Telegram accepts with `parse_mode: "HTML"`.
 *
 * Telegram knows a handful of tags (b, i, s, u, code, pre, a, blockquote, ...) and three entities
 * (`&lt;`, `&gt;`, `&amp;`); anything else makes it answer 400 "can't parse entities". So every block
 * is rendered as a self-contained, balanced piece, all text is escaped, and constructs Telegram has
 * no markup for become plain text: headings turn bold, lists become bullet or number lines, tables
 * become a monospace block, raw HTML from the model is shown literally.
 *
 * Tokens come from `marked`'s lexer; the rendering is ours.
 */
import { Lexer, type Token, type Tokens } from "marked";

/** Escapes the three characters Telegram's HTML parser treats as markup. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/**
 * The text a reader sees for HTML this module produced (tags dropped, entities decoded). Telegram
 * counts its message and caption limits on this text, not on the markup.
 */
export function telegramHtmlVisibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/**
 * Converts markdown to Telegram HTML. Never throws: when the lexer fails the whole text comes back
 * escaped. Returns "" for blank input. The result always has balanced tags.
 */
export function markdownToTelegramHtml(markdown: string): string {
  if (markdown.trim() === "") return "";
  try {
    const tokens = Lexer.lex(markdown, { gfm: true });
    return renderBlocks(tokens, { quoted: false, listDepth: 0 }, "\n\n").trim();
  } catch {
    return escapeHtml(markdown.trim());
  }
}

interface BlockContext {
  /** Inside a blockquote already: Telegram does not nest quotes, so inner ones lose their tag. */
  quoted: boolean;
  listDepth: number;
}

function renderBlocks(tokens: readonly Token[], ctx: BlockContext, separator: string): string {
  const parts: string[] = [];
  for (const token of tokens) {
    const rendered = renderBlock(token, ctx);
    if (rendered !== "") parts.push(rendered);
  }
  return parts.join(separator);
}

function renderBlock(token: Token, ctx: BlockContext): string {
  switch (token.type) {
    case "space":
    case "def":
    case "checkbox":
      return "";
    case "paragraph":
      return renderInline((token as Tokens.Paragraph).tokens);
    case "heading": {
      const inner = renderInline((token as Tokens.Heading).tokens);
      return inner === "" ? "" : `<b>${inner}</b>`;
    }
    case "code":
      return renderCodeBlock((token as Tokens.Code).text, (token as Tokens.Code).lang);
    case "hr":
      return "——————";
    case "blockquote": {
      const inner = renderBlocks((token as Tokens.Blockquote).tokens, { ...ctx, quoted: true }, "\n");
      if (inner === "") return "";
      return ctx.quoted ? inner : `<blockquote>${inner}</blockquote>`;
    }
    case "list":
      return renderList(token as Tokens.List, ctx);
    case "table":
      return renderTable(token as Tokens.Table);
    case "html":
      return renderHtml(token.raw.trimEnd());
    case "text": {
      const text = token as Tokens.Text;
      return text.tokens ? renderInline(text.tokens) : escapeHtml(text.text);
    }
    default:
      return escapeHtml(token.raw ?? "");
  }
}

function renderCodeBlock(code: string, lang: string | undefined): string {
  const body = escapeHtml(code.replace(/\n+$/, "")) || " ";
  const language =
    (lang ?? "")
      .trim()
      .split(/\s+/)[0]
      ?.replace(/[^A-Za-z0-9_+#.-]/g, "") ?? "";
  if (language === "") return `<pre>${body}</pre>`;
  return `<pre><code class="language-${language.slice(0, 32)}">${body}</code></pre>`;
}

function renderList(list: Tokens.List, ctx: BlockContext): string {
  const start = typeof list.start === "number" ? list.start : 1;
  const indent = "  ".repeat(ctx.listDepth);
  const inner: BlockContext = { ...ctx, listDepth: ctx.listDepth + 1 };
  return list.items
    .map((item, i) => {
      const marker = list.ordered ? `${start + i}.` : "•";
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      // Nested lists carry their own indentation; everything else in the item follows the marker.
      const body = renderBlocks(item.tokens, inner, "\n");
      return `${indent}${marker} ${box}${body}`;
    })
    .join("\n");
}

/** Tables have no Telegram markup: aligned columns in a monospace block read best on phones too. */
function renderTable(table: Tokens.Table): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => plainInline(cell.tokens)));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  const line = (row: string[]): string =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join(" | ")
      .trimEnd();
  const [header, ...body] = rows;
  const rule = widths.map((w) => "-".repeat(Math.max(w, 1))).join("-+-");
  const lines = [line(header ?? []), rule, ...body.map(line)];
  return `<pre>${escapeHtml(lines.join("\n"))}</pre>`;
}

/** Raw HTML from the model is shown as written, except line breaks, which it usually means. */
function renderHtml(raw: string): string {
  if (/^<br\s*\/?>$/i.test(raw.trim())) return "\n";
  return escapeHtml(raw);
}

function renderInline(tokens: readonly Token[] | undefined): string {
  if (!tokens) return "";
  let out = "";
  for (const token of tokens) out += renderInlineToken(token);
  return out;
}

function wrap(tag: string, inner: string): string {
  return inner === "" ? "" : `<${tag}>${inner}</${tag}>`;
}

function renderInlineToken(token: Token): string {
  switch (token.type) {
    case "strong":
      return wrap("b", renderInline((token as Tokens.Strong).tokens));
    case "em":
      return wrap("i", renderInline((token as Tokens.Em).tokens));
    case "del":
      return wrap("s", renderInline((token as Tokens.Del).tokens));
    case "codespan":
      return wrap("code", escapeHtml((token as Tokens.Codespan).text));
    case "br":
      return "\n";
    case "escape":
      return escapeHtml((token as Tokens.Escape).text);
    case "text": {
      const text = token as Tokens.Text;
      return text.tokens ? renderInline(text.tokens) : escapeHtml(text.text);
    }
    case "link": {
      const link = token as Tokens.Link;
      const inner = renderInline(link.tokens);
      if (!isSafeHref(link.href)) return inner || escapeHtml(link.text);
      return `<a href="${escapeAttribute(link.href)}">${inner || escapeHtml(link.href)}</a>`;
    }
    case "image": {
      const image = token as Tokens.Image;
      const label = escapeHtml(image.text || image.href);
      return isSafeHref(image.href) ? `<a href="${escapeAttribute(image.href)}">${label}</a>` : label;
    }
    case "html":
      return renderHtml(token.raw);
    default:
      return escapeHtml(token.raw ?? "");
  }
}

/** Telegram rejects or silently drops links it cannot open; relative paths are among them. */
function isSafeHref(href: string): boolean {
  return /^(https?:\/\/|tg:\/\/|mailto:)\S+$/i.test(href);
}

/** The visible text of inline tokens, without markup (table cells). */
function plainInline(tokens: readonly Token[] | undefined): string {
  if (!tokens) return "";
  let out = "";
  for (const token of tokens) {
    const children = (token as { tokens?: Token[] }).tokens;
    if (token.type === "br") out += " ";
    else if (children && children.length > 0) out += plainInline(children);
    else if ("text" in token && typeof token.text === "string") out += token.text;
    else out += token.raw ?? "";
  }
  return out.replace(/\s*\n\s*/g, " ");
}
