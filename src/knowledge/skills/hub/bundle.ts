/**
 * A skill as the hub moves it around before it lands on disk: a name and a map of relative paths to
 * bytes. This file holds what every source, the scanner and the installer agree on: name and path
 * rules, size limits, the content hash Python Hermes records in `lock.json`, and a small
 * frontmatter reader (the hub needs only name, description and category, and stays independent of
 * the skills core parser).
 */
import { createHash } from "node:crypto";
import { parse as parseYaml } from "yaml";
import { hasBinaryExtension, looksBinary } from "../../../util/binary-file.js";
import type { TrustLevel } from "./trust.js";

/** Where a bundle came from, as recorded in `lock.json` (`source`). */
export type HubSourceKind =
  | "local"
  | "git"
  | "url"
  | "well-known"
  | "official"
  | "github"
  | "skills.sh"
  | "clawhub"
  | "claude-marketplace"
  | "lobehub"
  | "browse-sh";

/** A fetched skill: what the installer quarantines, scans and installs. */
export interface SkillBundle {
  /** Validated skill name (frontmatter `name`, else the folder or URL slug). */
  name: string;
  /** Relative POSIX path → content; always holds `SKILL.md`. */
  files: Map<string, Buffer>;
  source: HubSourceKind;
  /** What `check` re-fetches from: a path, a git spec, a URL or a `well-known:` identifier. */
  identifier: string;
  /** Source details kept in the lock entry's `metadata` (git commit, index URL, …). */
  metadata: Record<string, unknown>;
  /** Non-fatal notes for the user (skipped symlinks, files a URL install could not fetch). */
  warnings: string[];
  /** Trust of the source (see trust.ts); community when absent. */
  trust?: TrustLevel;
}

export class HubError extends Error {
  /** 2: the argument or a local file is wrong (usage); 1: the task failed (network, refusal). */
  readonly exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.name = "HubError";
    this.exitCode = exitCode;
  }
}

/** Limits on what a source may hand the installer. */
export interface BundleLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
  maxFiles: number;
}

export const DEFAULT_LIMITS: BundleLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 8 * 1024 * 1024,
  maxFiles: 200,
};

const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * Returns `name` when it is a safe skill name (1-64 lowercase letters, digits, `-`, `_`, `.`,
 * starting with a letter or digit, no `..`); throws a usage {@link HubError} otherwise.
 */
export function validateSkillName(name: string): string {
  if (NAME_RE.test(name) && !name.includes("..")) return name;
  throw new HubError(
    `"${name}" is not a valid skill name: use 1-64 lowercase letters, digits, "-", "_" or ".", ` +
      "starting with a letter or digit.",
    2,
  );
}

export function isValidSkillName(name: string): boolean {
  return NAME_RE.test(name) && !name.includes("..");
}

/** A category is one or more name-shaped segments joined by `/` (`devops` or `mlops/training`). */
export function validateCategory(category: string): string {
  const parts = category.split("/").filter((p) => p !== "");
  if (parts.length === 0 || parts.length > 4 || !parts.every(isValidSkillName)) {
    throw new HubError(
      `"${category}" is not a valid category: use lowercase folder names like "devops" or "mlops/training".`,
      2,
    );
  }
  return parts.join("/");
}

/**
 * Normalises a bundle-relative path (backslashes to `/`, `.` segments dropped) and refuses absolute
 * paths, `..`, drive letters and colons, and empty segments. Returns undefined when unsafe.
 */
export function safeRelPath(path: string): string | undefined {
  const raw = path.replace(/\\/g, "/").trim();
  if (raw === "" || raw.startsWith("/") || raw.includes("\0")) return undefined;
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || parts.length > 16) return undefined;
  if (parts.some((p) => p === ".." || p.includes(":"))) return undefined;
  return parts.join("/");
}

/** Whether the bytes look like a binary file (by extension or by content). */
export function isBinaryContent(path: string, content: Buffer): boolean {
  return hasBinaryExtension(path) || looksBinary(content.subarray(0, 8192));
}

/**
 * Checks a bundle's files against the limits and the layout rules: safe relative paths, a
 * SKILL.md, binary files only under `assets/`. Throws {@link HubError} (exit 1) naming the file.
 */
