/**
 * Shell-style globs as used by ripgrep's `--glob` and .gitignore-like filters: `*` (within a path
 * segment), `**` (across segments), `?`, `[abc]` / `[!abc]`, `{a,b}` and backslash escapes.
 * Node 20's `path.matchesGlob` is experimental, so this small converter is used instead.
 */

/** Compiles a glob to an anchored RegExp over `/`-separated paths. Never throws on odd input. */
export function globToRegExp(glob: string, flags = ""): RegExp {
  return new RegExp(`^${globSource(glob)}$`, flags);
}

function globSource(glob: string): string {
  let out = "";
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "\\") {
      const next = glob[i + 1];
      if (next !== undefined) {
        out += escapeRegExp(next);
        i++;
      } else {
        out += "\\\\";
      }
    } else if (c === "*") {
      if (glob[i + 1] === "*") {
        const atSegmentStart = i === 0 || glob[i - 1] === "/";
        let j = i + 2;
        while (glob[j] === "*") j++;
        if (atSegmentStart && glob[j] === "/") {
          out += "(?:[^/]*/)*";
          i = j;
        } else {
          out += ".*";
          i = j - 1;
        }
      } else {
        out += "[^/]*";
      }
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = findClassEnd(glob, i);
      if (close === -1) {
        out += "\\[";
      } else {
        let body = glob.slice(i + 1, close);
        let negate = false;
        if (body.startsWith("!") || body.startsWith("^")) {
          negate = true;
          body = body.slice(1);
        }
        const escaped = body.replace(/[\\\]^]/g, (m) => `\\${m}`);
        out += negate ? `[^/${escaped}]` : `[${escaped}]`;
        i = close;
      }
    } else if (c === "{") {
      braceDepth++;
      out += "(?:";
    } else if (c === "}" && braceDepth > 0) {
      braceDepth--;
      out += ")";
    } else if (c === "," && braceDepth > 0) {
      out += "|";
    } else {
      out += escapeRegExp(c);
    }
  }
  // An unclosed "{" is a literal in most shells; closing the groups keeps the RegExp valid.
  return out + ")".repeat(braceDepth);
}

function findClassEnd(glob: string, open: number): number {
  let j = open + 1;
  if (glob[j] === "!" || glob[j] === "^") j++;
  // A "]" right after the opening bracket is a member, not the end.
  if (glob[j] === "]") j++;
  for (; j < glob.length; j++) {
    if (glob[j] === "]") return j;
    if (glob[j] === "/") return -1;
  }
  return -1;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * A predicate for `/`-separated relative paths. A glob without a `/` matches the last segment (the
 * file name) at any depth, as ripgrep and .gitignore treat it; one with a `/` matches the whole
 * relative path (a leading `/` or `./` anchors it to the root).
 */
export function globMatcher(
  glob: string,
  options: { caseInsensitive?: boolean } = {},
): (relPath: string) => boolean {
  const flags = options.caseInsensitive ? "i" : "";
  const pattern = glob.replace(/^\.?\//, "");
  const re = globToRegExp(pattern, flags);
  const byName = !pattern.includes("/");
  return (relPath) => {
    const path = relPath.replaceAll("\\", "/").replace(/^\.\//, "");
    return re.test(byName ? path.slice(path.lastIndexOf("/") + 1) : path);
  };
}

/** One-off form of {@link globMatcher}; compile once with `globMatcher` when testing many paths. */
export function matchesGlob(
  glob: string,
  relPath: string,
  options: { caseInsensitive?: boolean } = {},
): boolean {
  return globMatcher(glob, options)(relPath);
}
