/**
 * When each endpoint's model listing was last asked about a model's context window, and what it
 * said (a window, or nothing), kept across processes in `<home>/cache/context_length_checks.json`.
 * A model no catalog knows on an endpoint that does not state its window (most local servers) would
 * otherwise cost every start a `GET /models`. An answer younger than `CONTEXT_CHECK_TTL_MS` is
 * trusted as it is; an older one is still used for the start while the listing is asked again in
 * the background. Only a cache: a missing, unreadable or foreign file means asking again, and a
 * window that turns out too large is corrected by the overflow recovery (context-length.ts), whose
 * learnt limits win over anything here. Python Hermes' `context_length_cache.yaml` is left as it is.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFileSync } from "../util/atomic-write.js";

export const CONTEXT_CHECKS_FILE = join("cache", "context_length_checks.json");
/** How long an answer is trusted without asking again (the in-process memory's hour too). */
export const CONTEXT_CHECK_TTL_MS = 60 * 60 * 1000;
/** Answers older than this are dropped when the file is rewritten. */
const FORGET_AFTER_MS = 30 * 24 * 60 * 60 * 1000;

export interface ContextCheck {
  /** The window the listing stated; undefined when it did not state one. */
  tokens: number | undefined;
  /** When it was asked (ms since the epoch). */
  at: number;
}

/** Keys are `model@base_url` (`contextCacheKey`). */
export interface ContextCheckMemo {
  get(key: string): ContextCheck | undefined;
  set(key: string, check: ContextCheck): void;
}

/** Whether `check` is recent enough to skip asking at `now` (a time in the future is not). */
export function isFreshCheck(
  check: ContextCheck | undefined,
  now: number,
  ttlMs = CONTEXT_CHECK_TTL_MS,
): boolean {
  if (!check) return false;
  const age = now - check.at;
  return age >= 0 && age < ttlMs;
}

interface ChecksFile {
  version: 1;
  checks: Record<string, { context_length: number | null; checked_at: number }>;
}

function readChecks(path: string): Map<string, ContextCheck> {
  const out = new Map<string, ContextCheck>();
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return out;
  }
  const checks = (data as Partial<ChecksFile> | null)?.checks;
  if ((data as Partial<ChecksFile> | null)?.version !== 1 || !checks || typeof checks !== "object")
    return out;
  for (const [key, entry] of Object.entries(checks)) {
    if (!entry || typeof entry !== "object") continue;
    const at = entry.checked_at;
    const tokens = entry.context_length;
    if (typeof at !== "number" || !Number.isFinite(at)) continue;
    if (tokens !== null && !(typeof tokens === "number" && Number.isInteger(tokens) && tokens >= 1024))
      continue;
    out.set(key, { tokens: tokens ?? undefined, at: at * 1000 });
  }
  return out;
}

/** The memo in `<home>/cache/context_length_checks.json`, read once, rewritten whole (atomically) on each answer. */
export function fileContextCheckMemo(home: string): ContextCheckMemo {
  const path = join(home, CONTEXT_CHECKS_FILE);
  let checks: Map<string, ContextCheck> | undefined;
  const load = () => {
    checks ??= readChecks(path);
    return checks;
  };
  return {
    get: (key) => load().get(key),
    set(key, check) {
      // Another process may have answered for other models meanwhile: merge with the file as it is now.
      const merged = readChecks(path);
      merged.set(key, check);
      checks = merged;
      const file: ChecksFile = { version: 1, checks: {} };
      for (const [k, v] of merged) {
        if (check.at - v.at > FORGET_AFTER_MS) continue;
        file.checks[k] = { context_length: v.tokens ?? null, checked_at: Math.floor(v.at / 1000) };
      }
      try {
        mkdirSync(dirname(path), { recursive: true });
        atomicWriteFileSync(path, `${JSON.stringify(file, null, 1)}\n`);
      } catch {
        // An unwritable home only means the next start asks again.
      }
    },
  };
}

const perProcess = new Map<string, ContextCheckMemo>();

/**
 * The home's memo shared by every session this process starts (a server opens one per request):
 * the file is read once per process, not once per conversation, and an answer equal to a fresh one
 * this process already holds is not written again (200 conversations starting together each got
 * the same answer and each rewrote and fsynced the file).
 */
export function processContextCheckMemo(home: string): ContextCheckMemo {
  const path = join(home, CONTEXT_CHECKS_FILE);
  let memo = perProcess.get(path);
  if (!memo) {
    const file = fileContextCheckMemo(home);
    memo = {
      get: (key) => file.get(key),
      set(key, check) {
        const known = file.get(key);
        if (known && known.tokens === check.tokens && isFreshCheck(known, check.at)) return;
        file.set(key, check);
      },
    };
    perProcess.set(path, memo);
  }
  return memo;
}

/** An in-memory memo (tests). */
export function memoryContextCheckMemo(initial: Record<string, ContextCheck> = {}): ContextCheckMemo {
  const map = new Map(Object.entries(initial));
  return { get: (key) => map.get(key), set: (key, check) => void map.set(key, check) };
}
