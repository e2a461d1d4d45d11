/**
 * A user's "no" to bundled skills, in the two files Python Hermes's seeding already honours, so
 * either implementation respects it on the same home:
 *
 * - `<home>/.no-bundled-skills`: the whole home opted out; seeding copies and updates nothing.
 * - `<home>/skills/.curator_suppressed`: one skill name a line (`#` comments allowed); each named
 *   skill is never copied in again, whatever the manifest says.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { skillsRoot } from "./paths.js";

export const OPT_OUT_MARKER = ".no-bundled-skills";
export const SUPPRESSED_FILE = ".curator_suppressed";

export const optOutMarkerPath = (home: string): string => join(home, OPT_OUT_MARKER);
export const suppressedPath = (home: string): string => join(skillsRoot(home), SUPPRESSED_FILE);

export function isOptedOut(home: string): boolean {
  return existsSync(optOutMarkerPath(home));
}

/** Writes or removes the whole-home marker; returns whether anything changed. */
export function setOptedOut(home: string, optedOut: boolean): boolean {
  const marker = optOutMarkerPath(home);
  const had = existsSync(marker);
  if (optedOut && !had) {
    mkdirSync(home, { recursive: true });
    atomicWriteFileSync(
      marker,
      "This home opted out of bundled skills (hermes skills opt-out).\n" +
        "Delete this file, or run `hermes skills opt-in`, to receive them again.\n",
    );
  } else if (!optedOut && had) {
    rmSync(marker, { force: true });
  }
  return optedOut !== had;
}

/** Names in `.curator_suppressed`; empty when the file is missing or unreadable. */
export function readSuppressed(home: string): Set<string> {
  let text: string;
  try {
    text = readFileSync(suppressedPath(home), "utf8");
  } catch {
    return new Set();
  }
  const names = new Set<string>();
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    const line = raw.trim();
    if (line && !line.startsWith("#")) names.add(line);
  }
  return names;
}

/** Adds or removes one name in `.curator_suppressed`; returns whether the file changed. */
export function setSuppressed(home: string, name: string, suppressed: boolean): boolean {
  const names = readSuppressed(home);
  if (names.has(name) === suppressed) return false;
  if (suppressed) names.add(name);
  else names.delete(name);
  writeSuppressed(home, names);
  return true;
}

/** Rewrites `.curator_suppressed` to hold exactly `names`, one a line, sorted. */
export function writeSuppressed(home: string, names: Iterable<string>): void {
  const file = suppressedPath(home);
  mkdirSync(dirname(file), { recursive: true });
  atomicWriteFileSync(
    file,
    [...names]
      .sort()
      .map((n) => `${n}\n`)
      .join(""),
  );
}
