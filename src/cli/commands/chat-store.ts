/**
 * The session store of a chat: opens the home's `state.db` and does its start-up maintenance —
 * importing Python Hermes's legacy `sessions/*.jsonl` once, and `sessions.auto_prune` — and at the
 * end gives writes queued behind another process's lock a bounded last chance.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { HermesConfig } from "../../config/defaults.js";
import type { QueuedSessionStore } from "../../state/queued-store.js";
import type { Logger } from "../../util/log.js";
import { CliFailure } from "../command.js";

/**
 * Opens the home's `state.db`. A database that cannot be opened costs the session its record, not
 * the conversation: a warning, then null (an unrecorded run). Resuming needs it: then a CliFailure.
 * `say` prints one line to stderr.
 */
export async function openChatStore(options: {
  home: string;
  config: HermesConfig;
  required: boolean;
  logger: Logger;
  say: (line: string) => void;
  /** With `.env` applied (`HERMES_DATABASE_URL`); default the process environment. */
  env?: Record<string, string | undefined>;
}): Promise<QueuedSessionStore | null> {
  const { home, config, required, logger, say } = options;
  if (config.state?.backend === "postgres") {
    // The shared database (several gateway instances and every CLI with this config write it).
    // Its memory, cron jobs and skill usage too: registered for the home while the store is open.
    const { openPostgresChatStore, refuseFileKnowledge } = await import("./home-sessions.js");
    try {
      const shared = await openPostgresChatStore(home, options.env ?? process.env, config);
      if (shared) return shared;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      logger.error("the PostgreSQL session store was not opened", { error: message });
      if (required) throw new CliFailure(message, 1);
      // Memory and cron writes fail with the reason rather than land in this home's files.
      await refuseFileKnowledge(home, `the shared database is not available (${message})`);
      say(
        `hermes: ${message}\nhermes: this conversation will not be saved, and memory and cron jobs are not available.`,
      );
      return null;
    }
  }
  const { durabilityOptions, openRecordingStore } = await import("../../state/recording-store.js");
  let store: QueuedSessionStore;
  try {
    // Moves an unreadable state.db aside (and says so); queues writes while another process holds it.
    store = openRecordingStore(home, {
      // `normal` unless `state.durability: full`: each message is still committed before the next
      // step, so a killed hermes loses nothing; only a power cut may lose the last commit.
      open: durabilityOptions(config.state),
      notify: (message) => {
        logger.warning(message);
        say(`hermes: ${message}`);
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error("state.db not opened", { error: message });
    if (required) throw new CliFailure(message, 1);
    say(`hermes: ${message}\nhermes: this conversation will not be saved.`);
    return null;
  }
  await importLegacySessions(store, home, logger, say);
  if (config.sessions.auto_prune) await autoPrune(store, config, logger, say);
  return store;
}

/** Python Hermes's `sessions/*.jsonl`, imported once; a failure is a warning, not a lost chat. */
async function importLegacySessions(
  store: QueuedSessionStore,
  home: string,
  logger: Logger,
  say: (line: string) => void,
): Promise<void> {
  const legacy = join(home, "sessions");
  if (!existsSync(legacy)) return;
  try {
    const imported = await store.importLegacyJsonl(legacy);
    if (imported.sessions > 0) {
      say(`hermes: imported ${imported.sessions} sessions (${imported.messages} messages) from ${legacy}`);
    }
  } catch (error) {
    logger.warning("legacy sessions not imported", { path: legacy, error: String(error) });
    say(`hermes: could not import ${legacy}: ${String(error)}`);
  }
}

/** `sessions.auto_prune`: old sessions go, at most every `min_interval_hours`. */
async function autoPrune(
  store: QueuedSessionStore,
  config: HermesConfig,
  logger: Logger,
  say: (line: string) => void,
): Promise<void> {
  try {
    const pruned = await store.autoPrune({
      retentionDays: config.sessions.retention_days,
      minIntervalHours: config.sessions.min_interval_hours,
      vacuum: config.sessions.vacuum_after_prune,
    });
    if (pruned.sessions > 0) {
      say(
        `hermes: pruned ${pruned.sessions} sessions older than ${config.sessions.retention_days} days (sessions.auto_prune)`,
      );
    }
  } catch (error) {
    logger.warning("automatic session pruning failed", { error: String(error) });
    say(`hermes: automatic session pruning failed: ${String(error)}`);
  }
}

/** How long a finished run waits at exit for a locked state.db before writing the unsaved-writes file. */
const EXIT_SAVE_WAIT_MS = 30_000;

/**
 * Writes still queued behind another process's lock get a bounded last chance at exit; Ctrl+C
 * stops the wait (close() then puts them in the unsaved-writes file and says where).
 */
export async function saveQueuedWrites(store: QueuedSessionStore): Promise<void> {
  if (store.pendingWrites === 0) return;
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.on("SIGINT", onSigint);
  try {
    await store.drain(EXIT_SAVE_WAIT_MS, stop.signal);
  } finally {
    process.off("SIGINT", onSigint);
  }
}
