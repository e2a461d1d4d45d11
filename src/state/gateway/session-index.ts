/**
 * `sessions/sessions.json`: which stored session each chat (session key) is talking in, in the
 * layout Python Hermes writes, so a home moves between implementations without losing the thread
 * of any chat. Transcripts live in state.db; this file is only the routing index.
 *
 * Also the reset policy (`session_reset`): when a chat's next message starts a fresh session
 * because it sat idle too long or the daily reset hour passed.
 */
import { mkdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { type Asynchronous, asyncView } from "../async-view.js";

/** Where a chat is, as the gateway's adapters describe it (the fields the index keeps in `origin`). */
export interface IndexedSource {
  platform: string;
  chatType: string;
  chatId: string;
  chatName?: string | undefined;
  userId: string;
  userName?: string | undefined;
  threadId?: string | undefined;
  scopeId?: string | undefined;
}

export interface SessionIndexEntry {
  session_key: string;
  session_id: string;
  /** ISO timestamps. */
  created_at: string;
  updated_at: string;
  display_name: string | null;
  platform: string | null;
  chat_type: string | null;
  origin?: Record<string, unknown>;
  /**
   * Upstream's restart mark: the conversation's turn was cut off (a restart or stop) and its chat
   * told; the next message continues the session with a note saying so (see `drain.ts`).
   */
  resume_pending?: boolean;
  /** Why: `restart_interrupted`. */
  resume_reason?: string;
  /** When the turn was cut off (ISO). */
  resume_marked_at?: string;
  [key: string]: unknown;
}

export type ResetMode = "both" | "idle" | "daily" | "none";

export interface ResetPolicy {
  mode: ResetMode;
  idleMinutes: number;
  /** Local hour (0-23) after which a session from an earlier day is reset. */
  atHour: number;
}

export const DEFAULT_RESET_POLICY: ResetPolicy = { mode: "both", idleMinutes: 1440, atHour: 4 };

/** `session_reset:` from config.yaml (with a per-platform override under `session_reset.platforms`). */
export function resetPolicyFrom(raw: unknown, platform?: string): ResetPolicy {
  const section = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const perPlatform =
    platform && section["platforms"] && typeof section["platforms"] === "object"
      ? ((section["platforms"] as Record<string, unknown>)[platform] as Record<string, unknown> | undefined)
      : undefined;
  const pick = (key: string) => perPlatform?.[key] ?? section[key];
  const mode = String(pick("mode") ?? DEFAULT_RESET_POLICY.mode).toLowerCase();
  const idle = Number(pick("idle_minutes"));
  const hour = Number(pick("at_hour"));
  return {
    mode: (["both", "idle", "daily", "none"].includes(mode) ? mode : DEFAULT_RESET_POLICY.mode) as ResetMode,
    idleMinutes: Number.isFinite(idle) && idle > 0 ? idle : DEFAULT_RESET_POLICY.idleMinutes,
    atHour: Number.isInteger(hour) && hour >= 0 && hour <= 23 ? hour : DEFAULT_RESET_POLICY.atHour,
  };
}

/** Why a session last active at `lastActive` should not continue at `now`; null when it should. */
export function resetReason(lastActive: Date, now: Date, policy: ResetPolicy): "idle" | "daily" | null {
  if (policy.mode === "none") return null;
  if (
    (policy.mode === "idle" || policy.mode === "both") &&
    now.getTime() - lastActive.getTime() >= policy.idleMinutes * 60_000
  ) {
    return "idle";
  }
  if (policy.mode === "daily" || policy.mode === "both") {
    // The most recent reset boundary at or before now.
    const boundary = new Date(now);
    boundary.setHours(policy.atHour, 0, 0, 0);
    if (boundary.getTime() > now.getTime()) boundary.setDate(boundary.getDate() - 1);
    if (lastActive.getTime() < boundary.getTime()) return "daily";
  }
  return null;
}

/**
 * The entry `set` stores: `previous` (kept keys included) pointed at `sessionId`, its creation
 * time kept while the session stays the same. Shared by every backend of the index.
 */
export function indexEntryFor(
  previous: SessionIndexEntry | undefined,
  key: string,
  sessionId: string,
  source: IndexedSource,
  now: Date,
): SessionIndexEntry {
  const iso = now.toISOString();
  return {
    ...(previous ?? {}),
    session_key: key,
    session_id: sessionId,
    created_at: previous && previous.session_id === sessionId ? previous.created_at : iso,
    updated_at: iso,
    display_name: source.chatName ?? source.userName ?? null,
    platform: source.platform,
    chat_type: source.chatType,
    origin: {
      platform: source.platform,
      chat_id: source.chatId,
      chat_name: source.chatName ?? null,
      chat_type: source.chatType,
      user_id: source.userId,
      user_name: source.userName ?? null,
      thread_id: source.threadId ?? null,
      chat_topic: null,
      ...(source.scopeId ? { scope_id: source.scopeId, guild_id: source.scopeId } : {}),
    },
  };
}

/** The routing index of one home. Reads once, writes atomically on every change. */
export class SessionIndex {
  /** Without a prototype, so a key such as `constructor` or `__proto__` is only ever a key. */
  private entries: Record<string, SessionIndexEntry> = Object.create(null);
  private readonly file: string;

  constructor(
    home: string,
    private readonly onWarning: (message: string) => void = () => undefined,
  ) {
    this.file = join(home, "sessions", "sessions.json");
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8").replace(/^\uFEFF/, "");
    } catch {
      return;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
          if (
            value &&
            typeof value === "object" &&
            typeof (value as SessionIndexEntry).session_id === "string"
          ) {
            this.entries[key] = value as SessionIndexEntry;
          }
        }
        return;
      }
      throw new Error("not a JSON object");
    } catch (error) {
      // Keep the unreadable file for the owner to look at; start a fresh index.
      const aside = `${this.file}.corrupt-${Date.now()}`;
      try {
        renameSync(this.file, aside);
      } catch {
        /* left in place */
      }
      this.onWarning(
        `${this.file} could not be read (${error instanceof Error ? error.message : String(error)}); ` +
          `it was moved to ${aside} and chats start new sessions.`,
      );
    }
  }

  get(key: string): SessionIndexEntry | undefined {
    return this.entries[key];
  }

  /** Points `key` at `sessionId` (a new or continued session) and saves. */
  set(key: string, sessionId: string, source: IndexedSource, now: Date): SessionIndexEntry {
    const entry = indexEntryFor(this.entries[key], key, sessionId, source, now);
    this.entries[key] = entry;
    this.save();
    return entry;
  }

  /** Marks the conversation's turn as cut off (`resume_pending`); saved at once, read after a restart. */
  markInterrupted(key: string, reason: string, now: Date): void {
    const entry = this.entries[key];
    if (!entry) return;
    entry.resume_pending = true;
    entry.resume_reason = reason;
    entry.resume_marked_at = now.toISOString();
    this.save();
  }

  /** The conversation's restart mark, removed as it is read (a mark is acted on once); undefined when none. */
  takeInterrupted(key: string): { reason: string; at: Date } | undefined {
    const entry = this.entries[key];
    if (!entry?.resume_pending) return undefined;
    const mark = {
      reason: entry.resume_reason ?? "restart_interrupted",
      at: new Date(entry.resume_marked_at ?? 0),
    };
    delete entry.resume_pending;
    delete entry.resume_reason;
    delete entry.resume_marked_at;
    this.save();
    return mark;
  }

  /** Records activity without changing the session. */
  touch(key: string, now: Date): void {
    const entry = this.entries[key];
    if (!entry) return;
    entry.updated_at = now.toISOString();
    this.save();
  }

  private save(): void {
    try {
      mkdirSync(join(this.file, ".."), { recursive: true });
      atomicWriteFileSync(this.file, `${JSON.stringify(this.entries, null, 2)}\n`);
    } catch (error) {
      this.onWarning(
        `could not save ${this.file}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/** Told in a chat when its conversation starts afresh under the reset policy. */
export function resetNotice(reason: "idle" | "daily", policy: ResetPolicy): string {
  if (reason === "idle") {
    const hours = policy.idleMinutes / 60;
    const span = hours >= 1 ? `${Number(hours.toFixed(1))} h` : `${policy.idleMinutes} min`;
    return `🔄 Starting a fresh conversation: the last one was idle for more than ${span}.`;
  }
  return `🔄 Starting a fresh conversation for the new day (reset at ${String(policy.atHour).padStart(2, "0")}:00).`;
}

/**
 * The chat → session index as a backend other than `sessions/sessions.json` provides it
 * (asynchronous, see async-view.ts); `chatSessionIndex` puts the file index behind it.
 */
export type ChatSessionIndex = Asynchronous<
  Pick<SessionIndex, "get" | "set" | "markInterrupted" | "takeInterrupted" | "touch">
>;

export function chatSessionIndex(index: SessionIndex): ChatSessionIndex {
  return asyncView(index, ["get", "set", "markInterrupted", "takeInterrupted", "touch"]);
}
