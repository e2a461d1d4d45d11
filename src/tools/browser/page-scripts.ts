/**
 * Functions that run inside the page (passed to `page.evaluate`, serialised as source). They may
 * use only their arguments and the page's globals; the project compiles without the DOM library,
 * so each reaches the page through `globalThis` typed with the few members it needs.
 */

interface ElementLike {
  id: string;
  textContent: string | null;
  outerHTML: string;
  setAttribute(name: string, value: string): void;
  appendChild(child: ElementLike): void;
  remove(): void;
}

interface ImageLike {
  currentSrc: string;
  src: string;
  alt: string;
  naturalWidth: number;
  naturalHeight: number;
  width: number;
  height: number;
}

interface PageGlobals {
  document: {
    scrollingElement: { scrollTop: number; scrollHeight: number } | null;
    documentElement: ElementLike & { scrollTop: number; scrollHeight: number };
    images: ArrayLike<ImageLike>;
    createElement(tag: string): ElementLike;
    getElementById(id: string): ElementLike | null;
  };
  innerHeight: number;
  history: { length: number };
  scrollBy(options: { top: number; behavior: string }): void;
  Element: abstract new () => ElementLike;
}

export interface ScrollPosition {
  before: number;
  after: number;
  max: number;
}

/** Scrolls the document by 80% of the window height in `direction` (1 down, -1 up). */
export function scrollDocument(direction: number): ScrollPosition {
  const page = globalThis as unknown as PageGlobals;
  const el = page.document.scrollingElement ?? page.document.documentElement;
  const before = el.scrollTop;
  page.scrollBy({ top: direction * Math.round(page.innerHeight * 0.8), behavior: "instant" });
  return { before, after: el.scrollTop, max: Math.max(0, el.scrollHeight - page.innerHeight) };
}

/** The element's tag name (upper case), e.g. "SELECT". */
export function tagName(element: unknown): string {
  return String((element as { tagName?: unknown }).tagName ?? "");
}

/**
 * For a `<select>`: the value of the option whose label or value is `text` (case and surrounding
 * space ignored), or the labels there are when none matches.
 */
export function matchOption(element: unknown, text: string): { value: string } | { labels: string[] } {
  const options = Array.from((element as { options: ArrayLike<{ value: string; label: string }> }).options);
  const wanted = text.trim().toLowerCase();
  const hit =
    options.find((o) => o.label.trim().toLowerCase() === wanted) ??
    options.find((o) => o.value.trim().toLowerCase() === wanted);
  return hit ? { value: hit.value } : { labels: options.map((o) => o.label.trim()) };
}

/** Entries of this tab's session history. */
export function historyLength(): number {
  return (globalThis as unknown as PageGlobals).history.length;
}

export interface PageImage {
  src: string;
  alt: string;
  width: number;
  height: number;
  displayed_width: number;
  displayed_height: number;
}

/** Every `<img>` of the document, addresses cut to `maxSrc` characters (data: URLs are long). */
export function listImages(maxSrc: number): PageImage[] {
  const images = Array.from((globalThis as unknown as PageGlobals).document.images);
  return images.map((img) => {
    const src = img.currentSrc || img.src;
    return {
      src: src.length > maxSrc ? `${src.slice(0, maxSrc)}…` : src,
      alt: img.alt,
      width: img.naturalWidth,
      height: img.naturalHeight,
      displayed_width: img.width,
      displayed_height: img.height,
    };
  });
}

/** `typeof`, with arrays and null told apart. */
export function valueType(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** The markup of an element, else the value as text. */
export function elementMarkup(value: unknown): string {
  const page = globalThis as unknown as PageGlobals;
  return value instanceof page.Element ? value.outerHTML : String(value);
}

export function stringify(value: unknown): string {
  return String(value);
}

export interface LabelBox {
  ref: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Draws an outline and an `@ref` tag over each box, in one fixed layer with id `id`. */
export function drawLabels(input: { id: string; items: LabelBox[] }): void {
  const doc = (globalThis as unknown as PageGlobals).document;
  const root = doc.createElement("div");
  root.id = input.id;
  root.setAttribute("style", "position:fixed;inset:0;pointer-events:none;z-index:2147483647");
  for (const item of input.items) {
    const box = doc.createElement("div");
    box.setAttribute(
      "style",
      `position:fixed;left:${item.x}px;top:${item.y}px;width:${item.width}px;height:${item.height}px;outline:2px solid #e6194b;`,
    );
    const tag = doc.createElement("span");
    tag.textContent = `@${item.ref}`;
    // Above the box, or inside it when the box touches the top of the window.
    tag.setAttribute(
      "style",
      `position:absolute;left:0;top:${item.y < 14 ? 0 : -14}px;font:bold 11px/13px monospace;background:#e6194b;color:#fff;padding:0 2px`,
    );
    box.appendChild(tag);
    root.appendChild(box);
  }
  doc.documentElement.appendChild(root);
}

/** Removes the layer {@link drawLabels} added. */
export function removeLabels(id: string): void {
  (globalThis as unknown as PageGlobals).document.getElementById(id)?.remove();
}
