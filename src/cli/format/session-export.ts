/**
 * The JSONL export format of `hermes sessions export`, the one Python Hermes writes: one line per
 * session holding the session row's columns (snake_case, as in state.db) at the top level plus
 * `messages`, the message rows with their columns. Boolean columns are 0/1 as SQLite stores them.
 */
import { createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { exportLine } from "../../state/export-format.js";
import type { ExportedSession } from "../../state/types.js";

export { exportLine };

/**
 * Streams the sessions to a temp file beside `path`, then renames it over `path`, so a failed
 * export never leaves a half-written file in place. The file is owner-only (0600): it holds whole
 * conversations. Returns how many sessions were written.
 */
export async function writeJsonlFile(
  path: string,
  sessions: Iterable<ExportedSession> | AsyncIterable<ExportedSession>,
): Promise<number> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const stream = createWriteStream(temp, { encoding: "utf8", mode: 0o600 });
  const failed = new Promise<never>((_, reject) => stream.once("error", reject));
  failed.catch(() => {});
  let n = 0;
  try {
    for await (const exported of sessions) {
      if (!stream.write(`${exportLine(exported)}\n`)) {
        await Promise.race([new Promise<void>((resolve) => stream.once("drain", () => resolve())), failed]);
      }
      n++;
    }
    await Promise.race([new Promise<void>((resolve) => stream.end(() => resolve())), failed]);
    renameSync(temp, path);
    return n;
  } catch (error) {
    stream.destroy();
    rmSync(temp, { force: true });
    throw error;
  }
}
