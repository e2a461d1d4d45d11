/**
 * The Sessions page: every stored session newest first, paged on the server, or the full-text
 * search's hits with their highlighted snippets; filters by source, model and dates kept in the
 * URL (`#/sessions?q=pelican&source=cli&from=2026-11-01`). `#/sessions/<id>` is one transcript
 * (sessions-transcript.tsx).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { Badge, Empty, ErrorNote, Loading, PageHeader, Pager } from "../components/ui.js";
import { fmtNumber, fmtRelative, fmtTime } from "../format.js";
import { useApi, useDebounced } from "../hooks.js";
import { href, type Route, setQuery } from "../router.js";
import { Transcript } from "./sessions-transcript.js";
import type { SessionRow } from "./sessions-types.js";
import type { PageDef } from "./types.js";

const PAGE = 25;

interface ListAnswer {
  sessions: SessionRow[];
  more: boolean;
}

interface Hit {
  messageId: number;
  sessionId: string;
  role: string;
  snippet_html: string;
  timestamp: number;
  sessionTitle: string | null;
  source: string;
  model: string | null;
}

interface SearchAnswer {
  hits: Hit[];
  more: boolean;
}

interface Facets {
  sessions: number;
  messages: number;
  bySource: Record<string, number>;
  models: string[];
}

/** The filters as kept in the URL. */
interface Filters {
  q: string;
  source: string;
  model: string;
  from: string;
  to: string;
  offset: number;
  /**
   * The cursor of the list's "Older" paging: rows started before this time (`startedAt` of the last
   * row seen), after `skip` rows started exactly then; the server seeks instead of counting `offset`
   * rows. `offset` still numbers the rows on the page.
   */
  before: string;
  skip: number;
}

function filtersOf(query: URLSearchParams): Filters {
  const offset = Number(query.get("offset") ?? "0");
  return {
    q: query.get("q") ?? "",
    source: query.get("source") ?? "",
    model: query.get("model") ?? "",
    from: query.get("from") ?? "",
    to: query.get("to") ?? "",
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
    before: query.get("before") ?? "",
    skip: Number(query.get("skip") ?? "0") || 0,
  };
}

function toUrl(f: Filters): Record<string, string | undefined> {
  return {
    q: f.q || undefined,
    source: f.source || undefined,
    model: f.model || undefined,
    from: f.from || undefined,
    to: f.to || undefined,
    offset: f.offset ? String(f.offset) : undefined,
    before: f.before || undefined,
    skip: f.before && f.skip ? String(f.skip) : undefined,
  };
}

/** A `YYYY-MM-DD` from a date input as the start of that local day (ISO), plus `days`. */
function localDay(day: string, days = 0): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days).toISOString();
}

/** The API query for these filters: `to` is inclusive on the page, `until` exclusive in the API. */
function apiQuery(f: Filters): Record<string, string | number | undefined> {
  return {
    q: f.q.trim() || undefined,
    source: f.source || undefined,
    model: f.model || undefined,
    since: localDay(f.from),
    until: localDay(f.to, 1),
    ...(f.before && !f.q.trim()
      ? { before: f.before, skip: f.skip || undefined }
      : { offset: f.offset || undefined }),
    limit: PAGE,
  };
}

function sessionLabel(s: { id: string; title: string | null; preview?: string }): string {
  return s.title || s.preview || s.id;
}

