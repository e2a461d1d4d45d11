/**
 * `/api/sessions…`: the session store the CLI uses (state.db through `SessionStore`): a paginated
 * listing with filters, the FTS search with highlighted snippets, one transcript with its tool
 * calls, lineage, the JSONL export `hermes sessions export` writes, rename and delete.
 */
import { exportLine } from "../state/export-format.js";
import {
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
} from "../state/types.js";
import { ApiError, dateParam, field, intParam, type Route } from "./http.js";

/** Session ids as Hermes makes them (`20261126_101500_ab12cd`, uuids): nothing a path could abuse. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** A session row for the API: everything but the (large) system prompt. */
function brief(session: SessionRecord | SessionSummary): Record<string, unknown> {
  const { systemPrompt: _prompt, modelConfig: _config, ...rest } = session;
  return rest;
}

function storeError(error: unknown): never {
  if (error instanceof SessionStoreError) {
    const status =
      error.code === "not_found"
        ? 404
        : error.code === "title_taken" || error.code === "ambiguous"
          ? 409
          : error.code === "invalid"
            ? 400
            : 503;
    throw new ApiError(status, error.message);
  }
  throw error;
}

async function sessionOf(store: SessionStore, id: string): Promise<SessionRecord> {
  if (!SESSION_ID.test(id)) throw new ApiError(400, "not a session id");
  const session = await store.getSession(id);
  if (!session) throw new ApiError(404, `no session ${JSON.stringify(id)}`);
  return session;
}

/** `before`: a session's `startedAt` (epoch seconds) handed back as the list's cursor. */
function cursorParam(query: URLSearchParams): number | undefined {
  const raw = query.get("before");
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new ApiError(400, '"before" must be a startedAt from a listed session');
  return value;
}

