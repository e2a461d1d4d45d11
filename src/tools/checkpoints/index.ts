/**
 * Checkpoints and rollback of the working directory (a shadow git store under the home; see
 * store.ts for its layout). What the agent, the slash commands and `hermes checkpoints` use.
 */
export { checkpointLines, restoreLines, statusLines } from "./format.js";
export {
  CheckpointSession,
  type CheckpointSettings,
  checkpointSettings,
  unsupportedBackend,
} from "./manager.js";
export { autoPrune, clearStore, pruneStore, storeStatus } from "./prune.js";
export { type Checkpoint, diffCheckpoint, listCheckpoints, restoreCheckpoint } from "./restore.js";
export { takeSnapshot } from "./snapshot.js";
export { canonicalDir, storePaths } from "./store.js";
