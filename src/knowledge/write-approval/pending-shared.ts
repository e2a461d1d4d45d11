/**
 * The staging area as every surface reaches it: a file home's `pending/<subsystem>/` folder
 * (`pending.ts`, unchanged), or, when a shared backend registered its store for the home
 * (PostgreSQL), the database's, so a write staged on one instance is listed, approved and rejected
 * from any other, the CLI or the dashboard.
 */
import type { PendingWriteRecords } from "../home-extras-types.js";
import { knowledgeStores } from "../stores.js";
import {
  claimPending,
  finishClaim,
  listPending,
  newPendingRecord,
  type PendingRecord,
  pendingCount,
  type ReadRecord,
  readPending,
  releaseClaim,
  type StageInput,
  type Subsystem,
  stagePending,
} from "./pending.js";

const shared = (home: string): PendingWriteRecords | undefined => knowledgeStores(home).pendingWrites;

/** Stages a write (see `stagePending`); answers the record. */
export async function stageWrite(
  home: string,
  subsystem: Subsystem,
  input: StageInput,
): Promise<PendingRecord> {
  const store = shared(home);
  if (!store) return stagePending(home, subsystem, input);
  const record = newPendingRecord(subsystem, input);
  await store.add(record);
  return record;
}

/** Every staged write of `subsystem`, oldest first (unreadable ones as errors). */
export async function listWrites(home: string, subsystem: Subsystem): Promise<ReadRecord[]> {
  const store = shared(home);
  return store ? store.list(subsystem) : listPending(home, subsystem);
}

/** One staged write, or undefined when there is none with that id. */
export async function readWrite(
  home: string,
  subsystem: Subsystem,
  id: string,
): Promise<ReadRecord | undefined> {
  const store = shared(home);
  return store ? store.get(subsystem, id) : readPending(home, subsystem, id);
}

export async function countWrites(home: string, subsystem: Subsystem): Promise<number> {
  const store = shared(home);
  return store ? store.count(subsystem) : pendingCount(home, subsystem);
}

/** A staged write taken for applying or rejecting: put it back, or remove it for good. */
export interface WriteClaim {
  release(): Promise<void>;
  finish(): Promise<void>;
}

/** Takes write `id` so no other process can; undefined when it is gone or held elsewhere. */
export async function claimWrite(
  home: string,
  subsystem: Subsystem,
  id: string,
): Promise<WriteClaim | undefined> {
  const store = shared(home);
  if (store) {
    if (!(await store.claim(subsystem, id))) return undefined;
    return { release: () => store.release(subsystem, id), finish: () => store.finish(subsystem, id) };
  }
  const claimed = claimPending(home, subsystem, id);
  if (!claimed) return undefined;
  return {
    release: async () => releaseClaim(claimed),
    finish: async () => finishClaim(claimed),
  };
}
