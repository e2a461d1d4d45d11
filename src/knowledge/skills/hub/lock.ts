/**
 * `skills/.hub/lock.json`, the provenance of hub-installed skills, in Python Hermes's shape:
 *
 *     {"version": 1, "installed": {"<name>": {"source", "identifier", "trust_level", "scan_verdict",
 *      "content_hash", "install_path", "files", "metadata", "installed_at", "updated_at"}}}
 *
 * Reads are tolerant (a missing file is empty; unknown fields are kept and written back). Writes
 * happen under the same flock Python takes (`lock.json.lock`) and replace the file atomically; a
 * file that does not parse is never overwritten. Also home of the hub's paths and its audit log.
 */
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { atomicWriteFile } from "../../../util/atomic-write.js";
import { withFileLock } from "../../../util/file-lock.js";
import { knowledgeStores } from "../../stores.js";
import { HubError, isRecord } from "./bundle.js";
import type { LockData, LockEntry } from "./lock-data.js";

export type { LockData, LockEntry, SharedHubLock } from "./lock-data.js";

export const skillsRoot = (home: string): string => join(home, "skills");
export const hubDir = (home: string): string => join(home, "skills", ".hub");
export const lockPath = (home: string): string => join(hubDir(home), "lock.json");
export const quarantineDir = (home: string): string => join(hubDir(home), "quarantine");
export const auditLogPath = (home: string): string => join(hubDir(home), "audit.log");

/** Reads lock.json. Missing: empty. Unparsable: throws, naming the file (never silently empty). */
export async function readLock(home: string): Promise<LockData> {
  let text: string;
  try {
    text = await readFile(lockPath(home), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, installed: {} };
    throw error;
  }
  return parseLock(text, lockPath(home));
}

export function parseLock(text: string, where = "lock.json"): LockData {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (trimmed === "") return { version: 1, installed: {} };
  let data: unknown;
  try {
    data = JSON.parse(trimmed);
  } catch (error) {
    throw new HubError(
      `${where} is not valid JSON (${error instanceof Error ? error.message : String(error)}); fix or move it before changing hub skills.`,
    );
  }
  if (!isRecord(data)) throw new HubError(`${where} does not hold a JSON object; fix or move it.`);
  const installed: Record<string, LockEntry> = {};
  const raw = isRecord(data["installed"]) ? data["installed"] : {};
  for (const [name, entry] of Object.entries(raw)) {
    if (!isRecord(entry)) continue;
    const str = (key: string) => (typeof entry[key] === "string" ? (entry[key] as string) : "");
    installed[name] = {
      ...entry,
      source: str("source"),
      identifier: str("identifier"),
      trust_level: str("trust_level"),
      scan_verdict: str("scan_verdict"),
      content_hash: str("content_hash"),
      install_path: str("install_path"),
      files: Array.isArray(entry["files"])
        ? entry["files"].filter((f): f is string => typeof f === "string")
        : [],
      installed_at: str("installed_at"),
      updated_at: str("updated_at"),
    };
  }
  return { ...data, version: typeof data["version"] === "number" ? data["version"] : 1, installed };
}

/**
 * Read-modify-write of lock.json under its flock. `change` gets the current data and mutates it
 * (or returns new data); the result is written atomically, formatted as Python writes it. On a
 * home whose backend shares the provenance (`knowledgeStores(home).hubLock`) the shared copy is
 * the one changed, and the file follows it.
 */
export async function updateLock<T>(home: string, change: (lock: LockData) => T | Promise<T>): Promise<T> {
  // A shared backend (PostgreSQL) keeps the provenance for every instance and rewrites this file.
  const shared = knowledgeStores(home).hubLock;
  if (shared) return shared.update(change);
  const path = lockPath(home);
  await mkdir(hubDir(home), { recursive: true });
  return withFileLock(path, async () => {
    const lock = await readLock(home);
    const result = await change(lock);
    await atomicWriteFile(path, `${JSON.stringify(lock, null, 2)}\n`);
    return result;
  });
}

/** A timestamp the way Python's `datetime.now(timezone.utc).isoformat()` writes it. */
export function pythonIsoTime(seconds: number): string {
  const date = new Date(Math.floor(seconds * 1000));
  const micros = String(Math.floor((seconds * 1e6) % 1e6)).padStart(6, "0");
  return `${date.toISOString().slice(0, 19)}.${micros}+00:00`;
}

export type AuditAction = "install" | "update" | "uninstall" | "refuse";

export interface AuditRecord {
  action: AuditAction;
  name: string;
  source: string;
  identifier: string;
  trust_level?: string;
  verdict?: string;
  content_hash?: string;
  /** Why a refusal happened, or who asked for an uninstall. */
  reason?: string;
  findings?: Array<{ file: string; line: number; id: string; severity: string }>;
  /** A refused skill whose files were kept in the quarantine folder for review. */
  quarantined?: boolean;
}

/**
 * Appends one JSON line to `skills/.hub/audit.log` (`{"ts": …, "action": …, …}`). Best effort: a
 * log that cannot be written never fails the install it describes.
 */
export async function appendAudit(home: string, record: AuditRecord, nowSeconds: number): Promise<void> {
  try {
    await mkdir(hubDir(home), { recursive: true });
    const line = JSON.stringify({ ts: new Date(nowSeconds * 1000).toISOString(), ...record });
    await appendFile(auditLogPath(home), `${line}\n`, "utf8");
  } catch {
    // Best effort, like Python's audit log.
  }
}
