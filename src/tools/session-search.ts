/**
 * session_search: recall from the home's session store. The shape of the answer follows the
 * arguments: discovery (`query`), scroll (`session_id` + `around_message_id`), read (`session_id`
 * alone) and browse (nothing). Every shape returns stored messages as they are, trimmed to fit;
 * nothing here calls a model.
 */
import { Type } from "@sinclair/typebox";
import { type Message, messageText } from "../ai/types.js";
import {
  type SearchHit,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
  type StoredMessage,
} from "../state/types.js";
import description from "./session-search.md";
import { defineTool } from "./types.js";

type Role = Message["role"];
const ROLES: readonly Role[] = ["user", "assistant", "tool", "system"];

/** Sessions that are not the user's own conversations: integrations, subagents, board workers. */
const HIDDEN_SOURCES = new Set(["tool", "subagent", "kanban"]);
/** Scheduled runs repeat the same words; they rank after interactive sessions when both match. */
const DEMOTED_SOURCES = new Set(["cron"]);

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;
const DEFAULT_WINDOW = 5;
const HITS_PER_SESSION = 3;
/** Characters kept of a message's text: the anchor of a scroll, any other message, a tool result. */
const ANCHOR_CHARS = 4000;
const TEXT_CHARS = 1500;
const TOOL_RESULT_CHARS = 400;
/** A session up to this many messages is read whole; a longer one shows its head and tail. */
const READ_WHOLE = 30;
const READ_HEAD = 12;
const READ_TAIL = 8;

const parameters = Type.Object({
  query: Type.Optional(
    Type.String({
      description:
        'Few distinctive keywords (names, error text, file names); all must match. "a phrase", prefix*, a OR b.',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `Sessions to return (default ${DEFAULT_LIMIT}).`,
    }),
  ),
  sort: Type.Optional(
    Type.Union([Type.Literal("relevance"), Type.Literal("newest"), Type.Literal("oldest")], {}),
  ),
  role_filter: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description: "Roles to search (default user,assistant); add tool to search tool output.",
    }),
  ),
  session_id: Type.Optional(Type.String({ description: "Id (or title) of a session to read." })),
  around_message_id: Type.Optional(Type.Integer({ description: "A message_id from a search hit." })),
  window: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 20,
      description: `Messages shown each side (default ${DEFAULT_WINDOW}).`,
    }),
  ),
  include_current_session: Type.Optional(Type.Boolean({ description: "Also search this conversation." })),
});

