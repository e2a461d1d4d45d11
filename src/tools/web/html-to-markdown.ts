/**
 * HTML page → readable markdown: Readability (on a linkedom document) picks the article and drops
 * navigation, footers, cookie banners and sidebars; turndown writes the markdown. When
 * Readability finds no article, the whole body (minus scripts, styles and page chrome) is
 * converted instead, so a page is never returned empty just because it is not article-shaped.
 */
import type TurndownService from "turndown";
import { loadLinkedom, loadReadability, loadTurndown } from "./lazy-modules.js";

/** Readability's article is used when it holds at least this much text. */
const MIN_ARTICLE_CHARS = 80;
/** Larger documents skip Readability (its scoring is quadratic-ish on huge DOMs). */
const READABILITY_MAX_HTML = 3_000_000;

export interface MarkdownPage {
  title: string;
  markdown: string;
  /** True when Readability's article was used, false when the whole body was converted. */
  article: boolean;
}

type Doc = ReturnType<ReturnType<typeof loadLinkedom>["parseHTML"]>["document"];

let converter: TurndownService | undefined;

function turndown(): TurndownService {
  if (converter) return converter;
  const Turndown = loadTurndown();
  converter = new Turndown({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
    linkStyle: "inlined",
  });
  converter.remove([
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "canvas",
    "svg",
  ] as never);
  // Images carry nothing readable except their alt text; data: URIs would flood the output.
  converter.addRule("images", {
    filter: "img",
    replacement: (_content, node) => {
      const element = node as unknown as { getAttribute(name: string): string | null };
      const alt = (element.getAttribute("alt") ?? "").trim();
      const src = element.getAttribute("src") ?? "";
      if (!alt) return "";
      return src && !src.startsWith("data:") ? `![${alt}](${src})` : `[image: ${alt}]`;
    },
  });
  // Turndown pads list markers to four columns ("-   item"); one space reads better and costs less.
  converter.addRule("listItem", {
    filter: "li",
    replacement: (content, node, options) => {
      const item = node as unknown as {
        parentNode: {
          nodeName: string;
          getAttribute(name: string): string | null;
          children: ArrayLike<unknown>;
        } | null;
        nextSibling: unknown;
      };
      let prefix = `${options.bulletListMarker ?? "-"} `;
      const parent = item.parentNode;
      if (parent?.nodeName === "OL") {
        const start = Number(parent.getAttribute("start") ?? "1");
        const index = Array.prototype.indexOf.call(parent.children, node);
        prefix = `${(Number.isFinite(start) ? start : 1) + index}. `;
      }
      const body = content
        .replace(/^\n+/, "")
        .replace(/\n+$/, "\n")
        .replace(/\n/gm, `\n${" ".repeat(prefix.length)}`);
      return prefix + body + (item.nextSibling && !/\n$/.test(body) ? "\n" : "");
    },
  });
  return converter;
}

/** Rewrites relative link and image addresses against the page URL (Readability's own fix needs a real baseURI). */
function absolutise(document: Doc, pageUrl: string): void {
  let base = pageUrl;
  const declared = document.querySelector("base[href]")?.getAttribute("href");
  if (declared) {
    try {
      base = new URL(declared, pageUrl).href;
    } catch {
      // A broken <base> is ignored.
    }
  }
  for (const [selector, attribute] of [
    ["a[href]", "href"],
    ["img[src]", "src"],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute);
      if (!value || value.startsWith("#") || /^(data|javascript|mailto|tel):/i.test(value)) continue;
      try {
        element.setAttribute(attribute, new URL(value, base).href);
      } catch {
        // Leave addresses URL cannot parse as they are.
      }
    }
  }
}

function tidy(markdown: string): string {
  return markdown
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

const CHROME =
  "script, style, noscript, template, iframe, svg, nav, header, footer, aside, form, [role=navigation], [aria-hidden=true]";

function wholeBody(document: Doc): string {
  const body = document.body ?? document.documentElement;
  if (!body) return "";
  for (const element of body.querySelectorAll(CHROME)) element.remove();
  return body.innerHTML ?? "";
}

/** linkedom needs a whole document: a bare fragment gets no usable body (and can make it throw). */
function asDocument(html: string): string {
  return /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
}

/** Last resort for markup the DOM cannot take: the text with tags removed. */
function strippedText(html: string): MarkdownPage {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, " ").trim() ?? "";
  const text = html
    .replace(/<(script|style|noscript|template)[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<(br|\/p|\/div|\/li|\/h\d|\/tr)[^>]*>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
  return { title, markdown: tidy(text), article: false };
}

/** Converts an HTML page to markdown. `pageUrl` resolves relative links. Never throws on bad markup. */
export function htmlToMarkdown(html: string, pageUrl: string): MarkdownPage {
  try {
    return convert(asDocument(html), pageUrl);
  } catch {
    return strippedText(html);
  }
}

function convert(html: string, pageUrl: string): MarkdownPage {
  const { parseHTML } = loadLinkedom();
  const { document } = parseHTML(html);
  absolutise(document, pageUrl);
  const pageTitle = (document.querySelector("title")?.textContent ?? "").replace(/\s+/g, " ").trim();
  if (html.length <= READABILITY_MAX_HTML) {
    try {
      const Readability = loadReadability();
      // Readability mutates the document it reads, so it gets a copy; the fallback needs the original.
      const copy = parseHTML(document.toString()).document;
      type ReadableDocument = ConstructorParameters<typeof Readability>[0];
      const article = new Readability(copy as unknown as ReadableDocument, { keepClasses: false }).parse();
      const text = (article?.textContent ?? "").replace(/\s+/g, " ").trim();
      if (article?.content && text.length >= MIN_ARTICLE_CHARS) {
        const title = (article.title ?? "").trim() || pageTitle;
        return { title, markdown: tidy(turndown().turndown(article.content)), article: true };
      }
    } catch {
      // Readability gave up on this markup; the whole body is used below.
    }
  }
  return { title: pageTitle, markdown: tidy(turndown().turndown(wholeBody(document))), article: false };
}
