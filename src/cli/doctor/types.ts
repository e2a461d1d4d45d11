/**
 * One line of `hermes doctor`: what was checked, how it went, and what to do about it. A check
 * that can be repaired safely (permissions, a missing folder, the state.db schema) carries the
 * repair, which `--fix` runs; anything else only says the fix.
 */

export type CheckStatus = "ok" | "warn" | "fail";

export interface DoctorLine {
  /** The heading it is listed under: "Config", "Providers", "Home", "System", "Terminal", … */
  group: string;
  /** What was checked, short: "config.yaml", ".env permissions", "ripgrep". */
  name: string;
  status: CheckStatus;
  /** What was found, one line. */
  detail: string;
  /** What the user can do, when the status is not ok. */
  fix?: string;
  /** A safe repair run by `--fix`; resolves to what it did. Throws when it could not. */
  repair?: () => Promise<string> | string;
}

/** A check that may throw is run through this, so one broken probe is one failed line. */
export async function guarded(
  group: string,
  name: string,
  probe: () => Promise<DoctorLine[]> | DoctorLine[],
): Promise<DoctorLine[]> {
  try {
    return await probe();
  } catch (error) {
    return [
      {
        group,
        name,
        status: "fail",
        detail: `the check itself failed: ${error instanceof Error ? error.message : String(error)}`,
      },
    ];
  }
}
