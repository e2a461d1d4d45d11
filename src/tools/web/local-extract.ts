/**
 * Extraction without any service: fetch the page through the URL guard, then read it by what it
 * is. HTML becomes markdown, PDFs become text, plain text and JSON pass through, and anything
 * else (images, archives, media) is reported by type and size rather than dumped as bytes.
 */
import { STATUS_CODES } from "node:http";
import { decodeText } from "./charset.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { looksLikePdf, pdfToText } from "./pdf.js";
import { formatBytes, guardedFetch, type UrlGuardOptions, WebFetchError } from "./url-guard.js";

export const FETCH_TIMEOUT_MS = 30_000;
export const MAX_PAGE_BYTES = 10 * 1024 * 1024;

/** One URL's outcome. `error` set means `content` is empty and the URL could not be read. */
export interface PageResult {
  url: string;
  /** Where the page was finally read from, when redirects changed it. */
  final_url?: string;
  title: string;
  content: string;
  error?: string;
  /** Something the reader should know about the content (cut, summarised, partly read). */
  note?: string;
}

export interface FetchPageOptions extends UrlGuardOptions {
  timeoutMs?: number | undefined;
  maxBytes?: number | undefined;
  signal?: AbortSignal | undefined;
}

type Kind = "html" | "pdf" | "text" | "binary";

const TEXT_TYPES =
  /^(text\/|application\/(json|ld\+json|xml|javascript|ecmascript|x-javascript|x-yaml|yaml|x-sh|toml|csv|x-ndjson|rss\+xml|atom\+xml|markdown)$)|\+(json|xml)$/;

function kindOf(mediaType: string, body: Buffer): Kind {
  if (mediaType === "application/pdf") return "pdf";
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html";
  const textual = TEXT_TYPES.test(mediaType);
  // The magic number beats a wrong type (PDFs served as octet-stream or text/plain are common).
  if (/^\s*%PDF-/.test(body.subarray(0, 16).toString("latin1")) || (!textual && looksLikePdf(body)))
    return "pdf";
  if (textual) return "text";
  if (mediaType === "" || mediaType === "application/octet-stream" || mediaType === "binary/octet-stream") {
    const head = body.subarray(0, 2048);
    if (head.includes(0)) return "binary";
    return /^\s*(<!doctype html|<html|<head|<body)/i.test(head.toString("latin1")) ? "html" : "text";
  }
  return "binary";
}

function fileName(url: string): string {
  try {
    const path = new URL(url).pathname;
    return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1));
  } catch {
    return "";
  }
}

/** Fetches and reads one URL. Never throws: every failure is the result's `error`. */
export async function fetchPage(url: string, options: FetchPageOptions): Promise<PageResult> {
  const maxBytes = options.maxBytes ?? MAX_PAGE_BYTES;
  let response: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    response = await guardedFetch(url, {
      allowPrivate: options.allowPrivate,
      lookup: options.lookup,
      isBlockedAddress: options.isBlockedAddress,
      timeoutMs: options.timeoutMs ?? FETCH_TIMEOUT_MS,
      maxBytes,
      onTooLarge: "truncate",
      signal: options.signal,
      headers: {
        accept: "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5",
        "accept-language": "en;q=0.9,*;q=0.5",
      },
    });
  } catch (error) {
    return failed(
      url,
      error instanceof WebFetchError ? error.message : `Could not fetch ${url}: ${String(error)}`,
    );
  }
  const base: PageResult = { url, title: "", content: "" };
  if (response.url !== url) base.final_url = response.url;
  if (response.status >= 400) {
    const reason = STATUS_CODES[response.status] ?? "error";
    return { ...base, error: `The server answered HTTP ${response.status} (${reason}) for ${response.url}.` };
  }
  const contentType = response.headers.get("content-type") ?? "";
  const mediaType = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  const body = response.body;
  const kind = kindOf(mediaType, body);
  const cutNote = response.truncated
    ? `Only the first ${formatBytes(maxBytes)} of the page was read.`
    : undefined;
  try {
    if (kind === "pdf") {
      if (response.truncated) {
        return { ...base, error: `The PDF is larger than ${formatBytes(maxBytes)} and was not read.` };
      }
      const pdf = await pdfToText(body);
      const title = pdf.title || fileName(response.url);
      if (!pdf.text) {
        return {
          ...base,
          title,
          error: `The PDF (${pdf.pages} pages) has no text layer; it is probably scanned images.`,
        };
      }
      return { ...base, title, content: pdf.text };
    }
    if (kind === "html") {
      const page = htmlToMarkdown(decodeText(body, contentType), response.url);
      const header = page.title ? `# ${page.title}\n\nURL: ${response.url}\n\n` : `URL: ${response.url}\n\n`;
      const result: PageResult = {
        ...base,
        title: page.title,
        content: page.markdown ? header + page.markdown : "",
      };
      if (!page.markdown) {
        result.error =
          "The page has no readable text (it may build its content with JavaScript; a browser tool can render it).";
      }
      if (cutNote) result.note = cutNote;
      return result;
    }
    if (kind === "text") {
      const result: PageResult = {
        ...base,
        title: fileName(response.url),
        content: decodeText(body, contentType, false),
      };
      if (cutNote) result.note = cutNote;
      return result;
    }
    const size = response.truncated ? `over ${formatBytes(maxBytes)}` : formatBytes(body.length);
    return {
      ...base,
      error: `Binary content (${mediaType || "unknown type"}, ${size}) was not extracted; web_extract reads HTML pages, PDFs and text.`,
    };
  } catch (error) {
    return {
      ...base,
      error: `Could not read ${response.url}: ${(error as Error).message ?? String(error)}.`,
    };
  }
}

function failed(url: string, error: string): PageResult {
  return { url, title: "", content: "", error };
}
