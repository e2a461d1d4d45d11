/**
 * HTTP sources: a direct URL to a SKILL.md, and the agentskills.io well-known index
 * (`<site>/.well-known/skills/index.json`, shaped `{"skills": [{"name", "description",
 * "files": ["SKILL.md", "references/api.md"]}]}`), whose files live at
 * `<site>/.well-known/skills/<name>/<file>`. Installed well-known skills are identified as
 * `well-known:<site>/.well-known/skills/<name>`, as Python Hermes records them.
 */
import {
  type BundleLimits,
  bundleName,
  checkBundleFiles,
  DEFAULT_LIMITS,
  HubError,
  isRecord,
  isValidSkillName,
  type SkillBundle,
  safeRelPath,
} from "./bundle.js";
import { type AddressGuard, httpGet, type LookupFn } from "./http.js";

export interface RemoteOptions {
  limits?: BundleLimits;
  timeoutMs?: number;
  fetch?: typeof fetch;
  log?: (message: string) => void;
  /**
   * The URL came from a chat (or anything but the user at this machine's terminal): it may not
   * name a private or loopback address, even literally. Names are resolved and checked either way.
   */
  remoteRequest?: boolean;
  /** Name resolution for the private-address check; tests inject one. */
  lookup?: LookupFn;
}