/** The FTS query's `>>>`/`<<<` hit markers as `<mark>` spans of HTML-escaped text. */
export function highlightSnippet(snippet: string): string {
  const escaped = snippet.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return escaped.replace(/&#62;&#62;&#62;/g, "<mark>").replace(/&#60;&#60;&#60;/g, "</mark>");
}

/** How long the facets answer (totals, sources, models) is reused before the store is asked again. */
const FACETS_TTL_MS = 30_000;
/** Models offered in the filter are those of the newest this many sessions. */
const FACET_MODEL_WINDOW = 200;
/** The store answers at most this many search hits; the page pages within them. */
const SEARCH_MAX = 100;

export interface SessionFacets {
  sessions: number;
  messages: number;
  bySource: Record<string, number>;
  models: string[];
  oldest: number | null;
  newest: number | null;
}

export function sessionRoutes(store: SessionStore, now: () => number = Date.now): Route[] {
  let facets: { at: number; value: SessionFacets } | null = null;
  const forgetFacets = () => {
    facets = null;
  };
  const loadFacets = async (): Promise<SessionFacets> => {
    if (facets && now() - facets.at < FACETS_TTL_MS) return facets.value;
    // Each part is answered from an index (source, started_at, the smallest messages index), so this
    // stays a few milliseconds at 100k sessions; models come from the newest sessions only.
    const stats = await store.stats();
    const recent = await store.listSessions({ limit: FACET_MODEL_WINDOW, includeArchived: true });
    const models = [...new Set(recent.map((s) => s.model).filter((m): m is string => !!m))].sort();
    const value: SessionFacets = {
      sessions: stats.sessions,
      messages: stats.messages,
      bySource: stats.bySource,
      models,
      oldest: stats.oldestStartedAt,
      newest: stats.newestStartedAt,
    };
    facets = { at: now(), value };
    return value;
  };
  return [
    {
      method: "GET",
      path: "/api/sessions",
      summary:
        "list sessions newest first (limit ≤ 200, offset, or the cursor before + skip; source, model, since, until); with q, the full-text search: hits with highlighted snippets, paged within the best 100",
      handler: async ({ query }) => {
        const limit = intParam(query, "limit", 50, 200);
        const offset = intParam(query, "offset", 0, 10_000_000);
        const source = query.get("source") || undefined;
        const model = query.get("model") || undefined;
        const since = dateParam(query, "since");
        const until = dateParam(query, "until");
        const q = query.get("q");
        if (q !== null && q.trim() !== "") {
          // The store filters by source itself; model and dates are applied to its best 100 hits.
          const narrowed = model !== undefined || since !== undefined || until !== undefined;
          const wanted = narrowed ? SEARCH_MAX : Math.min(SEARCH_MAX, offset + limit + 1);
          const all =
            offset >= SEARCH_MAX
              ? []
              : await store.search({ query: q, limit: wanted, ...(source ? { source } : {}) });
          const hits = all
            .filter((h) => model === undefined || h.model === model)
            .filter(
              (h) =>
                (since === undefined || h.timestamp >= since) && (until === undefined || h.timestamp < until),
            );
          const page = hits.slice(offset, offset + limit);
          return {
            json: {
              query: q,
              offset,
              limit,
              hits: page.map((h) => ({ ...h, snippet_html: highlightSnippet(h.snippet) })),
              more: hits.length > offset + limit,
            },
          };
        }
        // The cursor: rows started at or before `before`, past the `skip` rows started exactly then
        // (already shown). The store seeks its started_at index there instead of counting `offset`
        // rows, which on an old page of a big store means reading every newer row.
        const before = cursorParam(query);
        const skip = intParam(query, "skip", 0, 10_000);
        const upper =
          before === undefined ? until : Math.min(until ?? Number.POSITIVE_INFINITY, before + 1e-6);
        const sessions = await store.listSessions({
          limit,
          offset: before === undefined ? offset : skip,
          ...(source ? { source } : {}),
          ...(model ? { model } : {}),
          ...(since !== undefined ? { startedAfter: since } : {}),
          ...(upper !== undefined ? { startedBefore: upper } : {}),
        });
        return { json: { offset, limit, sessions: sessions.map(brief), more: sessions.length === limit } };
      },
    },
    {
      method: "GET",
      path: "/api/sessions/facets",
      summary:
        "what the filters offer: session and message totals, sessions per source, models of the newest 200 sessions, oldest and newest start (cached 30 s)",
      handler: async () => ({ json: await loadFacets() }),
    },
    {
      method: "GET",
      path: "/api/sessions/:id",
      summary:
        "one session and its transcript (messages with tool calls and tool results; ?inactive=1 adds undone ones)",
      handler: async ({ params, query }) => {
        const session = await sessionOf(store, params["id"] ?? "");
        const messages = await store.getMessages(session.id, {
          includeInactive: query.get("inactive") === "1",
        });
        return {
          json: {
            session: { ...brief(session), system_prompt: session.systemPrompt },
            messages: messages.map((m) => ({
              id: m.id,
              role: m.role,
              content: m.content,
              tool_calls: m.toolCalls,
              tool_call_id: m.toolCallId,
              tool_name: m.toolName,
              timestamp: m.timestamp,
              finish_reason: m.finishReason,
              reasoning: m.reasoning,
              active: m.active,
            })),
          },
        };
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/lineage",
      summary:
        "a session's ancestors (compression parents, branch sources) and children (continuations, branches, subagents)",
      handler: async ({ params }) => {
        const session = await sessionOf(store, params["id"] ?? "");
        const ancestors: Record<string, unknown>[] = [];
        const seen = new Set([session.id]);
        let parent = session.parentSessionId;
        while (parent && !seen.has(parent) && ancestors.length < 100) {
          seen.add(parent);
          const row = await store.getSession(parent);
          if (!row) break;
          ancestors.push(brief(row));
          parent = row.parentSessionId;
        }
        const children = await store.listSessions({
          parentSessionId: session.id,
          limit: 200,
          includeArchived: true,
        });
        return { json: { session: brief(session), ancestors, children: children.map(brief) } };
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/export",
      summary: "the session as one JSONL line, the format of `hermes sessions export` (a download)",
      handler: async ({ params }) => {
        const session = await sessionOf(store, params["id"] ?? "");
        const lines: string[] = [];
        for await (const exported of store.exportSessions({ sessionId: session.id }))
          lines.push(exportLine(exported));
        return {
          download: `${lines.join("\n")}\n`,
          filename: `hermes-session-${session.id}.jsonl`,
          contentType: "application/x-ndjson; charset=utf-8",
        };
      },
    },
    {
      method: "PATCH",
      path: "/api/sessions/:id",
      summary: 'rename: body {"title": "..."} ({"title": null} clears it)',
      handler: async ({ params, body }) => {
        const session = await sessionOf(store, params["id"] ?? "");
        const title = body["title"] === null ? null : field(body, "title");
        try {
          const renamed = await store.setTitle(session.id, title);
          forgetFacets();
          return { json: { session: brief(renamed) } };
        } catch (error) {
          return storeError(error);
        }
      },
    },
    {
      method: "DELETE",
      path: "/api/sessions/:id",
      summary: "delete a session and its messages (its children keep living, unparented)",
      handler: async ({ params }) => {
        const session = await sessionOf(store, params["id"] ?? "");
        try {
          const { messages } = await store.deleteSession(session.id);
          forgetFacets();
          return { json: { deleted: session.id, messages } };
        } catch (error) {
          return storeError(error);
        }
      },
    },
  ];
}
