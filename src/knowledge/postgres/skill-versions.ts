/**
 * Versions of stored skills: one sequence orders every change, and a write that expected another
 * version than the database holds is refused with a {@link SkillConflictError} (an instance whose
 * copy is stale never overwrites a newer change).
 */
import type { PgQueryable } from "../../state/postgres/database.js";
import { SkillManageError } from "../skills/validate.js";

/** A conditional write found another version than the one it expected. */
export class SkillConflictError extends SkillManageError {
  constructor(
    message: string,
    readonly current: number | null,
  ) {
    super(message);
    this.name = "SkillConflictError";
  }
}

export async function currentVersion(client: PgQueryable, name: string): Promise<number | null> {
  const rows = await client.query<{ version: string }>(
    "SELECT version FROM skills WHERE name = $1 FOR UPDATE",
    [name],
  );
  return rows[0] ? Number(rows[0].version) : null;
}

/** The next number of the one sequence every skill change takes its version from. */
export async function nextVersion(client: PgQueryable): Promise<number> {
  const rows = await client.query<{ v: string }>("SELECT nextval('skill_change_seq') AS v");
  return Number(rows[0]?.v);
}

export function checkExpected(
  name: string,
  expected: number | null | undefined,
  current: number | null,
): void {
  if (expected === undefined || expected === current) return;
  if (expected === null) {
    throw new SkillConflictError(
      `A skill named "${name}" was just created by another instance; view it, then patch or edit it.`,
      current,
    );
  }
  throw new SkillConflictError(
    current === null
      ? `Skill "${name}" was deleted by another instance meanwhile; nothing was changed.`
      : `Skill "${name}" was changed by another instance meanwhile (version ${current}, this copy had ${expected}); ` +
          "view it again and redo the change.",
    current,
  );
}