function SearchBox({ value, onChange }: { value: string; onChange: (q: string) => void }) {
  const [text, setText] = useState(value);
  const typed = useRef(false);
  const debounced = useDebounced(text, 300);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    // Follows the URL (back button, a link) unless the person is typing.
    if (!typed.current) setText(value);
  }, [value]);
  useEffect(() => {
    if (typed.current && debounced !== value) onChange(debounced);
    typed.current = false;
  }, [debounced]);
  useEffect(() => {
    // "/" jumps to the search box from anywhere on the page that is not a text field.
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const editing =
        target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
      if (e.key === "/" && !editing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        input.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <form
      class="session-search"
      onSubmit={(e) => {
        e.preventDefault();
        typed.current = false;
        onChange(text);
      }}
    >
      <label class="sr-only" for="session-q">
        Search sessions
      </label>
      <input
        ref={input}
        id="session-q"
        type="search"
        aria-describedby="session-q-hint"
        value={text}
        onInput={(e) => {
          typed.current = true;
          setText((e.currentTarget as HTMLInputElement).value);
        }}
      />
      <button type="submit" class="btn primary">
        Search
      </button>
      <p id="session-q-hint" class="muted search-hint">
        Search every message: words, <code>"a phrase"</code>, <code>prefix*</code>, <code>OR</code>,{" "}
        <code>NOT</code>. Press <kbd>/</kbd> to come back here.
      </p>
    </form>
  );
}

function FilterBar({
  f,
  facets,
  update,
}: {
  f: Filters;
  facets: Facets | null;
  update: (p: Partial<Filters>) => void;
}) {
  const sources = Object.entries(facets?.bySource ?? {}).sort((a, b) => b[1] - a[1]);
  if (f.source && !sources.some(([s]) => s === f.source)) sources.push([f.source, 0]);
  const value = (e: Event) => (e.currentTarget as HTMLInputElement | HTMLSelectElement).value;
  const active = f.source || f.model || f.from || f.to;
  return (
    <div class="toolbar session-filters">
      <label>
        <span class="filter-label">Source</span>
        <select value={f.source} onChange={(e) => update({ source: value(e) })}>
          <option value="">All sources</option>
          {sources.map(([s, n]) => (
            <option key={s} value={s}>
              {n ? `${s} (${fmtNumber(n)})` : s}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="filter-label">Model</span>
        <input
          type="text"
          list="session-models"
          value={f.model}
          onChange={(e) => update({ model: value(e).trim() })}
        />
        <datalist id="session-models">
          {(facets?.models ?? []).map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </label>
      <label>
        <span class="filter-label">From</span>
        <input type="date" value={f.from} onChange={(e) => update({ from: value(e) })} />
      </label>
      <label>
        <span class="filter-label">To</span>
        <input type="date" value={f.to} onChange={(e) => update({ to: value(e) })} />
      </label>
      {active ? (
        <button type="button" class="btn" onClick={() => update({ source: "", model: "", from: "", to: "" })}>
          Clear filters
        </button>
      ) : null}
    </div>
  );
}

function SessionTable({ rows }: { rows: SessionRow[] }) {
  return (
    <div class="table-wrap">
      <table class="session-table">
        <thead>
          <tr>
            <th>Session</th>
            <th>Source</th>
            <th class="hide-narrow">Model</th>
            <th class="num hide-narrow">Messages</th>
            <th>Started</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s, i) => (
            <tr key={s.id} class="session-row">
              <td class="session-cell">
                {/* elementtiming: the bench reads when the first row is painted (Element Timing API). */}
                <a href={href("sessions", [s.id])} {...(i === 0 ? { elementtiming: "first-session" } : {})}>
                  {sessionLabel(s)}
                </a>
                {s.title && s.preview ? <div class="muted preview">{s.preview}</div> : null}
                {s.parentSessionId ? <div class="muted preview">child of {s.parentSessionId}</div> : null}
              </td>
              <td>
                <Badge tone={s.source === "cli" ? "plain" : "info"}>{s.source}</Badge>
              </td>
              <td class="hide-narrow">{s.model ?? "–"}</td>
              <td class="num hide-narrow">{fmtNumber(s.messageCount)}</td>
              <td title={fmtTime(s.startedAt)}>{fmtRelative(s.startedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function HitList({ hits, q }: { hits: Hit[]; q: string }) {
  return (
    <ol class="hit-list">
      {hits.map((h) => (
        <li key={h.messageId} class="card hit">
          <div class="hit-head">
            <a href={href("sessions", [h.sessionId], { q, hit: String(h.messageId) })}>
              {h.sessionTitle || h.sessionId}
            </a>
            <span class="muted">
              <Badge>{h.role}</Badge> <Badge tone="info">{h.source}</Badge>{" "}
              <span title={fmtTime(h.timestamp)}>{fmtRelative(h.timestamp)}</span>
            </span>
          </div>
          {/* The server escaped the text; only its <mark> spans are markup. */}
          <p class="snippet" dangerouslySetInnerHTML={{ __html: h.snippet_html }} />
        </li>
      ))}
    </ol>
  );
}

function SessionList({ route }: { route: Route }) {
  const f = filtersOf(route.query);
  const searching = f.q.trim() !== "";
  const facets = useApi<Facets>("sessions/facets");
  const list = useApi<ListAnswer & SearchAnswer>("sessions", apiQuery(f));
  const update = (patch: Partial<Filters>) =>
    setQuery(toUrl({ ...f, offset: 0, before: "", skip: 0, ...patch }));
  const data = list.data;
  const page = (offset: number) => {
    const rows = data?.sessions ?? [];
    const last = rows[rows.length - 1];
    if (searching || offset < f.offset || !last) {
      // Search pages within its 100 hits; newer list pages are near the top, so offsets are cheap there.
      setQuery(toUrl({ ...f, offset, before: "", skip: 0 }));
      return;
    }
    const at = String(last.startedAt);
    const same = rows.filter((r) => String(r.startedAt) === at).length;
    setQuery(toUrl({ ...f, offset, before: at, skip: (f.before === at ? f.skip : 0) + same }));
  };
  const count = searching ? (data?.hits?.length ?? 0) : (data?.sessions?.length ?? 0);
  const total = facets.data
    ? `${fmtNumber(facets.data.sessions)} sessions, ${fmtNumber(facets.data.messages)} messages`
    : "";
  return (
    <section class="sessions-page">
      <PageHeader title="Sessions">{total || "Every conversation this Hermes home has recorded."}</PageHeader>
      <SearchBox value={f.q} onChange={(q) => update({ q })} />
      <FilterBar f={f} facets={facets.data} update={update} />
      {list.error ? <ErrorNote error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !data ? <Loading /> : null}
      {data ? (
        <div aria-busy={list.loading} class={list.loading ? "stale" : ""}>
          <p class="sr-only" role="status">
            {searching ? `${count} hits` : `${count} sessions`}
          </p>
          {searching && data.hits ? (
            data.hits.length ? (
              <HitList hits={data.hits} q={f.q} />
            ) : (
              <Empty>
                No message matches “{f.q}”. Try fewer words, a prefix such as <code>deploy*</code>, or clear
                the filters.
              </Empty>
            )
          ) : null}
          {!searching && data.sessions ? (
            data.sessions.length ? (
              <SessionTable rows={data.sessions} />
            ) : (
              <Empty>
                {f.source || f.model || f.from || f.to
                  ? "No session matches these filters. Clear them to see every session."
                  : 'No sessions yet. Start one with `hermes` or `hermes -q "…"`, or from the Chat page.'}
              </Empty>
            )
          ) : null}
          <Pager offset={f.offset} limit={PAGE} count={count} more={data.more} onPage={page} />
        </div>
      ) : null}
    </section>
  );
}

function Sessions({ route }: { route: Route }) {
  const id = route.parts[0];
  return id ? <Transcript id={id} route={route} /> : <SessionList route={route} />;
}

export const sessionsPage: PageDef = { id: "sessions", title: "Sessions", order: 10, component: Sessions };
