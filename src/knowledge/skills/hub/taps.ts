/**
 * GitHub taps: extra repositories the `github` source searches, kept in
 * `skills/.hub/taps.json` as upstream stores them (`{"taps": [{"repo": "owner/name", "path":
 * "skills/"}]}`). A tap is only ever a GitHub `owner/name` (a `https://github.com/owner/name` URL
 * is accepted and reduced to that): never a file:// URL, a local path, another host, or anything
 * starting with `-`.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { atomicWriteFile } from "../../../util/atomic-write.js";
import { withFileLock } from "../../../util/file-lock.js";
import { HubError, isRecord, safeRelPath } from "./bundle.js";
import { isRepoName } from "./github.js";
import { hubDir } from "./lock.js";

export interface Tap {
  repo: string;
  path: string;
}

/** The taps every home searches, as upstream ships them. */
export const DEFAULT_TAPS: readonly Tap[] = [
  { repo: "openai/skills", path: "skills/" },
  { repo: "anthropics/skills", path: "skills/" },
  { repo: "huggingface/skills", path: "skills/" },
];

export const tapsPath = (home: string): string => join(hubDir(home), "taps.json");

/** Normalises what the user typed into a tap; throws a usage error for anything that is not one. */
export function parseTap(input: string, path = "skills/"): Tap {
  const value = input.trim();
  let repo = value;
  const url = /^https:\/\/github\.com\/([^/?#]+\/[^/?#]+?)(?:\.git)?\/?$/i.exec(value);
  if (url?.[1]) repo = url[1];
  if (value.startsWith("-") || !isRepoName(repo)) {
    throw new HubError(
      `"${input}" is not a GitHub repository; a tap is owner/name (or https://github.com/owner/name), never a path or another kind of URL.`,
      2,
    );
  }
  const cleanPath = path.trim() === "" ? "" : safeRelPath(path);
  if (cleanPath === undefined || path.trim().startsWith("-")) {
    throw new HubError(`"${path}" is not a folder inside the repository.`, 2);
  }
  return { repo, path: cleanPath ? `${cleanPath}/` : "" };
}

/** The home's own taps (defaults not included). A malformed file reads as an error, never as empty. */
export async function readTaps(home: string): Promise<Tap[]> {
  let text: string;
  try {
    text = await readFile(tapsPath(home), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, "") || "{}");
  } catch {
    throw new HubError(`${tapsPath(home)} is not valid JSON; fix or move it.`);
  }
  const list = isRecord(data) && Array.isArray(data["taps"]) ? data["taps"] : [];
  const taps: Tap[] = [];
  for (const item of list) {
    if (!isRecord(item) || typeof item["repo"] !== "string") continue;
    try {
      taps.push(parseTap(item["repo"], typeof item["path"] === "string" ? item["path"] : ""));
    } catch {
      // A hand-edited entry that is not a GitHub repository is ignored, never fetched.
    }
  }
  return taps;
}

async function writeTaps(home: string, change: (taps: Tap[]) => boolean): Promise<boolean> {
  await mkdir(hubDir(home), { recursive: true });
  return withFileLock(tapsPath(home), async () => {
    const taps = await readTaps(home);
    const changed = change(taps);
    if (changed) await atomicWriteFile(tapsPath(home), `${JSON.stringify({ taps }, null, 2)}\n`);
    return changed;
  });
}

/** Adds a tap; false when that repository is already a tap. */
export async function addTap(home: string, tap: Tap): Promise<boolean> {
  return writeTaps(home, (taps) => {
    if (taps.some((t) => t.repo.toLowerCase() === tap.repo.toLowerCase())) return false;
    taps.push(tap);
    return true;
  });
}

/** Removes a tap; false when it was not there. */
export async function removeTap(home: string, repo: string): Promise<boolean> {
  return writeTaps(home, (taps) => {
    const at = taps.findIndex((t) => t.repo.toLowerCase() === repo.toLowerCase());
    if (at < 0) return false;
    taps.splice(at, 1);
    return true;
  });
}

/** Default taps plus the home's own, without duplicates. */
export async function allTaps(home: string | undefined): Promise<Tap[]> {
  const own = home ? await readTaps(home) : [];
  const seen = new Set<string>();
  return [...DEFAULT_TAPS, ...own].filter((t) => {
    const key = `${t.repo.toLowerCase()}:${t.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
