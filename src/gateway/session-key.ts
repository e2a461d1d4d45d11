/**
 * The identity of a gateway conversation: which session a platform message belongs to. The key is
 * byte-identical to the one Python Hermes builds (`gateway/session.py` `build_session_key`), so the
 * key → session map in `sessions/sessions.json` and the `session_key` column of `state.db` keep
 * working when a user switches implementations.
 *
 * Layout (colon-joined, empty slots left out):
 *
 *     agent:<ns>:<platform>:<chat_type>[:<slack scope>][:<chat_id>]<tail>
 *
 * - `<ns>` is `main` for the default profile, the profile's name otherwise (`main~` for a profile
 *   literally called `main`, so it can never share the default's sessions).
 * - DMs: tail is `[:<user_id>][:<thread_id>]`, and the user is added only when the DM has no chat id
 *   (so chat-id-less DMs from different people never collapse into one session).
 * - Groups, channels and threads: tail is `[:<thread_id>][:<user_id>]`. The user is added when
 *   `groupSessionsPerUser` is on (the default) and the message is not in a thread; inside a thread it
 *   is added only with `threadSessionsPerUser` (off by default: a thread reads as one conversation).
 *
 * Not handled here (the adapters that need them will normalise ids first): WhatsApp JID/LID
 * canonicalisation and Discord's prospective auto-thread id.
 */

export type ChatType = "dm" | "group" | "channel" | "thread";

export interface SessionSource {
  /** Platform value as Hermes spells it: `telegram`, `discord`, `slack`, ... */
  platform: string;
  chatType: ChatType;
  /** Chat, channel or conversation id; may be empty for platforms that only know the sender. */
  chatId: string;
  /** Sender id; a platform's stable alternative id (Signal UUID, Feishu union_id) belongs here. */
  userId?: string | undefined;
  /** Forum topic, Discord thread, Slack thread ts, ... */
  threadId?: string | undefined;
  /** Slack workspace id: the only scope Hermes puts in the key (Discord guilds are left out). */
  scopeId?: string | undefined;
}

export interface SessionKeyOptions {
  /** One session per participant in groups and channels (default true, as in Hermes). */
  groupSessionsPerUser?: boolean;
  /** One session per participant inside threads (default false, as in Hermes). */
  threadSessionsPerUser?: boolean;
  /** Profile name; undefined or `default` gives the historical `agent:main` namespace. */
  profile?: string | undefined;
}

/** The `agent:<ns>` prefix for a profile. */
export function sessionKeyNamespace(profile?: string): string {
  if (!profile || profile === "default") return "agent:main";
  return profile === "main" ? "agent:main~" : `agent:${profile}`;
}

/** Builds the deterministic session key for a message source. Pure; never throws. */
export function sessionKey(source: SessionSource, options: SessionKeyOptions = {}): string {
  const groupPerUser = options.groupSessionsPerUser ?? true;
  const threadPerUser = options.threadSessionsPerUser ?? false;
  const isDm = source.chatType === "dm";
  const threadId = source.threadId || undefined;
  const isolateUser = isDm ? !source.chatId : groupPerUser && !(threadId && !threadPerUser);

  const parts: string[] = [
    sessionKeyNamespace(options.profile),
    source.platform || "unknown",
    source.chatType,
  ];
  if (source.platform === "slack" && source.scopeId) parts.push(source.scopeId);
  if (source.chatId) parts.push(source.chatId);
  const userPart = isolateUser && source.userId ? [source.userId] : [];
  const threadPart = threadId ? [threadId] : [];
  parts.push(...(isDm ? [...userPart, ...threadPart] : [...threadPart, ...userPart]));
  return parts.join(":");
}
