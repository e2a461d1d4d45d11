/**
 * A job's saved run outputs in `cron/output/<id>/` as readers see them: the listing (newest first)
 * and one output by its validated name, at most a given number of bytes, never through a symlink.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";

/** What `saveOutput` names a run's file: local wall time, `-2`, `-3`… on a clash. */
export const OUTPUT_NAME = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}(-\d{1,4})?\.md$/;

/** One saved output as listed. */
export interface CronOutputEntry {
  name: string;
  size: number;
  modified_at: string;
}

/** One saved output's text (cut at the byte limit asked for). */
export interface CronOutputText {
  text: string;
  size: number;
  truncated: boolean;
}

/** The outputs in `dir`, newest first; [] when there is no folder. */
export function listOutputFiles(dir: string | undefined): CronOutputEntry[] {
  if (!dir) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const files: CronOutputEntry[] = [];
  for (const name of names.filter((n) => OUTPUT_NAME.test(n))) {
    try {
      const stat = lstatSync(join(dir, name));
      if (stat.isFile()) files.push({ name, size: stat.size, modified_at: stat.mtime.toISOString() });
    } catch {
      // Removed by retention between the listing and the stat.
    }
  }
  // Stamps sort as text; a clash suffix (-2) sorts after its stamp, as it was written later.
  return files.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

/** At most `maxBytes` of output `name` in `dir`; undefined for a bad name or no regular file. */
export function readOutputFile(
  dir: string | undefined,
  name: string,
  maxBytes: number,
): CronOutputText | undefined {
  if (!dir || !OUTPUT_NAME.test(name)) return undefined;
  const path = join(dir, name);
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat?.isFile()) return undefined;
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, Math.max(0, maxBytes)));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return { text: buffer.subarray(0, read).toString("utf8"), size, truncated: size > read };
  } finally {
    closeSync(fd);
  }
}
