/**
 * Consent for shell hooks: `<home>/shell-hooks-allowlist.json`, in upstream's shape
 * (`{"approvals": [{event, command, approved_at, script_mtime_at_approval}]}`) plus
 * `script_sha256`, the content of the hook's script when it was approved.
 *
 * An approval is for one event and the exact command text, so a command edited in config.yaml is
 * a new hook and is asked about again. When the command names a script by an absolute path (or
 * `~/...`), the script's content is part of the approval too: a script edited after it was
 * approved is asked about again. (An entry written by Python Hermes has no hash and is honoured
 * by its command alone, as Python Hermes does.)
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { splitCommand } from "./run.js";

export const ALLOWLIST_FILE = "shell-hooks-allowlist.json";
const MAX_HASHED_BYTES = 16 * 1024 * 1024;
const SCRIPT_EXTENSIONS = [
  ".sh",
  ".bash",
  ".zsh",
  ".fish",
  ".py",
  ".rb",
  ".pl",
  ".lua",
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
];

export interface AllowlistEntry {
  event: string;
  command: string;
  approved_at?: string;
  script_mtime_at_approval?: string | null;
  script_sha256?: string | null;
  [key: string]: unknown;
}

export interface ScriptFingerprint {
  /** The script the command runs, when it names one by an absolute path. */
  path?: string;
  sha256?: string;
  mtime?: string;
}

export type ConsentState =
  | { state: "approved"; entry: AllowlistEntry }
  | { state: "new" }
  /** Approved once, but the script changed since. */
  | { state: "changed"; entry: AllowlistEntry };

export function allowlistPath(home: string): string {
  return join(home, ALLOWLIST_FILE);
}

/** The file's approvals; a missing or unreadable file has none (never throws). */
export function loadApprovals(home: string): AllowlistEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(allowlistPath(home), "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return [];
  }
  const list = (raw as { approvals?: unknown } | null)?.approvals;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (e): e is AllowlistEntry =>
      typeof e === "object" && e !== null && typeof e.event === "string" && typeof e.command === "string",
  );
}

/**
 * The script a command runs: the first word with a script extension, else the first word that looks
 * like a path, else the first word (upstream's rule); fingerprinted only when absolute after `~`.
 */
export function scriptFingerprint(command: string, homeDir: string | undefined): ScriptFingerprint {
  let words: string[];
  try {
    words = splitCommand(command, homeDir);
  } catch {
    return {};
  }
  const lower = (w: string) => w.toLowerCase();
  const path =
    words.find((w) => SCRIPT_EXTENSIONS.some((ext) => lower(w).endsWith(ext))) ??
    words.find((w) => w.includes("/")) ??
    words[0];
  if (!path || !isAbsolute(path)) return {};
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_HASHED_BYTES) return { path };
    const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    return { path, sha256, mtime: stat.mtime.toISOString() };
  } catch {
    return { path };
  }
}

/** Whether `event`/`command` is approved for the script as it is now. */
export function consentState(
  approvals: readonly AllowlistEntry[],
  event: string,
  command: string,
  fingerprint: ScriptFingerprint,
): ConsentState {
  const entry = approvals.find((e) => e.event === event && e.command === command);
  if (!entry) return { state: "new" };
  const approvedHash = entry.script_sha256;
  if (typeof approvedHash === "string" && approvedHash !== fingerprint.sha256)
    return { state: "changed", entry };
  return { state: "approved", entry };
}

/** Records an approval (replacing an older one for the same event and command). 0600, locked. */
export async function recordApproval(
  home: string,
  event: string,
  command: string,
  fingerprint: ScriptFingerprint,
  now: Date = new Date(),
): Promise<void> {
  const entry: AllowlistEntry = {
    event,
    command,
    approved_at: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    script_mtime_at_approval: fingerprint.mtime ?? null,
    script_sha256: fingerprint.sha256 ?? null,
  };
  await updateApprovals(home, (list) => [
    ...list.filter((e) => !(e.event === event && e.command === command)),
    entry,
  ]);
}

/** Removes every approval of `command` (all events); returns how many there were. */
export async function revokeCommand(home: string, command: string): Promise<number> {
  let removed = 0;
  await updateApprovals(home, (list) => {
    const kept = list.filter((e) => e.command !== command);
    removed = list.length - kept.length;
    return kept;
  });
  return removed;
}

async function updateApprovals(
  home: string,
  change: (list: AllowlistEntry[]) => AllowlistEntry[],
): Promise<void> {
  const path = allowlistPath(home);
  mkdirSync(home, { recursive: true });
  await withFileLock(path, async () => {
    let other: Record<string, unknown> = {};
    try {
      const raw: unknown = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
      if (typeof raw === "object" && raw !== null && !Array.isArray(raw))
        other = raw as Record<string, unknown>;
    } catch {
      // Missing or unreadable: start again (an unreadable file approved nothing).
    }
    const approvals = change(loadApprovals(home));
    await atomicWriteFile(path, `${JSON.stringify({ ...other, approvals }, null, 2)}\n`, { mode: 0o600 });
  });
}
