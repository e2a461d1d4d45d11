/**
 * The PostgreSQL implementations of the knowledge stores (cron jobs and their runs, memory,
 * skills and their usage), for the postgres state backend. Nothing here loads `pg` itself: every
 * store works through the `PgDatabase` it is given, so importing this module costs a SQLite home
 * nothing (and a SQLite home never imports it).
 */
export { type PgCronJobs, type PgCronOptions, pgCronJobs } from "./cron-jobs.js";
export { type PgMemoryRecords, pgMemoryRecords } from "./memory-records.js";
export {
  MAX_SKILL_FILES,
  MAX_SKILL_TOTAL_BYTES,
  type StoredSkill,
  type StoredSkillFile,
} from "./skill-files.js";
export {
  type ImportReport,
  type PgSkillLibrary,
  pgSkillLibrary,
  SKILLS_CHANGED_CHANNEL,
  SkillConflictError,
  type StoredSkillInfo,
} from "./skill-library.js";
export { MIRROR_MANIFEST, type RefreshReport } from "./skill-mirror.js";
export { type PgSkillUsageOptions, type PgSkillUsageRecords, pgSkillUsageRecords } from "./skill-usage.js";
