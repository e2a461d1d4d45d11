/**
 * Agent markdown as HTML that is safe to hand to a mail client or a Matrix client: raw HTML the
 * model wrote is shown as text, only web and mail links become anchors (javascript:, data: and
 * file: stay text), and images become links, since a remote image loads when the message is
 * opened (a tracking pixel in mail; Matrix wants mxc:// URLs anyway). `marked` loads on first use,
 * so a gateway's start does not pay for it.
 */
import { createRequire } from "node:module";
import type { Marked } from "marked";

let renderer: Marked | undefined;

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function markdown(): Marked {
  if (!renderer) {
    const { Marked: MarkedClass } = createRequire(import.meta.url)("marked") as typeof import("marked");
    renderer = new MarkedClass({
      gfm: true,
      breaks: true,
      renderer: {
        html: (token) => escapeHtml(token.text),
        image: (token) =>
          token.href
            ? `<a href="${escapeHtml(token.href)}">${escapeHtml(token.text || token.href)}</a>`
            : escapeHtml(token.text),
      },
      walkTokens: (token) => {
        if ((token.type === "link" || token.type === "image") && !/^(https?:|mailto:)/i.test(token.href)) {
          (token as { href: string }).href = "";
        }
      },
    });
  }
  return renderer;
}

/** `text` (markdown) rendered as safe HTML. */
export function markdownToSafeHtml(text: string): string {
  return markdown().parse(text, { async: false }) as string;
}
