/**
 * What the REPL sends for a typed message: images waiting from `/image` and `/paste`, an image
 * path dropped at the start of the line, and the `@` references expanded (agent/references/).
 * Also the REPL's Tab completion of `@` words. The REPL owns one `ReplInput`.
 */
import {
  detectDroppedImage,
  type ImageAttachment,
  loadImageAttachment,
  userContent,
} from "../../agent/attachments/images.js";
import { completeReference } from "../../agent/references/complete.js";
import { expandReferences, type UrlFetcher } from "../../agent/references/expand.js";
import type { Message } from "../../ai/types.js";
import type { ImageAttachments, PendingImage } from "../../commands/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import { findBinary } from "../../tools/media/shared.js";
import { pasteClipboardImage } from "../clipboard.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface ReplInputOptions {
  home: string;
  env: Env;
  /** The session's working directory (it may change with the session). */
  cwd: () => string;
  /** The model's context window, for the size limits of `@` references. */
  contextLength: () => number;
  /** Fetches `@url:` pages; absent: they become a warning. */
  fetchUrl?: UrlFetcher;
}

/** A composed turn: the content to send (null: send nothing), and lines to show the user first. */
export interface ComposedTurn {
  content: Message["content"] | null;
  notices: string[];
}

export class ReplInput implements ImageAttachments {
  private images: ImageAttachment[] = [];

  constructor(private readonly options: ReplInputOptions) {}

  async attach(path: string): Promise<PendingImage> {
    const image = await this.load(path);
    this.images.push(image);
    return image;
  }

  async paste(): Promise<PendingImage> {
    const pasted = await pasteClipboardImage(this.options.home, this.options.env);
    if (!pasted.ok) throw new Error(`No image pasted: ${pasted.reason}.`);
    return this.attach(pasted.path);
  }

  pending(): readonly PendingImage[] {
    return this.images;
  }

  clear(): number {
    const n = this.images.length;
    this.images = [];
    return n;
  }

  /**
   * The content for `text`: a dropped image path becomes an attached image (the text after it is
   * the message), `@` references are expanded, and waiting images go along (and stop waiting).
   * References that together are too large refuse the turn: content null, the reason in notices,
   * and waiting images stay for the next try.
   */
  async compose(text: string): Promise<ComposedTurn> {
    const notices: string[] = [];
    let message = text;
    const dropped: ImageAttachment[] = [];
    const drop = await detectDroppedImage(text, this.options.cwd(), this.options.env["HOME"]);
    if (drop) {
      try {
        dropped.push(await this.load(drop.path));
        message = drop.remainder;
        notices.push(`📎 Attached ${drop.path}`);
      } catch (error) {
        notices.push(`warning: ${drop.path} was not attached: ${(error as Error).message}`);
      }
    }
    const expanded = await expandReferences(message, {
      cwd: this.options.cwd(),
      home: this.options.home,
      env: this.options.env,
      contextLength: this.options.contextLength(),
      ...(this.options.fetchUrl ? { fetchUrl: this.options.fetchUrl } : {}),
    });
    for (const warning of expanded.warnings) notices.push(`warning: ${warning}`);
    if (expanded.blocked) return { content: null, notices: [...notices, "Nothing was sent."] };
    if (expanded.references.length > 0 && expanded.injectedTokens > 0)
      notices.push(
        `@ attached ${expanded.references.length} reference${expanded.references.length === 1 ? "" : "s"} (about ${expanded.injectedTokens} tokens)`,
      );
    const images = [...this.images, ...dropped];
    this.images = [];
    if (expanded.message.trim() === "" && images.length === 0) return { content: null, notices };
    return { content: userContent(expanded.message, images), notices };
  }

  /** Tab completion of the `@` word at the end of `line`; null when it does not end in one. */
  complete(line: string): Promise<[string[], string] | null> {
    return completeReference(line, this.options.cwd(), this.options.env["HOME"]);
  }

  private load(path: string): Promise<ImageAttachment> {
    const ffmpeg = findBinary("ffmpeg", this.options.env);
    return loadImageAttachment(path, {
      cwd: this.options.cwd(),
      ...(this.options.env["HOME"] ? { home: this.options.env["HOME"] } : {}),
      ...(ffmpeg ? { ffmpeg } : {}),
    });
  }
}

/**
 * `@url:` pages read the way web_extract's local backend reads them: through the URL guard
 * (private addresses refused unless `security.allow_private_urls`), HTML turned into text.
 */
export function pageFetcher(config: HermesConfig): UrlFetcher {
  return async (url, signal) => {
    const [{ fetchPage }, { allowPrivateUrls }] = await Promise.all([
      import("../../tools/web/local-extract.js"),
      import("../../tools/web/url-guard.js"),
    ]);
    const page = await fetchPage(url, { allowPrivate: allowPrivateUrls(config), signal });
    if (page.error) throw new Error(page.error);
    return page.title ? `# ${page.title}\n\n${page.content}` : page.content;
  };
}
