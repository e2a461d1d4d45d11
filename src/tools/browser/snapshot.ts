/**
 * The page as text for the model: Playwright's accessibility tree (AI mode, which numbers elements
 * `e5`, `f1e2` in frames) rendered as an indented outline. Interactive and heading elements carry
 * an `[@e5]` reference that the action tools resolve with Playwright's `aria-ref=` selector;
 * unnamed wrapper elements are folded away. `renderSnapshot` is pure.
 */
import type { Page } from "playwright-core";

/** One node of `ariaSnapshotJSON({ mode: "ai" })`: a text fragment or an element. */
export type AriaNode = string | AriaElement;

export interface AriaElement {
  role: string;
  name?: string;
  ref?: string;
  text?: string;
  url?: string;
  placeholder?: string;
  cursor?: string;
  checked?: boolean | "mixed";
  disabled?: boolean;
  expanded?: boolean;
  pressed?: boolean | "mixed";
  selected?: boolean;
  level?: number;
  box?: { x: number; y: number; width: number; height: number };
  children?: AriaNode[];
}

/** Default size of a snapshot, of one with `full: true`, and of the one that follows an action. */
export const SNAPSHOT_CHARS = 8_000;
export const FULL_SNAPSHOT_CHARS = 30_000;
export const ACTION_SNAPSHOT_CHARS = 4_000;

/** Roles the model can act on, or use as landmarks; these get an `@eN` reference. */
const REFERENCED_ROLES = new Set([
  "button",
  "link",
  "textbox",
  "searchbox",
  "checkbox",
  "radio",
  "combobox",
  "listbox",
  "option",
  "slider",
  "spinbutton",
  "switch",
  "tab",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "treeitem",
  "heading",
]);

/** Wrappers without a name that only add depth. */
const FOLDED_ROLES = new Set(["generic", "none", "presentation"]);

export interface RenderOptions {
  /** Characters of outline kept; whole lines are cut from the end, with a note. */
  maxChars: number;
  /** Keep link URLs and longer text (browser_snapshot full=true). */
  full: boolean;
}

export interface RenderedSnapshot {
  /** The outline, ending with a note when it was cut. */
  text: string;
  /** References shown anywhere in the whole outline (cut or not), as `e5`. */
  refs: string[];
  truncated: boolean;
  /** Length of the outline before cutting. */
  totalChars: number;
}

/** Whether this element gets an `@ref` in the outline. */
export function isReferenced(node: AriaElement): boolean {
  if (!node.ref) return false;
  if (REFERENCED_ROLES.has(node.role)) return true;
  if (node.role === "img") return Boolean(node.name);
  return node.cursor === "pointer";
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function clip(value: string, max: number): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function states(node: AriaElement): string {
  const out: string[] = [];
  if (node.checked === true) out.push("[checked]");
  else if (node.checked === "mixed") out.push("[checked=mixed]");
  if (node.disabled) out.push("[disabled]");
  if (node.expanded === true) out.push("[expanded]");
  if (node.pressed === true) out.push("[pressed]");
  if (node.selected) out.push("[selected]");
  if (node.level) out.push(`[level=${node.level}]`);
  return out.join(" ");
}

/** Renders the tree; see {@link RenderedSnapshot}. An empty tree renders as "(empty page)". */
export function renderSnapshot(nodes: readonly AriaNode[], options: RenderOptions): RenderedSnapshot {
  const lines: string[] = [];
  const refs: string[] = [];
  const textMax = options.full ? 2000 : 300;

  const walkAll = (children: readonly AriaNode[], depth: number): void => {
    // A label's text next to the field it names ("Name" beside textbox "Name") says nothing new.
    const names = new Set(children.flatMap((c) => (typeof c === "string" || !c.name ? [] : [c.name.trim()])));
    for (const child of children) {
      if (typeof child === "string" && names.has(child.trim())) continue;
      walk(child, depth);
    }
  };

  const walk = (node: AriaNode, depth: number): void => {
    const indent = "  ".repeat(depth);
    if (typeof node === "string") {
      const value = clip(node, textMax);
      if (value) lines.push(`${indent}- text: ${value}`);
      return;
    }
    const referenced = isReferenced(node);
    const children = node.children ?? [];
    if (FOLDED_ROLES.has(node.role) && !node.name && !referenced) {
      if (node.text) {
        const value = clip(node.text, textMax);
        if (value) lines.push(`${indent}- text: ${value}`);
      }
      walkAll(children, depth);
      return;
    }
    if (referenced && node.ref) refs.push(node.ref);
    let line = `${indent}- ${node.role}`;
    if (node.name) line += ` ${quote(clip(node.name, textMax))}`;
    const flags = states(node);
    if (flags) line += ` ${flags}`;
    if (referenced) line += ` [@${node.ref}]`;
    if (node.placeholder && !node.text) line += ` [placeholder=${quote(clip(node.placeholder, 80))}]`;
    if (options.full && node.url) line += ` [url=${clip(node.url, 300)}]`;
    if (node.text) line += `: ${clip(node.text, textMax)}`;
    lines.push(line);
    walkAll(children, depth + 1);
  };
  walkAll(nodes, 0);

  if (lines.length === 0) return { text: "(empty page)", refs, truncated: false, totalChars: 0 };
  const whole = lines.join("\n");
  if (whole.length <= options.maxChars)
    return { text: whole, refs, truncated: false, totalChars: whole.length };

  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length + 1 > options.maxChars) break;
    kept.push(line);
    used += line.length + 1;
  }
  const hidden = lines.length - kept.length;
  const more = options.full
    ? "Use browser_console with an expression to read a specific part, or browser_scroll and browser_vision."
    : `Call browser_snapshot with full=true for up to ${FULL_SNAPSHOT_CHARS.toLocaleString("en-US")} characters.`;
  kept.push(
    `[… ${hidden} more lines not shown: the outline is ${whole.length.toLocaleString("en-US")} characters and was cut at ${options.maxChars.toLocaleString("en-US")}. ${more}]`,
  );
  return { text: kept.join("\n"), refs, truncated: true, totalChars: whole.length };
}

/** The accessibility tree of `page` (with element boxes when asked), frames included. */
export async function readAriaTree(
  page: Page,
  options: { timeoutMs: number; boxes?: boolean },
): Promise<AriaNode[]> {
  const tree = await page.ariaSnapshotJSON({
    mode: "ai",
    timeout: options.timeoutMs,
    ...(options.boxes ? { boxes: true } : {}),
  });
  return Array.isArray(tree) ? (tree as AriaNode[]) : [];
}

/** Accepts `@e5`, `e5`, `ref=e5` and `[@e5]`; returns `e5`, or undefined when it is not a reference. */
export function parseRef(input: string): string | undefined {
  const match = /^\[?\s*(?:ref\s*=\s*)?@?\s*((?:f\d+)?e\d+)\s*\]?$/i.exec(input.trim());
  return match?.[1]?.toLowerCase();
}
