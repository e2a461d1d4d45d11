/**
 * Repairs the tool-call argument JSON that models produce when they slip: raw control characters
 * inside strings, trailing commas, unclosed or excess braces, code fences, single surrounding
 * quotes. Passes run in order from least to most invasive; the first that parses wins.
 *
 * Which repairs are harmless and which mean the arguments were cut off (`truncated`):
 * - harmless: a code fence around the JSON, raw newlines/tabs/control characters inside a string
 *   (escaped, the text is unchanged), a comma before `}` or `]`, an excess closing bracket, a
 *   double-encoded object. The value is what the model meant.
 * - truncated: the value only parses after closing a string, object or array left open at the
 *   end (or dropping a dangling comma there). That is how output cut off at the token limit looks
 *   (`{"path": "a.txt", "content": "abc`): the last value is shorter than the model meant, so the
 *   caller must not act on it.
 */

export interface RepairResult {
  value: Record<string, unknown>;
  /** Which pass produced the value: "ok" when the input parsed as-is, "empty" for the `{}` fallback. */
  pass: "ok" | "control-chars" | "trailing-commas" | "balance" | "fences" | "empty";
  /** True when nothing could be recovered and `{}` was returned. */
  gaveUp: boolean;
  /**
   * True when the value only parsed after closing a string, object or array left open at the end:
   * the arguments were cut off and the value is not what the model meant. Never true when
   * `pass` is "ok".
   */
  truncated: boolean;
}

type Pass = { name: RepairResult["pass"]; fix: (s: string) => string };

const passes: Pass[] = [
  { name: "fences", fix: stripFences },
  { name: "control-chars", fix: (s) => escapeControlChars(stripFences(s)) },
  { name: "trailing-commas", fix: (s) => removeTrailingCommas(escapeControlChars(stripFences(s))) },
  { name: "balance", fix: (s) => balanceBrackets(removeTrailingCommas(escapeControlChars(stripFences(s)))) },
];

/** Parses model-written arguments into an object, repairing common damage. Never throws. */
export function repairToolArguments(raw: string | null | undefined): RepairResult {
  const text = (raw ?? "").trim();
  if (text === "") return { value: {}, pass: "ok", gaveUp: false, truncated: false };
  const direct = tryObject(text);
  if (direct) return { value: direct, pass: "ok", gaveUp: false, truncated: false };
  for (const pass of passes) {
    const value = tryObject(pass.fix(text));
    if (value) {
      const truncated = pass.name === "balance" && endsOpen(escapeControlChars(stripFences(text)));
      return { value, pass: pass.name, gaveUp: false, truncated };
    }
  }
  // Nothing parsed: whether it was cut off still matters to the caller (an open string at the end).
  return {
    value: {},
    pass: "empty",
    gaveUp: true,
    truncated: endsOpen(escapeControlChars(stripFences(text))),
  };
}

/**
 * True when `text` ends inside a string, or with an object or array still open, or on a dangling
 * comma: what JSON cut off mid-way looks like. Excess closers do not count.
 */
export function endsOpen(text: string): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let lastSignificant = "";
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if ((ch === "}" || ch === "]") && depth > 0) depth--;
    if (!/\s/.test(ch)) lastSignificant = ch;
  }
  return inString || depth > 0 || lastSignificant === "," || lastSignificant === ":";
}

function tryObject(text: string): Record<string, unknown> | null {
  try {
    let parsed: unknown = JSON.parse(text);
    // Some models double-encode: the arguments are a JSON string holding the JSON object.
    if (typeof parsed === "string") parsed = JSON.parse(parsed);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // fall through: not parseable as-is
  }
  return null;
}

function stripFences(text: string): string {
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(text.trim());
  return (fenced?.[1] ?? text).trim();
}

/** Escapes raw newlines, tabs and other control characters that appear inside string literals. */
function escapeControlChars(text: string): string {
  let out = "";
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) {
        escaped = false;
        out += ch;
        continue;
      }
      if (ch === "\\") {
        escaped = true;
        out += ch;
        continue;
      }
      if (ch === '"') {
        inString = false;
        out += ch;
        continue;
      }
      const code = ch.charCodeAt(0);
      if (code < 0x20) {
        out +=
          ch === "\n"
            ? "\\n"
            : ch === "\r"
              ? "\\r"
              : ch === "\t"
                ? "\\t"
                : `\\u${code.toString(16).padStart(4, "0")}`;
        continue;
      }
      out += ch;
    } else {
      if (ch === '"') inString = true;
      out += ch;
    }
  }
  return out;
}

function removeTrailingCommas(text: string): string {
  return mapOutsideStrings(text, (chunk, last) => {
    const fixed = chunk.replace(/,(\s*[}\]])/g, "$1");
    return last ? fixed.replace(/,\s*$/, "") : fixed;
  });
}

/** Closes unclosed strings, brackets and braces; drops excess closers. */
function balanceBrackets(text: string): string {
  const stack: string[] = [];
  let out = "";
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      out += ch;
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === "{" || ch === "[") {
      stack.push(ch === "{" ? "}" : "]");
      out += ch;
    } else if (ch === "}" || ch === "]") {
      if (stack[stack.length - 1] === ch) {
        stack.pop();
        out += ch;
      }
      // An excess or mismatched closer is dropped.
    } else {
      out += ch;
    }
  }
  if (inString) out += '"';
  out = removeTrailingCommas(out);
  while (stack.length > 0) out += stack.pop();
  return out;
}

function mapOutsideStrings(text: string, fn: (chunk: string, last: boolean) => string): string {
  let out = "";
  let chunk = "";
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      out += ch;
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      out += fn(chunk, false) + ch;
      chunk = "";
      inString = true;
    } else {
      chunk += ch;
    }
  }
  return out + fn(chunk, true);
}
