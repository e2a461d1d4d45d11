/**
 * Static scan of a skill before it is installed (and again by `hermes skills audit`). Every text
 * file is read line by line against the patterns in scan-patterns.ts; markdown and other prose also
 * go through the prompt-injection scanner of knowledge/threats.ts; binaries are checked by content.
 * Every finding names its file and line (0 for whole-file findings such as a binary).
 *
 * Verdict: any `critical` finding makes the skill `dangerous` (never installed, whatever the flags),
 * any `high` one `caution` (installed after --force or a yes on a terminal), otherwise `safe`.
 * Scripts also get a whole-file audit (script-audit.ts) that follows values across lines: fetched
 * code reaching eval, secrets reaching the network, reverse shells split over lines.
 * The scan never executes anything and never throws for file content.
 */
import { extname } from "node:path";
import { scanThreats, type ThreatScope } from "../../threats.js";
import { isBinaryContent } from "./bundle.js";
import {
  EVERYWHERE,
  type LinePattern,
  matches,
  SCRIPT_ONLY,
  type ScanFinding,
  type Severity,
  secretOnlyInHeader,
  type Verdict,
} from "./scan-patterns.js";
import { auditScript } from "./script-audit.js";

export type { ScanFinding, Severity, Verdict } from "./scan-patterns.js";

export interface ScanReport {
  verdict: Verdict;
  findings: ScanFinding[];
}

const SCRIPT_EXTENSIONS = new Set([
  ".sh",
  ".bash",
  ".zsh",
  ".fish",
  ".ksh",
  ".py",
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
  ".rb",
  ".pl",
  ".php",
  ".ps1",
  ".bat",
  ".cmd",
  ".lua",
]);
const PROSE_EXTENSIONS = new Set([".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc", ""]);
/** Magic numbers of executables: ELF, PE, Mach-O (both byte orders, fat), WebAssembly. */
const EXECUTABLE_MAGIC = [
  "7f454c46",
  "4d5a",
  "feedface",
  "feedfacf",
  "cefaedfe",
  "cffaedfe",
  "cafebabe",
  "0061736d",
];
const EXECUTABLE_EXTENSIONS = new Set([
  ".exe",
  ".dll",
  ".so",
  ".dylib",
  ".bin",
  ".msi",
  ".dmg",
  ".deb",
  ".rpm",
  ".app",
  ".com",
  ".jar",
  ".apk",
  ".scr",
  ".wasm",
]);
/** Zero-width and bidirectional controls that hide text from a reader. */
const INVISIBLE = /[\u200B-\u200D\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069]/gu;
const PICTOGRAPH = /\p{Extended_Pictographic}|\p{Emoji_Modifier}|\uFE0F/u;
const MAX_PER_PATTERN = 5;
/** Threat ids the line patterns judge more precisely in scripts (header use of API keys). */
const SCRIPT_HANDLED_THREATS = new Set(["exfil_curl", "read_secret_files", "pipe_secrets_out"]);

/** Scans a bundle's files. An empty map is safe. */
export function scanSkillBundle(files: ReadonlyMap<string, Buffer>): ScanReport {
  const findings: ScanFinding[] = [];
  for (const [file, content] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    findings.push(...scanFile(file, content));
  }
  return { verdict: verdictOf(findings), findings };
}

export function verdictOf(findings: readonly ScanFinding[]): Verdict {
  if (findings.some((f) => f.severity === "critical")) return "dangerous";
  if (findings.some((f) => f.severity === "high")) return "caution";
  return "safe";
}

/** Findings for one file. */
export function scanFile(file: string, content: Buffer): ScanFinding[] {
  if (isBinaryContent(file, content)) return scanBinary(file, content);
  const text = content.toString("utf8").replace(/^\uFEFF/, "");
  const lines = text.split(/\r\n|\n|\r/);
  const ext = extname(file).toLowerCase();
  const script = file.startsWith("scripts/") || SCRIPT_EXTENSIONS.has(ext) || text.startsWith("#!");
  const prose = !script && (PROSE_EXTENSIONS.has(ext) || file === "SKILL.md");
  const findings: ScanFinding[] = [];
  const add = (line: number, id: string, severity: Severity, category: string, description: string) => {
    findings.push({ file, line, id, severity, category, description, match: excerpt(lines[line - 1] ?? "") });
  };
  const patterns: LinePattern[] = script ? [...EVERYWHERE, ...SCRIPT_ONLY] : [...EVERYWHERE];
  const logical = logicalLines(lines, script);
  for (const pattern of patterns) {
    let hits = 0;
    for (let i = 0; i < logical.length && hits < MAX_PER_PATTERN; i++) {
      const entry = logical[i];
      if (entry && matches(pattern, entry.text)) {
        add(entry.line, pattern.id, pattern.severity, pattern.category, pattern.description);
        hits++;
      }
    }
  }
  findings.push(...invisibleCharacters(file, lines));
  findings.push(...threatFindings(file, lines, prose));
  if (script) findings.push(...auditScript(file, text));
  return findings.sort((a, b) => a.line - b.line);
}

/**
 * Commands continued over several lines joined into one, so `curl … \` + `| sh` is judged as the
 * single command it is: a trailing backslash everywhere, and in scripts also a trailing pipe or
 * `&&` (in markdown a trailing `|` ends a table row). Each keeps the number of its first line.
 */
function logicalLines(lines: readonly string[], script: boolean): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  let current: { text: string; line: number } | undefined;
  lines.forEach((raw, i) => {
    const text = current ? `${current.text} ${raw.trim()}` : raw;
    const line = current?.line ?? i + 1;
    const continues = i < lines.length - 1 && (/\\$/.test(raw) || (script && /(?:\||&&)\s*$/.test(raw)));
    if (continues) current = { text: text.replace(/\\$/, ""), line };
    else {
      out.push({ text, line });
      current = undefined;
    }
  });
  return out;
}