function guardOf(options: RemoteOptions): AddressGuard {
  return {
    typedLocally: options.remoteRequest !== true,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
}

const WELL_KNOWN = "/.well-known/skills";
const MAX_INDEX_BYTES = 2 * 1024 * 1024;

export interface IndexEntry {
  name: string;
  description: string;
  files: string[];
}

export interface SkillsIndex {
  indexUrl: string;
  /** The index URL without `/index.json`: skill files live at `<baseUrl>/<name>/<file>`. */
  baseUrl: string;
  skills: IndexEntry[];
  /** Entries dropped because they were malformed, for a warning. */
  skipped: number;
}

/** The index URL for a site root, a URL under `/.well-known/skills/`, or the index URL itself. */
export function indexUrlFor(url: string): string {
  const clean = url.trim().replace(/#.*$/, "");
  if (/\/index\.json$/.test(clean)) return clean;
  const at = clean.indexOf(`${WELL_KNOWN}/`);
  if (at >= 0) return `${clean.slice(0, at)}${WELL_KNOWN}/index.json`;
  return `${clean.replace(/\/+$/, "").replace(/\/\.well-known\/skills$/, "")}${WELL_KNOWN}/index.json`;
}

/** Parses `well-known:<base>/<name>` into the index URL and the skill name. */
export function parseWellKnownIdentifier(identifier: string): { indexUrl: string; name: string } {
  const raw = identifier
    .replace(/^well-known:/, "")
    .replace(/\/SKILL\.md$/, "")
    .replace(/\/+$/, "");
  const slash = raw.lastIndexOf("/");
  const name = raw.slice(slash + 1);
  const base = raw.slice(0, slash);
  if (slash < 0 || !/^https?:\/\//.test(base) || !base.endsWith(WELL_KNOWN)) {
    throw new HubError(
      `"${identifier}" is not a well-known skill identifier (well-known:https://site${WELL_KNOWN}/NAME).`,
      2,
    );
  }
  return { indexUrl: `${base}/index.json`, name };
}

export function wellKnownIdentifier(baseUrl: string, name: string): string {
  return `well-known:${baseUrl.replace(/\/+$/, "")}/${name}`;
}

/** Fetches and validates a well-known index. Throws {@link HubError} when it is missing or malformed. */
export async function fetchSkillsIndex(indexUrl: string, options: RemoteOptions = {}): Promise<SkillsIndex> {
  const res = await httpGet(indexUrl, {
    maxBytes: MAX_INDEX_BYTES,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    guard: guardOf(options),
  });
  if (res.status !== 200) {
    const hint =
      res.status === 404
        ? " For a git repository, pass --git URL; for a single skill, the URL of its SKILL.md."
        : "";
    throw new HubError(`no skills index at ${indexUrl} (HTTP ${res.status}).${hint}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(res.body.toString("utf8").replace(/^\uFEFF/, ""));
  } catch {
    throw new HubError(`${indexUrl} is not valid JSON.`);
  }
  const list = isRecord(data) ? data["skills"] : undefined;
  if (!Array.isArray(list)) throw new HubError(`${indexUrl} has no "skills" list.`);
  const skills: IndexEntry[] = [];
  let skipped = 0;
  for (const item of list) {
    if (!isRecord(item) || typeof item["name"] !== "string" || !isValidSkillName(item["name"])) {
      skipped++;
      continue;
    }
    const files = Array.isArray(item["files"])
      ? item["files"].filter((f): f is string => typeof f === "string" && f !== "")
      : [];
    skills.push({
      name: item["name"],
      description: typeof item["description"] === "string" ? item["description"] : "",
      files: files.length > 0 ? files : ["SKILL.md"],
    });
  }
  const baseUrl = indexUrl.replace(/\/index\.json$/, "");
  return { indexUrl, baseUrl, skills, skipped };
}

/**
 * Installs-to-be from a well-known index: the entry named `name` (or the only entry), every file it
 * lists. A listed path that is absolute or climbs out (`../`) refuses the whole skill.
 */
export async function fetchWellKnownSkill(
  indexUrl: string,
  name: string | undefined,
  options: RemoteOptions = {},
): Promise<SkillBundle> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  options.log?.(`Reading ${indexUrl} …`);
  const index = await fetchSkillsIndex(indexUrl, options);
  const entry = pickEntry(index, name);
  if (entry.files.length > limits.maxFiles) {
    throw new HubError(`${entry.name} lists ${entry.files.length} files; the limit is ${limits.maxFiles}.`);
  }
  const paths: string[] = [];
  for (const file of entry.files) {
    const safe = safeRelPath(file);
    if (!safe || safe !== file.replace(/^\.\//, "")) {
      throw new HubError(`refused ${entry.name}: the index lists an unsafe file path "${file}".`);
    }
    if (!paths.includes(safe)) paths.push(safe);
  }
  if (!paths.includes("SKILL.md"))
    throw new HubError(`refused ${entry.name}: the index does not list its SKILL.md.`);
  const files = new Map<string, Buffer>();
  let total = 0;
  const skillUrl = `${index.baseUrl}/${encodeURIComponent(entry.name)}`;
  for (const path of paths) {
    const url = `${skillUrl}/${path.split("/").map(encodeURIComponent).join("/")}`;
    const res = await httpGet(url, {
      maxBytes: limits.maxFileBytes,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      guard: guardOf(options),
    });
    if (res.status !== 200) throw new HubError(`could not fetch ${url} (HTTP ${res.status}).`);
    total += res.body.length;
    if (total > limits.maxTotalBytes) throw new HubError(`${entry.name} is larger than the size limit.`);
    files.set(path, res.body);
  }
  checkBundleFiles(files, limits);
  return {
    name: entry.name,
    files,
    source: "well-known",
    identifier: wellKnownIdentifier(index.baseUrl, entry.name),
    metadata: { index_url: index.indexUrl, base_url: index.baseUrl, endpoint: skillUrl, files: paths },
    warnings: [],
  };
}

function pickEntry(index: SkillsIndex, name: string | undefined): IndexEntry {
  if (name !== undefined) {
    const found = index.skills.find((s) => s.name === name);
    if (found) return found;
    if (index.skills.length !== 1) {
      throw new HubError(`${index.indexUrl} lists no skill named "${name}".${listing(index)}`, 2);
    }
  }
  const only = index.skills.length === 1 ? index.skills[0] : undefined;
  if (only) return only;
  if (index.skills.length === 0) throw new HubError(`${index.indexUrl} lists no skills.`);
  throw new HubError(
    `${index.indexUrl} lists ${index.skills.length} skills; pick one with --name NAME:${listing(index)}`,
    2,
  );
}

function listing(index: SkillsIndex): string {
  if (index.skills.length === 0) return "";
  return `\n${index.skills.map((s) => `  ${s.name}${s.description ? ` — ${s.description}` : ""}`).join("\n")}`;
}

/**
 * A SKILL.md fetched from its URL, plus the support files it links (`references/`, `templates/`,
 * `scripts/`, `assets/`), fetched beside it from the same host, as upstream's URL source does: a
 * bare URL cannot list a folder, so only linked files come. A linked file that is missing is named
 * in a warning; one that would come from another host (a redirect) refuses the skill.
 */
export async function fetchUrlSkill(url: string, options: RemoteOptions = {}): Promise<SkillBundle> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  options.log?.(`Fetching ${url} …`);
  const res = await httpGet(url, {
    maxBytes: limits.maxFileBytes,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    guard: guardOf(options),
  });
  if (res.status !== 200) throw new HubError(`could not fetch ${url} (HTTP ${res.status}).`);
  const files = new Map([["SKILL.md", res.body]]);
  const warnings: string[] = [];
  const linked = linkedSupportFiles(res.body.toString("utf8"));
  if (linked.length > limits.maxFiles)
    throw new HubError(`SKILL.md links ${linked.length} files; the limit is ${limits.maxFiles}.`);
  const missing: string[] = [];
  let total = res.body.length;
  for (const rel of linked) {
    const fileUrl = new URL(rel.split("/").map(encodeURIComponent).join("/"), res.url);
    if (fileUrl.host !== new URL(res.url).host)
      throw new HubError(`refused: ${rel} would come from another host.`);
    const file = await httpGet(fileUrl.href, {
      maxBytes: limits.maxFileBytes,
      sameHost: true,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      guard: guardOf(options),
    });
    if (file.status !== 200) {
      missing.push(rel);
      continue;
    }
    total += file.body.length;
    if (total > limits.maxTotalBytes) throw new HubError("the skill is larger than the size limit.");
    files.set(rel, file.body);
  }
  checkBundleFiles(files, limits);
  const path = new URL(res.url).pathname.split("/").filter(Boolean);
  const last = path[path.length - 1] ?? "";
  const slug = /^skill\.md$/i.test(last) ? (path[path.length - 2] ?? "") : last.replace(/\.md$/i, "");
  if (missing.length > 0) {
    warnings.push(
      `SKILL.md links ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", …" : ""}, which could not be fetched beside it; ` +
        "install from the skill's git repository or a well-known index to get them.",
    );
  }
  return {
    name: bundleName(res.body, decodeURIComponent(slug)),
    files,
    source: "url",
    identifier: url,
    metadata: { url, source_url: url },
    warnings,
  };
}

/** Relative links into references/, templates/, scripts/ or assets/ found in a SKILL.md. */
export function linkedSupportFiles(markdown: string): string[] {
  const found = new Set<string>();
  for (const m of markdown.matchAll(/(?:^|[\s(`"'])((?:references|templates|scripts|assets)\/[\w./-]+)/g)) {
    const safe = safeRelPath((m[1] ?? "").replace(/[.,;:]+$/, ""));
    if (safe) found.add(safe);
  }
  return [...found].sort();
}