export const sessionSearchTool = defineTool({
  name: "session_search",
  toolset: "session_search",
  description,
  parameters,
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "🕰️",
  // check() only sees env and config, not the context that carries the store, so a run without
  // a store gets the tool and an explanatory error from the handler.
  async handler(args, ctx) {
    const store = ctx.sessionStore;
    if (!store) {
      return {
        error:
          "Past sessions are not available in this run (sessions are not being recorded), so there is " +
          "nothing to search. Continue without them.",
      };
    }
    try {
      const sessionRef = args.session_id?.trim();
      if (args.around_message_id !== undefined && !sessionRef) {
        return {
          error: "around_message_id needs session_id too: pass the session_id that the message_id came with.",
        };
      }
      if (sessionRef) {
        const session = await resolve(store, sessionRef);
        if ("error" in session) return session;
        return args.around_message_id !== undefined
          ? await scroll(store, session, args.around_message_id, args.window ?? DEFAULT_WINDOW)
          : await read(store, session);
      }
      const limit = Math.min(Math.max(args.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
      const query = args.query?.trim() ?? "";
      if (query === "") return await browse(store, limit, ctx.sessionId);
      const roles = parseRoles(args.role_filter);
      if (roles !== undefined && !Array.isArray(roles)) return roles;
      return await discover(store, {
        query,
        limit,
        sort: args.sort ?? "relevance",
        roles,
        ...(args.include_current_session ? {} : { exclude: ctx.sessionId }),
      });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const kind = error instanceof SessionStoreError ? ` (${error.code})` : "";
      return {
        error: `The session store is unavailable${kind}: ${detail}. Past sessions cannot be read right now.`,
      };
    }
  },
});

async function resolve(store: SessionStore, ref: string): Promise<SessionRecord | { error: string }> {
  const exact = await store.getSession(ref);
  if (exact) return exact;
  try {
    return await store.resolveSession(ref);
  } catch (error) {
    if (error instanceof SessionStoreError && error.code === "not_found") {
      return {
        error:
          `Unknown session_id "${ref}". Use a session_id from a search result, or call session_search ` +
          "with no arguments to list recent sessions.",
      };
    }
    if (error instanceof SessionStoreError && error.code === "ambiguous") {
      return { error: `session_id "${ref}" is ambiguous: ${error.message} Pass the full session_id.` };
    }
    throw error;
  }
}

/** Roles from "user,assistant" or ["user"]; undefined leaves the store's default (user and assistant). */
function parseRoles(raw: string | string[] | undefined): Role[] | undefined | { error: string } {
  if (raw === undefined) return undefined;
  const names = (Array.isArray(raw) ? raw : raw.split(","))
    .map((r) => r.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) return undefined;
  const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length > 0) {
    return {
      error: `Unknown role${unknown.length > 1 ? "s" : ""} in role_filter: ${unknown.join(", ")}. Use ${ROLES.join(", ")}.`,
    };
  }
  return [...new Set(names)] as Role[];
}

interface DiscoverOptions {
  query: string;
  limit: number;
  sort: "relevance" | "newest" | "oldest";
  roles: Role[] | undefined;
  exclude?: string;
}

async function discover(store: SessionStore, opts: DiscoverOptions) {
  // Scan well past `limit` hits: several hits usually share a session, and hidden sources drop out.
  let hits: SearchHit[] = (
    await store.search({
      query: opts.query,
      limit: Math.min(100, Math.max(opts.limit * 10, 30)),
      sort: opts.sort,
      ...(opts.roles ? { roles: opts.roles } : {}),
      ...(opts.exclude ? { excludeSessionId: opts.exclude } : {}),
    })
  ).filter((hit) => !HIDDEN_SOURCES.has(hit.source) && hit.sessionId !== opts.exclude);
  if (opts.sort === "relevance") {
    hits = [
      ...hits.filter((h) => !DEMOTED_SOURCES.has(h.source)),
      ...hits.filter((h) => DEMOTED_SOURCES.has(h.source)),
    ];
  }
  const groups = new Map<string, SearchHit[]>();
  for (const hit of hits) {
    const group = groups.get(hit.sessionId);
    if (group) {
      if (group.length < HITS_PER_SESSION) group.push(hit);
    } else if (groups.size < opts.limit) {
      groups.set(hit.sessionId, [hit]);
    }
  }
  const searched = opts.roles ? opts.roles.join(", ") : "user, assistant";
  if (groups.size === 0) {
    return {
      mode: "search",
      query: opts.query,
      roles: searched,
      count: 0,
      sessions: [],
      message:
        "No past messages match. Try other or fewer keywords, add role_filter=tool to search tool " +
        "output, or call with no arguments to browse recent sessions.",
    };
  }
  const records = await Promise.all([...groups.keys()].map((id) => store.getSession(id)));
  const sessions = [...groups].map(([sessionId, group], i) => {
    const first = group[0] as SearchHit;
    const record = records[i];
    return {
      session_id: sessionId,
      title: first.sessionTitle,
      source: first.source,
      model: first.model,
      started: record ? formatTime(record.startedAt) : null,
      message_count: record?.messageCount ?? null,
      hits: group.map((hit) => ({
        message_id: hit.messageId,
        role: hit.role,
        when: formatTime(hit.timestamp),
        snippet: hit.snippet,
      })),
    };
  });
  return {
    mode: "search",
    query: opts.query,
    roles: searched,
    count: sessions.length,
    sessions,
    next: "To read the conversation around a hit, call session_search with session_id and around_message_id=<message_id>.",
  };
}

async function scroll(store: SessionStore, session: SessionRecord, anchorId: number, window: number) {
  const messages = await store.getMessages(session.id);
  const at = messages.findIndex((m) => m.id === anchorId);
  if (at < 0) {
    const range =
      messages.length > 0
        ? ` Its messages have ids ${messages[0]?.id} to ${messages[messages.length - 1]?.id}.`
        : " It has no messages.";
    return {
      error:
        `around_message_id ${anchorId} is not a message of session ${session.id}.${range} ` +
        "Use a message_id returned together with this session_id.",
    };
  }
  const span = Math.min(Math.max(window, 1), 20);
  const from = Math.max(0, at - span);
  const to = Math.min(messages.length, at + span + 1);
  const before = from;
  const after = messages.length - to;
  const next: string[] = [];
  if (before > 0) {
    const earlier = messages[Math.max(0, from - span - 1)] as StoredMessage;
    next.push(`${before} earlier message(s): around_message_id=${earlier.id}`);
  }
  if (after > 0) {
    const later = messages[Math.min(messages.length - 1, to + span)] as StoredMessage;
    next.push(`${after} later message(s): around_message_id=${later.id}`);
  }
  return {
    mode: "scroll",
    session: sessionMeta(session),
    around_message_id: anchorId,
    window: span,
    messages_before: before,
    messages_after: after,
    messages: messages.slice(from, to).map((m) => shapeMessage(m, anchorId)),
    ...(next.length > 0
      ? { next: `To keep scrolling, pass the same session_id with ${next.join("; ")}.` }
      : {}),
  };
}

async function read(store: SessionStore, session: SessionRecord) {
  const messages = await store.getMessages(session.id);
  const whole = messages.length <= READ_WHOLE;
  const shown = whole ? messages : [...messages.slice(0, READ_HEAD), ...messages.slice(-READ_TAIL)];
  return {
    mode: "read",
    session: sessionMeta(session),
    message_count: messages.length,
    messages: shown.map((m) => shapeMessage(m)),
    ...(whole
      ? {}
      : {
          omitted: messages.length - shown.length,
          next:
            `Showing the first ${READ_HEAD} and last ${READ_TAIL} of ${messages.length} messages. ` +
            "Pass around_message_id (any id above) with this session_id to read the middle.",
        }),
  };
}

async function browse(store: SessionStore, limit: number, currentSessionId: string) {
  const recent: SessionSummary[] = (await store.recent(limit + 20, currentSessionId))
    .filter((s) => !HIDDEN_SOURCES.has(s.source) && s.id !== currentSessionId)
    .slice(0, limit);
  return {
    mode: "browse",
    count: recent.length,
    sessions: recent.map((s) => ({
      session_id: s.id,
      title: s.title,
      source: s.source,
      started: formatTime(s.startedAt),
      last_active: formatTime(s.lastActiveAt),
      message_count: s.messageCount,
      preview: s.preview,
    })),
    ...(recent.length === 0
      ? { message: "No earlier sessions are recorded yet." }
      : { next: "Pass query to search these sessions, or session_id to read one." }),
  };
}

function sessionMeta(session: SessionRecord) {
  return {
    session_id: session.id,
    title: session.title,
    source: session.source,
    model: session.model,
    started: formatTime(session.startedAt),
  };
}

interface ShapedMessage {
  id: number;
  role: Role;
  when: string;
  content: string;
  content_chars?: number;
  tool_name?: string;
  tool_calls?: string[];
  anchor?: true;
}

/** One message as the model reads it: text cut to a size that depends on its role. */
function shapeMessage(message: StoredMessage, anchorId?: number): ShapedMessage {
  const isAnchor = message.id === anchorId;
  const images = Array.isArray(message.content)
    ? message.content.filter((p) => p.type === "image_url").length
    : 0;
  let text = stripAnsi(messageText(message));
  if (images > 0) text = `${text}${text ? " " : ""}[${images} image${images > 1 ? "s" : ""}]`;
  const max = isAnchor ? ANCHOR_CHARS : message.role === "tool" ? TOOL_RESULT_CHARS : TEXT_CHARS;
  const shaped: ShapedMessage = {
    id: message.id,
    role: message.role,
    when: formatTime(message.timestamp),
    content: cut(text, max),
  };
  if (text.length > max) shaped.content_chars = text.length;
  if (message.toolName) shaped.tool_name = message.toolName;
  if (message.toolCalls && message.toolCalls.length > 0) {
    shaped.tool_calls = message.toolCalls.map(
      (c) => `${c.function.name}(${argsPreview(c.function.arguments)})`,
    );
  }
  if (isAnchor) shaped.anchor = true;
  return shaped;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  // Never split a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… [${text.length - end} more characters]`;
}

/** The most telling argument of a tool call, on one short line. */
function argsPreview(raw: string, max = 80): string {
  let value: unknown = raw;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const values = Object.values(parsed as Record<string, unknown>);
      value = values.find((v) => typeof v === "string") ?? (values.length > 0 ? JSON.stringify(parsed) : "");
    }
  } catch {
    // Unparseable arguments are shown as they were stored.
  }
  const text = String(value).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}

/** Local `YYYY-MM-DD HH:MM`: short, sortable, and what the user would call the time. */
function formatTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return "unknown";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
