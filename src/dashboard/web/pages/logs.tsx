/**
 * The Logs page: the end of agent.log, errors.log or gateway.log, filtered by level, session, text
 * and age, coloured by level (the level word stays in each line too). Follow polls
 * `GET /api/logs?after=<cursor>`, which answers only what was appended since the last answer, so a
 * long-open page costs the server a `stat` and the new bytes. Filters live in the URL
 * (`#/logs?name=errors&level=WARNING&follow=1`). Lines arrive redacted.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { apiGet } from "../api.js";
import { Empty, ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { fmtBytes } from "../format.js";
import { useApi, useDebounced } from "../hooks.js";
import { type Route, setQuery } from "../router.js";
import type { PageDef } from "./types.js";

interface LogAnswer {
  name: string;
  lines: string[];
  cursor: string;
  complete?: boolean;
  more?: boolean;
  reset?: "truncated" | "rotated";
  dropped?: number;
}

interface LogFiles {
  files: Array<{ name: string; file: string; exists: boolean; size: number; modified: string | null }>;
}

/** Lines kept on the page while following; older ones scroll away. */
const KEEP = 5000;
const POLL_MS = 1500;
const LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;
const SINCE: Array<[string, string]> = [
  ["", "any time"],
  ["15m", "last 15 minutes"],
  ["1h", "last hour"],
  ["1d", "last day"],
  ["1w", "last week"],
];
const COUNTS = ["200", "500", "2000"];

const LEVEL_IN_LINE = /^\S+(?: \S+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) /;

function levelOf(line: string): string {
  const level = LEVEL_IN_LINE.exec(line)?.[1];
  return level === "CRITICAL" ? "error" : (level?.toLowerCase() ?? "plain");
}

function Highlighted({ line, needle }: { line: string; needle: string }) {
  if (!needle) return <>{line}</>;
  const parts: Array<string | { mark: string }> = [];
  const lower = line.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, from)) {
    parts.push(line.slice(from, at), { mark: line.slice(at, at + needle.length) });
    from = at + needle.length;
  }
  parts.push(line.slice(from));
  return <>{parts.map((p, i) => (typeof p === "string" ? p : <mark key={i}>{p.mark}</mark>))}</>;
}

