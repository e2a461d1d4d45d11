/**
 * Checks run inside a dashboard page (through `evaluate`), each answering a list of problems a
 * person would meet, empty when there are none:
 *
 * - {@link A11Y_AUDIT}: every form control has an accessible name, every button and link text or
 *   a label, images an `alt`, exactly one visible h1, no duplicate ids, ARIA references that point
 *   at something, no positive `tabindex`, and a tab order that never jumps back up the page.
 * - {@link CONTRAST_AUDIT}: the contrast of every visible text against the background it is drawn
 *   on (the first opaque ancestor background, translucent layers blended), at least 4.5:1 (3:1
 *   for large text), as WCAG 2 computes it; disabled controls are exempt as WCAG allows.
 * - {@link OVERFLOW_AUDIT}: how far the page scrolls sideways (0 when it fits the window).
 *
 * Written as plain browser JavaScript in strings: this project's tests are typed without the DOM.
 */

const HELPERS = String.raw`
  const describe = (el) => {
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "";
    const txt = (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 40);
    return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + (txt ? ' "' + txt + '"' : "");
  };
  const visible = (el) => {
    const s = getComputedStyle(el);
    if (s.display === "none" || s.visibility === "hidden") return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const textOf = (el) => (el.textContent || "").replace(/\s+/g, " ").trim();
  const nameOf = (el) => {
    const aria = (el.getAttribute("aria-label") || "").trim();
    if (aria) return aria;
    const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
    const by = ids.map((id) => document.getElementById(id)).filter(Boolean).map(textOf).join(" ").trim();
    if (by) return by;
    if (el.labels && el.labels.length > 0) {
      const t = [...el.labels].map(textOf).join(" ").trim();
      if (t) return t;
    }
    return (el.getAttribute("title") || "").trim();
  };
`;

export const A11Y_AUDIT = `(() => {
  ${HELPERS}
  const problems = [];
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden") continue;
    if (!nameOf(el)) problems.push("form control without an accessible name: " + describe(el));
  }
  for (const el of document.querySelectorAll("button, [role=button]")) {
    if (!nameOf(el) && !textOf(el)) problems.push("button without text or aria-label: " + describe(el));
  }
  for (const el of document.querySelectorAll("a[href]")) {
    if (!nameOf(el) && !textOf(el)) problems.push("link without text: " + describe(el));
  }
  for (const el of document.querySelectorAll("img")) {
    if (!el.hasAttribute("alt")) problems.push("image without alt: " + describe(el));
  }
  for (const el of document.querySelectorAll("svg[role=img], [role=img]:not(svg)")) {
    if (!nameOf(el) && !el.querySelector("title")) problems.push("image role without a name: " + describe(el));
  }
  const h1 = [...document.querySelectorAll("h1")].filter(visible);
  if (h1.length !== 1) problems.push(h1.length + " visible h1 headings, want exactly one");
  const seen = new Map();
  for (const el of document.querySelectorAll("[id]")) seen.set(el.id, (seen.get(el.id) || 0) + 1);
  for (const [id, n] of seen) if (n > 1) problems.push("duplicate id " + JSON.stringify(id) + " (" + n + " times)");
  for (const attr of ["aria-labelledby", "aria-describedby", "aria-controls", "list"]) {
    for (const el of document.querySelectorAll("[" + attr + "]")) {
      for (const id of (el.getAttribute(attr) || "").split(/\\s+/).filter(Boolean)) {
        if (!document.getElementById(id)) problems.push(attr + " points at no element #" + id + ": " + describe(el));
      }
    }
  }
  for (const el of document.querySelectorAll("label[for]")) {
    if (!document.getElementById(el.htmlFor)) problems.push("label for a missing control #" + el.htmlFor);
  }
  for (const el of document.querySelectorAll("[tabindex]")) {
    if (el.tabIndex > 0) problems.push("positive tabindex reorders the tab order: " + describe(el));
  }
  const focusable = [...document.querySelectorAll(
    "main a[href], main button, main input, main select, main textarea, main summary, main [tabindex]"
  )].filter((el) => el.tabIndex >= 0 && !el.disabled && visible(el));
  for (let i = 1; i < focusable.length; i++) {
    const prev = focusable[i - 1].getBoundingClientRect();
    const next = focusable[i].getBoundingClientRect();
    if (next.bottom < prev.top - 4) {
      problems.push("tab order jumps back up the page: " + describe(focusable[i - 1]) + " then " + describe(focusable[i]));
    }
  }
  return problems;
})()`;

export const CONTRAST_AUDIT = `(() => {
  ${HELPERS}
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const background = (el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const c = parse(getComputedStyle(node).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const disabled = (el) => el.closest(":disabled, [aria-disabled=true]") !== null;
  const problems = [];
  const checked = new Set();
  const candidates = [...document.querySelectorAll("body *")].filter((el) =>
    ["INPUT", "SELECT", "TEXTAREA", "BUTTON"].includes(el.tagName) ||
    [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== ""));
  for (const el of candidates) {
    if (checked.has(el) || !visible(el) || disabled(el)) continue;
    if (el.closest("[aria-hidden=true], .sr-only, noscript, option")) continue;
    checked.add(el);
    const s = getComputedStyle(el);
    const color = parse(s.color);
    if (!color) continue;
    const bg = background(el);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
    const want = large ? 3 : 4.5;
    const got = ratio(over(color, bg), bg);
    if (got < want) {
      problems.push(describe(el) + ": contrast " + got.toFixed(2) + " < " + want + " (" + s.color + " on rgb(" +
        [bg.r, bg.g, bg.b].map(Math.round).join(", ") + "))");
    }
  }
  return problems;
})()`;

export const OVERFLOW_AUDIT = "document.documentElement.scrollWidth - window.innerWidth";
