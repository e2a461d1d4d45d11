/**
 * Markdown from sessions, memories and skills rendered safely: raw HTML in the text is shown as
 * text, links keep only http(s)/mailto targets and open in a new tab without a referrer, and
 * images become links (the page's CSP loads nothing from elsewhere).
 */
import { Marked, type Tokens } from "marked";

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

function safeHref(href: string): string | null {
  try {
    const url = new URL(href, "https://invalid.example/");
    if (url.origin === "https://invalid.example") return null;
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (!href) return text;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${text}</a>`;
    },
    image(token: Tokens.Image) {
      const href = safeHref(token.href);
      const label = escapeHtml(token.text || token.href);
      return href
        ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">[image: ${label}]</a>`
        : `[image: ${label}]`;
    },
  },
});

export function renderMarkdown(text: string): string {
  return marked.parse(text, { async: false });
}

export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  return <div class={`markdown ${cls ?? ""}`} dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}