function scanBinary(file: string, content: Buffer): ScanFinding[] {
  const magic = content.subarray(0, 4).toString("hex");
  const executable =
    EXECUTABLE_MAGIC.some((m) => magic.startsWith(m)) ||
    EXECUTABLE_EXTENSIONS.has(extname(file).toLowerCase());
  const base = { file, line: 0, match: "" };
  if (executable) {
    return [
      {
        ...base,
        id: "binary_executable",
        severity: "high",
        category: "binary",
        description: "ships a compiled executable or library, which cannot be reviewed",
      },
    ];
  }
  if (!file.startsWith("assets/")) {
    return [
      {
        ...base,
        id: "binary_outside_assets",
        severity: "high",
        category: "binary",
        description: "holds a binary file outside assets/",
      },
    ];
  }
  return [{ ...base, id: "binary_asset", severity: "low", category: "binary", description: "binary asset" }];
}

/** Invisible characters, one finding per line; a zero-width joiner inside an emoji sequence is fine. */
function invisibleCharacters(file: string, lines: readonly string[]): ScanFinding[] {
  const out: ScanFinding[] = [];
  lines.forEach((line, i) => {
    for (const m of line.matchAll(INVISIBLE)) {
      const ch = m[0];
      const at = m.index ?? 0;
      if (
        ch === "\u200D" &&
        PICTOGRAPH.test(line.slice(Math.max(0, at - 2), at)) &&
        PICTOGRAPH.test(line.slice(at + 1, at + 3))
      ) {
        continue;
      }
      const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
      out.push({
        file,
        line: i + 1,
        id: "invisible_unicode",
        severity: "critical",
        category: "injection",
        description: `contains an invisible character (${code}) that can hide text from a reader`,
        match: excerpt(
          line.replace(INVISIBLE, (c) => `<U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}>`),
        ),
      });
      return;
    }
  });
  return out;
}

/**
 * Prompt-injection and exfiltration findings from threats.ts. Prose is checked with the `context`
 * scope (critical) and the `strict` scope on top (high); other text files with `context` only.
 * Long files are read in overlapping windows, since the threat scanner reads 64 KiB at a time.
 */
function threatFindings(file: string, lines: readonly string[], prose: boolean): ScanFinding[] {
  const out: ScanFinding[] = [];
  const seen = new Set<string>();
  for (const window of windows(lines)) {
    const slice = lines.slice(window.start, window.end);
    const text = slice.join("\n");
    const context = new Set(ids(text, "context"));
    const strictOnly = prose ? ids(text, "strict").filter((id) => !context.has(id)) : [];
    const found: Array<[string, ThreatScope]> = [
      ...[...context].map((id): [string, ThreatScope] => [id, "context"]),
      ...strictOnly.map((id): [string, ThreatScope] => [id, "strict"]),
    ];
    for (const [id, scope] of found) {
      if (seen.has(id) || (!prose && SCRIPT_HANDLED_THREATS.has(id))) continue;
      seen.add(id);
      const at = locate(slice, id, scope);
      const line = lines[window.start + at - 1] ?? "";
      const description = scanThreats(text, scope).find((f) => f.id === id)?.description ?? id;
      let severity: Severity = scope === "context" ? "critical" : "high";
      // An API key in an Authorization header of a documented curl call is how APIs are used;
      // the user is asked, not refused.
      if (id === "exfil_curl" && secretOnlyInHeader(line)) severity = "high";
      out.push({
        file,
        line: window.start + at,
        id,
        severity,
        category: "injection",
        description,
        match: excerpt(line),
      });
    }
  }
  return out;
}

function ids(text: string, scope: ThreatScope): string[] {
  return scanThreats(text, scope)
    .map((f) => f.id)
    .filter((id) => !id.startsWith("invisible_unicode"));
}

/** The first line (1-based, within `lines`) at which `id` is found: the shortest prefix that has it. */
function locate(lines: readonly string[], id: string, scope: ThreatScope): number {
  let lo = 1;
  let hi = lines.length;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (ids(lines.slice(0, mid).join("\n"), scope).includes(id)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const WINDOW_CHARS = 60_000;
const OVERLAP_LINES = 20;

function windows(lines: readonly string[]): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let size = 0;
    while (end < lines.length && (end === start || size + (lines[end]?.length ?? 0) + 1 <= WINDOW_CHARS)) {
      size += (lines[end]?.length ?? 0) + 1;
      end++;
    }
    out.push({ start, end });
    if (end >= lines.length) break;
    start = Math.max(start + 1, end - OVERLAP_LINES);
  }
  return out;
}

function excerpt(line: string): string {
  const t = line.trim();
  return t.length <= 120 ? t : `${t.slice(0, 117)}...`;
}

/** A plain-text report: one line per finding, most severe first. */
export function formatFindings(findings: readonly ScanFinding[]): string[] {
  const order: Record<Severity, number> = { critical: 0, high: 1, medium: 2, low: 3 };
  return [...findings]
    .sort((a, b) => order[a.severity] - order[b.severity] || a.file.localeCompare(b.file) || a.line - b.line)
    .map((f) => {
      const where = f.line > 0 ? `${f.file}:${f.line}` : f.file;
      return `  ${f.severity.toUpperCase().padEnd(8)} ${where}  ${f.description} [${f.id}]${f.match ? `\n           ${f.match}` : ""}`;
    });
}
