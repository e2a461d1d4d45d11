/** The curator: lifecycle of agent-made skills (stale, archive, restore), backups, consolidation. */
export { archiveSkill, CuratorError, listArchived, restoreSkill } from "./archive.js";
export { listBackups, rollbackSkills, snapshotSkills } from "./backup.js";
export { curatorDue, planTransitions } from "./lifecycle.js";
export { type CuratorRunOptions, type CuratorRunResult, runCurator } from "./run.js";
export { checkCuratorDue, curatorTicker, runCuratorIfDue } from "./schedule.js";
export { CURATOR_DEFAULTS, type CuratorSettings, curatorSettings } from "./settings.js";
export { readCuratorState, updateCuratorState } from "./state.js";
export { type CuratorRequest, parseCuratorArgs, runCuratorVerb } from "./verbs.js";
