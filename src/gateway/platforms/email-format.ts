/**
 * The agent's markdown as an email: the markdown itself as the text/plain part (readable as is in
 * any client) and an HTML alternative rendered by `marked`. Raw HTML in the model's text is shown
 * as text, never passed through: a reply must not carry tracking images, forms or scripts a
 * prompt-injected model wrote.
 */
import { createRequire } from "node:module";
import type { Marked } from "marked";

let renderer: Marked | undefined;

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function markdown(): Marked {
  if (!renderer) {
    // Loaded on first send, so the gateway's start does not pay for it.
    const { Marked: MarkedClass } = createRequire(import.meta.url)("marked") as typeof import("marked");
    renderer = new MarkedClass({
      gfm: true,
      breaks: true,
      renderer: {
        html: (token) => escapeHtml(token.text),
        // Remote images load when the mail is opened (a tracking pixel); show them as links.
        image: (token) =>
          token.href
            ? `<a href="${escapeHtml(token.href)}">${escapeHtml(token.text || token.href)}</a>`
            : escapeHtml(token.text),
      },
      walkTokens: (token) => {
        // Only web and mail links become anchors; javascript:, data: and file: stay text.
        if ((token.type === "link" || token.type === "image") && !/^(https?:|mailto:)/i.test(token.href)) {
          (token as { href: string }).href = "";
        }
      },
    });
  }
  return renderer;
}

/** The text/plain and text/html bodies of one message. */
export function emailBodies(text: string): { text: string; html: string } {
  const html = markdown().parse(text, { async: false }) as string;
  return {
    text,
    html: `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4">${html}</body></html>`,
  };
}

let turndown: { turndown(html: string): string } | undefined;

/**
 * An HTML-only message as markdown text for the agent: structure (paragraphs, lists, links,
 * emphasis) kept, markup, styles, scripts and remote images dropped.
 */
export function htmlToText(html: string): string {
  if (!turndown) {
    const TurndownService = createRequire(import.meta.url)("turndown") as typeof import("turndown");
    const service = new TurndownService({
      headingStyle: "atx",
      codeBlockStyle: "fenced",
      bulletListMarker: "-",
    });
    service.remove(["script", "style", "head", "title", "meta", "link"]);
    // Images are usually tracking pixels or layout; an attached image arrives as a file instead.
    service.addRule("images", {
      filter: "img",
      replacement: (_content, node) => {
        const alt = (node as { getAttribute(name: string): string | null }).getAttribute("alt");
        return alt ? `[image: ${alt}]` : "";
      },
    });
    turndown = service;
  }
  return turndown
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
