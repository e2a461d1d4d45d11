import { describe, expect, it } from "vitest";
import { type AriaNode, parseRef, renderSnapshot } from "../../../../src/tools/browser/snapshot.js";
import { normalizeUrl } from "../../../../src/tools/browser/tools.js";

const PAGE: AriaNode[] = [
  {
    role: "generic",
    ref: "e1",
    children: [
      { role: "heading", name: "Shop", level: 1, ref: "e2" },
      { role: "generic", ref: "e3", children: ["Search", { role: "searchbox", name: "Search", ref: "e4" }] },
      { role: "paragraph", ref: "e5", text: "Free shipping on orders over $50" },
      { role: "link", name: "Cart", ref: "e6", url: "/cart" },
      { role: "checkbox", name: "In stock only", checked: true, ref: "e7" },
      { role: "button", name: "Buy", disabled: true, ref: "e8" },
      { role: "generic", ref: "e9", cursor: "pointer", text: "Close banner" },
      { role: "img", ref: "e10" },
      { role: "iframe", ref: "e11", children: [{ role: "button", name: "Pay", ref: "f1e2" }] },
    ],
  },
];

describe("renderSnapshot", () => {
  it("outlines the page, folds unnamed wrappers and tags actionable elements with @refs", () => {
    const out = renderSnapshot(PAGE, { maxChars: 10_000, full: false });
    expect(out.text).toBe(
      [
        '- heading "Shop" [level=1] [@e2]',
        '- searchbox "Search" [@e4]',
        "- paragraph: Free shipping on orders over $50",
        '- link "Cart" [@e6]',
        '- checkbox "In stock only" [checked] [@e7]',
        '- button "Buy" [disabled] [@e8]',
        "- generic [@e9]: Close banner",
        "- img",
        "- iframe",
        '  - button "Pay" [@f1e2]',
      ].join("\n"),
    );
    expect(out.refs).toEqual(["e2", "e4", "e6", "e7", "e8", "e9", "f1e2"]);
    expect(out.truncated).toBe(false);
  });

  it("shows link addresses only in full mode", () => {
    expect(renderSnapshot(PAGE, { maxChars: 10_000, full: true }).text).toContain(
      '- link "Cart" [@e6] [url=/cart]',
    );
  });

  it("cuts at whole lines and says how to see more, keeping every ref usable", () => {
    const many: AriaNode[] = Array.from({ length: 200 }, (_, i) => ({
      role: "button",
      name: `Item ${i}`,
      ref: `e${i}`,
    }));
    const out = renderSnapshot(many, { maxChars: 500, full: false });
    expect(out.truncated).toBe(true);
    expect(out.text.length).toBeLessThan(800);
    const lines = out.text.split("\n");
    expect(lines.slice(0, -1).every((l) => /^- button "Item \d+" \[@e\d+\]$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[… \d+ more lines not shown: .* Call browser_snapshot with full=true/);
    expect(out.refs).toHaveLength(200);
  });

  it("renders an empty tree as an empty page", () => {
    expect(renderSnapshot([], { maxChars: 100, full: false }).text).toBe("(empty page)");
  });
});

describe("parseRef", () => {
  it.each([
    ["@e5", "e5"],
    ["e5", "e5"],
    ["[@e12]", "e12"],
    ["ref=e3", "e3"],
    ["@f1e2", "f1e2"],
    [" @E7 ", "e7"],
    ["button", undefined],
    ["@e", undefined],
    ["#submit", undefined],
  ])("%s -> %s", (input, expected) => {
    expect(parseRef(input)).toBe(expected);
  });
});

describe("normalizeUrl", () => {
  it.each([
    ["https://example.com/a", "https://example.com/a"],
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080/"],
    ["example.com/docs", "https://example.com/docs"],
    ["localhost:3000/x", "https://localhost:3000/x"],
  ])("%s -> %s", (input, expected) => {
    expect(normalizeUrl(input)).toBe(expected);
  });

  it.each([
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/html,hi",
    "chrome://settings",
    "ftp://x/y",
  ])("refuses %s", (input) => {
    expect(() => normalizeUrl(input)).toThrow(/^Only http and https pages can be opened/);
  });

  it("refuses an empty address", () => {
    expect(() => normalizeUrl("  ")).toThrow("url is empty");
  });
});
