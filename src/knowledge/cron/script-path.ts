/**
 * Where a cron job's `script` may live: inside the home's `scripts/` folder and nowhere else, as
 * Python Hermes requires. The folder is on the protected-path list (the agent cannot write there
 * without the user), so "inside scripts/" means "put there by the user". Pure (no file access):
 * the run checks the file itself again with symlinks resolved (src/cron/script.ts).
 */
import { isAbsolute, join, normalize, relative, resolve, sep } from "node:path";

/** `<home>/scripts`. */
export function scriptsDirOf(home: string): string {
  return join(home, "scripts");
}

/** A job's script names a path outside `scripts/`, or is not a path at all. */
export class CronScriptPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CronScriptPathError";
  }
}

/**
 * The script as stored in jobs.json: its path relative to `<home>/scripts` (`report.py`,
 * `checks/disk.sh`). Accepts that form, or an absolute or `~/` path that lies inside the folder.
 * Throws `CronScriptPathError` for anything that leaves it (`../x`, `/tmp/x`, `~/x`), for the
 * folder itself and for names no file can have.
 */
export function normalizeScriptPath(home: string, script: string, userHome?: string): string {
  const raw = script.trim();
  const dir = resolve(scriptsDirOf(home));
  if (!raw) throw new CronScriptPathError("script is empty: name a file in the scripts folder.");
  if (/[\0\n\r]/.test(raw)) {
    throw new CronScriptPathError(`script ${JSON.stringify(script)} holds a control character.`);
  }
  let abs: string;
  if (raw === "~" || raw.startsWith("~/")) {
    if (!userHome) throw new CronScriptPathError(`script "${raw}" starts with ~ but $HOME is not known.`);
    abs = resolve(userHome, raw.slice(2));
  } else if (isAbsolute(raw)) {
    abs = resolve(raw);
  } else {
    abs = resolve(dir, normalize(raw));
  }
  const rel = relative(dir, abs);
  if (!rel || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new CronScriptPathError(
      `script "${raw}" is outside ${dir}. Cron runs only scripts the user put in that folder: ` +
        `copy the script there and name it relative to it (e.g. "report.py").`,
    );
  }
  return rel;
}
