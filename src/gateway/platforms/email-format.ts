/**
 * The agent's markdown as an email: the markdown itself as the text/plain part (readable as is in
 * any client) and an HTML alternative rendered by `marked`. Raw HTML in the model's text is shown
 * as text, never passed through: a reply must not carry tracking images, forms or scripts a
 * prompt-injected model wrote.
 */
import { createRequire } from "node:module";
import { markdownToSafeHtml } from "./markdown-html.js";

/** The text/plain and text/html bodies of one message. */
export function emailBodies(text: string): { text: string; html: string } {
  const html = markdownToSafeHtml(text);
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
