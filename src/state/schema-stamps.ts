/**
 * Stamps (schema.ts `schemaStamp`) of state.db files whose schema was found complete, so opening
 * the same file again skips the full comparison (an in-memory copy of the DDL and a trigram probe).
 * A stamp digests the file's whole schema, so any change to it (a Python Hermes migration, a
 * dropped trigger, a restored older file) gives a new stamp and a full check. Kept outside the
 * database, which is never written for this, in the user's cache directory
 * (`$XDG_CACHE_HOME/hermes-ts/state-schema-ok`, one stamp a line, the newest few); losing the file
 * only costs one full check per database.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { atomicWriteFileSync } from "../util/atomic-write.js";

const KEEP = 16;

export function stampsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "hermes-ts", "state-schema-ok");
}

function readStamps(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => /^[0-9a-f]{64}$/.test(line));
  } catch {
    return [];
  }
}

export function isKnownComplete(stamp: string, file = stampsFile()): boolean {
  return readStamps(file).includes(stamp);
}

/** Records a stamp found complete; best effort (an unwritable cache only costs a later full check). */
export function recordComplete(stamp: string, file = stampsFile()): void {
  try {
    const stamps = [stamp, ...readStamps(file).filter((s) => s !== stamp)].slice(0, KEEP);
    mkdirSync(dirname(file), { recursive: true });
    atomicWriteFileSync(file, `${stamps.join("\n")}\n`);
  } catch {
    // See above.
  }
}
