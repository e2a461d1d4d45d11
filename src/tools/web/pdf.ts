/** PDF → plain text with unpdf (pdf.js), page by page. */
import { loadUnpdf } from "./lazy-modules.js";

export interface PdfText {
  /** The document's Title metadata, when it has one. */
  title: string;
  text: string;
  pages: number;
}

/** True when the bytes start like a PDF (`%PDF-`, possibly after a little leading junk). */
export function looksLikePdf(body: Buffer): boolean {
  return body.subarray(0, 1024).includes("%PDF-");
}

/**
 * Extracts the text of every page, pages separated by a blank line. Throws a readable error for an
 * encrypted or corrupt file. A scanned PDF (images only) gives empty text; the caller says so.
 */
export async function pdfToText(body: Buffer): Promise<PdfText> {
  const { getDocumentProxy, extractText } = loadUnpdf();
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    document = await getDocumentProxy(new Uint8Array(body));
  } catch (error) {
    const name = (error as Error).name ?? "";
    if (name === "PasswordException")
      throw new Error("the PDF is password-protected; its text cannot be read");
    throw new Error(`the PDF could not be read (${(error as Error).message ?? String(error)})`);
  }
  try {
    const { totalPages, text } = await extractText(document, { mergePages: false });
    let title = "";
    try {
      const meta = await document.getMetadata();
      const info = meta.info as Record<string, unknown> | undefined;
      if (typeof info?.["Title"] === "string") title = info["Title"].trim();
    } catch {
      // Metadata is optional.
    }
    const pages = (text as string[]).map((page) => page.replace(/[ \t]+\n/g, "\n").trim());
    return { title, text: pages.filter(Boolean).join("\n\n"), pages: totalPages };
  } finally {
    await document.destroy().catch(() => {});
  }
}