function LogsPage({ route }: { route: Route }) {
  const q = route.query;
  const name = q.get("name") ?? "agent";
  const level = q.get("level") ?? "";
  const since = q.get("since") ?? "";
  const count = q.get("lines") ?? "200";
  const follow = q.get("follow") === "1";
  const [sessionText, setSessionText] = useState(q.get("session") ?? "");
  const [searchText, setSearchText] = useState(q.get("q") ?? "");
  const session = useDebounced(sessionText.trim(), 300);
  const search = useDebounced(searchText.trim(), 300);
  const files = useApi<LogFiles>("logs/files");
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState<{ loading: boolean; error: Error | null; note: string }>({
    loading: true,
    error: null,
    note: "",
  });
  const cursor = useRef<string | null>(null);
  const view = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  const update = (change: Record<string, string | undefined>) => {
    const next: Record<string, string | undefined> = {};
    for (const [k, v] of q) next[k] = v;
    setQuery({ ...next, ...change });
  };

  useEffect(() => {
    const current: Record<string, string | undefined> = {};
    for (const [k, v] of q) current[k] = v;
    if ((current["session"] ?? "") !== session || (current["q"] ?? "") !== search) {
      setQuery({ ...current, session: session || undefined, q: search || undefined });
    }
  }, [session, search]);

  const filters = { name, level, since, session, q: search };
  const key = JSON.stringify(filters);

  // The tail: loaded again whenever a filter or the count changes.
  useEffect(() => {
    const controller = new AbortController();
    cursor.current = null;
    pinned.current = true;
    setState({ loading: true, error: null, note: "" });
    apiGet<LogAnswer>("logs", { ...filters, lines: count }, controller.signal).then(
      (answer) => {
        cursor.current = answer.cursor;
        setLines(answer.lines);
        setState({
          loading: false,
          error: null,
          note:
            answer.complete === false
              ? "Searched the newest 64 MiB only; narrow the filters to look further."
              : "",
        });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState({
          loading: false,
          error: error instanceof Error ? error : new Error(String(error)),
          note: "",
        });
      },
    );
    return () => controller.abort();
  }, [key, count]);

  // Follow: only what was appended after the cursor, every POLL_MS while the tab is visible.
  useEffect(() => {
    if (!follow) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      if (cursor.current !== null && !document.hidden) {
        try {
          const answer = await apiGet<LogAnswer>(
            "logs",
            { ...filters, after: cursor.current },
            controller.signal,
          );
          cursor.current = answer.cursor;
          if (answer.lines.length > 0) setLines((old) => [...old, ...answer.lines].slice(-KEEP));
          if (answer.reset) {
            setState((s) => ({
              ...s,
              note:
                answer.reset === "truncated"
                  ? "The log was truncated; reading from its start."
                  : "The log rotated.",
            }));
          }
          if (answer.more && !controller.signal.aborted) {
            timer = setTimeout(poll, 0);
            return;
          }
        } catch (error) {
          if (controller.signal.aborted) return;
          setState((s) => ({ ...s, error: error instanceof Error ? error : new Error(String(error)) }));
        }
      }
      if (!controller.signal.aborted) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [follow, key]);

  // Stay at the bottom while the reader is there; leave the scroll alone once they scroll up.
  useLayoutEffect(() => {
    const el = view.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [lines]);

  const onScroll = () => {
    const el = view.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };

  const fileList = files.data?.files ?? [];
  const needle = search.toLowerCase();
  const current = fileList.find((f) => f.name === name);
  return (
    <section class="logs-page">
      <PageHeader
        title="Logs"
        actions={
          <button
            type="button"
            class={`btn ${follow ? "primary" : ""}`}
            aria-pressed={follow}
            onClick={() => update({ follow: follow ? undefined : "1" })}
          >
            {follow ? "Following" : "Follow"}
          </button>
        }
      >
        The end of Hermes's log files, newest at the bottom; secrets are redacted.
      </PageHeader>
      <form class="toolbar logs-filters" onSubmit={(e) => e.preventDefault()}>
        <label class="inline-field">
          <span>File</span>
          <select
            value={name}
            onChange={(e) => update({ name: (e.currentTarget as HTMLSelectElement).value })}
          >
            {(fileList.length > 0
              ? fileList
              : [{ name: "agent", file: "agent.log", exists: true, size: 0 }]
            ).map((f) => (
              <option key={f.name} value={f.name}>
                {f.file}
                {f.exists ? ` (${fmtBytes(f.size)})` : " (none yet)"}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field">
          <span>Level</span>
          <select
            value={level}
            onChange={(e) => update({ level: (e.currentTarget as HTMLSelectElement).value || undefined })}
          >
            <option value="">all</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l} and above
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field">
          <span>Since</span>
          <select
            value={since}
            onChange={(e) => update({ since: (e.currentTarget as HTMLSelectElement).value || undefined })}
          >
            {(SINCE.some(([v]) => v === since) ? SINCE : [...SINCE, [since, `since ${since}`]]).map(
              ([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ),
            )}
          </select>
        </label>
        <label class="inline-field">
          <span>Lines</span>
          <select
            value={count}
            onChange={(e) => update({ lines: (e.currentTarget as HTMLSelectElement).value })}
          >
            {COUNTS.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field grow">
          <span>Session</span>
          <input
            type="search"
            value={sessionText}
            placeholder="session id or part of it"
            spellcheck={false}
            onInput={(e) => setSessionText((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label class="inline-field grow">
          <span>Search</span>
          <input
            type="search"
            value={searchText}
            placeholder="text in the line"
            onInput={(e) => setSearchText((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
      </form>
      {state.error ? <ErrorNote error={state.error} /> : null}
      {state.note ? (
        <p class="note warn" role="status">
          {state.note}
        </p>
      ) : null}
      {state.loading && lines.length === 0 ? <Loading /> : null}
      {!state.loading && lines.length === 0 && !state.error ? (
        <Empty>
          {current && !current.exists
            ? `No ${current.file} yet: it is written once Hermes runs (hermes chat, the gateway).`
            : "No line matches these filters. Widen the level or the time, or clear the search."}
          {follow ? " New lines appear here as they are written." : ""}
        </Empty>
      ) : null}
      {lines.length > 0 ? (
        <div
          class="log-view"
          ref={view}
          role="log"
          aria-live="off"
          aria-label={`${current?.file ?? name} lines`}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
          tabIndex={0}
          onScroll={onScroll}
        >
          {lines.map((line, i) => (
            <div key={i} class={`log-line lvl-${levelOf(line)}`}>
              <Highlighted line={line} needle={needle} />
            </div>
          ))}
        </div>
      ) : null}
      <p class="muted logs-status">
        {lines.length > 0 ? `${lines.length} lines` : ""}
        {follow ? " · following: new lines appear as they are written" : ""}
      </p>
    </section>
  );
}

export const logsPage: PageDef = { id: "logs", title: "Logs", order: 90, component: LogsPage };
