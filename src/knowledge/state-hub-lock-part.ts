/**
 * Moving a home's hub provenance (`skills/.hub/lock.json`) into PostgreSQL and back out, beside
 * the skill folders (state-knowledge-parts.ts): without it, every instance would take the hub
 * skills a migrated home installed for the user's own. Copy in adds the entries the database
 * lacks (never overwriting one); copy out writes the database's entries into the home's lock.json.
 */
import type { PgDatabase } from "../state/postgres/database.js";
import { pgHubLock } from "./postgres/hub-lock.js";
import { SKILLS_CHANGED_CHANNEL } from "./postgres/skill-library.js";
import { type HomePart, countedRow as row } from "./state-transfer-types.js";

const hubLock = (db: PgDatabase, home: string) => pgHubLock(db, home, { channel: SKILLS_CHANGED_CHANNEL });

export const HUB_LOCK_PART: HomePart = {
  name: "skills",
  async copyIn({ home, db }) {
    const lock = hubLock(db, home);
    const counts = await lock.importFile();
    const stored = await lock.entries();
    return {
      part: "skills",
      rows:
        counts.source === 0
          ? []
          : [
              row(
                "hub provenance",
                { ...counts, skipped: 0 },
                counts.copied + counts.present === counts.source,
              ),
            ],
      problems: [],
      notes:
        Object.keys(stored).length < counts.source ? ["some hub provenance entries were not stored"] : [],
    };
  },
  async copyOut({ home, db }) {
    const lock = hubLock(db, home);
    const entries = await lock.entries();
    const source = Object.keys(entries).length;
    if (source > 0) await lock.materialize();
    return {
      part: "skills",
      rows:
        source === 0 ? [] : [row("hub provenance", { source, copied: source, present: 0, skipped: 0 }, true)],
      problems: [],
      notes: [],
    };
  },
};
