/**
 * The shape of `skills/.hub/lock.json` (Python Hermes's), and the seam a state backend that keeps
 * it elsewhere (PostgreSQL) offers: kept apart from lock.ts so the stores registry can name it.
 */

export interface LockEntry {
  source: string;
  identifier: string;
  trust_level: string;
  scan_verdict: string;
  content_hash: string;
  /** Relative to the skills folder, POSIX (`devops/my-skill`); always ends with the skill name. */
  install_path: string;
  files: string[];
  metadata?: Record<string, unknown>;
  installed_at: string;
  updated_at: string;
  [key: string]: unknown;
}

export interface LockData {
  version: number;
  installed: Record<string, LockEntry>;
  [key: string]: unknown;
}

/**
 * The hub's provenance kept for every instance (PostgreSQL): `update` is lock.json's
 * read-modify-write done on the shared copy, under its lock, with the home's lock.json rewritten to
 * match once it is stored (every reader keeps reading the file).
 */
export interface SharedHubLock {
  update<T>(change: (lock: LockData) => T | Promise<T>): Promise<T>;
}
