/**
 * Appends numbered lines to one rotating file from its own process, for the two-writer rotation
 * test. Usage: node --import tsx log-append-worker.ts PATH TAG COUNT MAX_BYTES BACKUPS
 * Each line is `<TAG> <n> <padding>`; the worker starts writing when it reads a line on stdin, so
 * both writers run at the same time.
 */
import { RotatingFile } from "../../src/util/rotating-file.js";

const [path, tag, count, maxBytes, backups, recheckMs] = process.argv.slice(2);
const file = new RotatingFile(path as string, {
  maxBytes: Number(maxBytes),
  backupCount: Number(backups),
  ...(recheckMs === undefined ? {} : { recheckMs: Number(recheckMs) }),
});
process.stdin.once("data", () => {
  for (let i = 0; i < Number(count); i++) file.append(`${tag} ${i} ${"x".repeat(40)}\n`);
  file.close();
  process.exit(0);
});
process.stdout.write("ready\n");