export function checkBundleFiles(files: Map<string, Buffer>, limits: BundleLimits = DEFAULT_LIMITS): void {
  if (!files.has("SKILL.md")) throw new HubError("the skill has no SKILL.md at its root.");
  if (files.size > limits.maxFiles) {
    throw new HubError(`the skill has ${files.size} files; the limit is ${limits.maxFiles}.`);
  }
  let total = 0;
  for (const [path, content] of files) {
    if (safeRelPath(path) !== path) throw new HubError(`refused unsafe file path "${path}" in the skill.`);
    if (content.length > limits.maxFileBytes) {
      throw new HubError(
        `${path} is ${formatSize(content.length)}; the limit for one file is ${formatSize(limits.maxFileBytes)}.`,
      );
    }
    total += content.length;
    if (total > limits.maxTotalBytes) {
      throw new HubError(`the skill is larger than ${formatSize(limits.maxTotalBytes)} in total.`);
    }
    if (!path.startsWith("assets/") && isBinaryContent(path, content)) {
      throw new HubError(`${path} is a binary file; binary files are allowed only under assets/.`);
    }
  }
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The content hash Python Hermes records (`bundle_content_hash` / `skills_guard.content_hash`):
 * SHA-256 over each file's POSIX path, a NUL byte and its bytes, in plain string order of the
 * paths, as `sha256:` plus the first 16 hex digits. The same bytes on disk hash the same.
 */
export function contentHash(files: ReadonlyMap<string, Buffer>): string {
  const h = createHash("sha256");
  const normalized = new Map([...files].map(([path, content]) => [path.replace(/\\/g, "/"), content]));
  // Python sorts str by code point; JS's default sort compares UTF-16 units, which differs only for
  // astral characters, so compare code points explicitly.
  for (const path of [...normalized.keys()].sort(compareCodePoints)) {
    h.update(Buffer.from(path, "utf8"));
    h.update(Buffer.from([0]));
    h.update(normalized.get(path) ?? Buffer.alloc(0));
  }
  return `sha256:${h.digest("hex").slice(0, 16)}`;
}

function compareCodePoints(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const x = ca[i]?.codePointAt(0) ?? 0;
    const y = cb[i]?.codePointAt(0) ?? 0;
    if (x !== y) return x - y;
  }
  return ca.length - cb.length;
}

/** The frontmatter fields the hub reads; everything else is ignored here. */
export interface HubFrontmatter {
  name?: string;
  description?: string;
  category?: string;
  tags: string[];
  version?: string;
}

/**
 * Reads the YAML frontmatter of a SKILL.md (`---` … `---` at the top). Returns empty fields when
 * there is none or it does not parse; never throws.
 */
export function readFrontmatter(text: string): HubFrontmatter {
  const src = text.replace(/^\uFEFF/, "");
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(src);
  if (!match) return { tags: [] };
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? "");
  } catch {
    return { tags: [] };
  }
  if (!isRecord(data)) return { tags: [] };
  const hermes =
    isRecord(data["metadata"]) && isRecord(data["metadata"]["hermes"]) ? data["metadata"]["hermes"] : {};
  const str = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const out: HubFrontmatter = { tags: list(data["tags"]).length ? list(data["tags"]) : list(hermes["tags"]) };
  const name = str(data["name"]);
  const description = str(data["description"]);
  const category = str(data["category"]) ?? str(hermes["category"]);
  const version = typeof data["version"] === "number" ? String(data["version"]) : str(data["version"]);
  if (name) out.name = name;
  if (description) out.description = description;
  if (category) out.category = category;
  if (version) out.version = version;
  return out;
}

/** The markdown after the frontmatter. */
export function stripFrontmatter(text: string): string {
  return text.replace(/^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/, "");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The skill name for a bundle: frontmatter `name` when valid, else `fallback` (a folder name or URL
 * slug) lowercased when valid. Throws a usage error when neither works, so the user passes --name.
 */
export function bundleName(skillMd: Buffer, fallback: string): string {
  const fm = readFrontmatter(skillMd.toString("utf8"));
  if (fm.name && isValidSkillName(fm.name)) return fm.name;
  const slug = fallback.toLowerCase();
  if (isValidSkillName(slug) && slug !== "skill" && slug !== "skill.md") return slug;
  throw new HubError(
    `cannot tell the skill's name: its frontmatter name is ${fm.name ? `"${fm.name}", which is not valid` : "missing"}; pass --name NAME.`,
    2,
  );
}
