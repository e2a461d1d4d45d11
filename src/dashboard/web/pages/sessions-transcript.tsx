/**
 * One session (`#/sessions/<id>`): its facts, lineage (each related session a link), export,
 * rename and delete, and the transcript: user and assistant text as markdown, tool calls, tool
 * results, reasoning and the system prompt collapsed. Opened from a search hit
 * (`?q=…&hit=<message id>`), it scrolls to that message and marks the words searched for.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, apiDownload, apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { fmtCost, fmtNumber, fmtTime } from "../format.js";
import { useApi } from "../hooks.js";
import { href, navigate, type Route } from "../router.js";
import { contentText, MessageView, markTerms, type TranscriptMessage } from "./sessions-messages.js";
import type { SessionRow } from "./sessions-types.js";

interface SessionDetail extends SessionRow {
  system_prompt: string | null;
  inputTokens: number;
  outputTokens: number;
  estimatedCostUsd: number | null;
  actualCostUsd: number | null;
  cwd: string | null;
}

interface TranscriptAnswer {
  session: SessionDetail;
  messages: TranscriptMessage[];
}

interface Lineage {
  ancestors: SessionRow[];
  children: SessionRow[];
}

/** Messages drawn at first; long sessions show more on request (each step as many again). */
const SHOWN_AT_FIRST = 300;

const label = (s: { id: string; title: string | null; preview?: string }) => s.title || s.preview || s.id;

/** What a child is to this session: a subagent, the continuation after compression, or a branch. */
function childKind(session: SessionRow, child: SessionRow): string {
  if (child.source === "subagent") return "subagent";
  if (session.endReason === "compression") return "continuation";
  return "branch";
}

function LineageView({ session }: { session: SessionRow }) {
  const lineage = useApi<Lineage>(`sessions/${encodeURIComponent(session.id)}/lineage`);
  if (lineage.error) return <ErrorNote error={lineage.error} onRetry={lineage.reload} />;
  const data = lineage.data;
  if (!data || (data.ancestors.length === 0 && data.children.length === 0)) return null;
  return (
    <nav class="card lineage" aria-label="Lineage">
      <h2>Lineage</h2>
      {data.ancestors.length ? (
        <p>
          <span class="muted">Comes from </span>
          {data.ancestors.map((a, i) => (
            <span key={a.id}>
              {i > 0 ? " ← " : ""}
              <a href={href("sessions", [a.id])}>{label(a)}</a>
            </span>
          ))}
        </p>
      ) : null}
      {data.children.length ? (
        <ul>
          {data.children.map((c) => (
            <li key={c.id}>
              <Badge tone="info">{childKind(session, c)}</Badge>{" "}
              <a href={href("sessions", [c.id])}>{label(c)}</a>{" "}
              <span class="muted">{fmtTime(c.startedAt)}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </nav>
  );
}

function RenameForm({ session, done }: { session: SessionRow; done: (renamed: boolean) => void }) {
  const [title, setTitle] = useState(session.title ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const next = title.trim();
      await apiSend("PATCH", `sessions/${encodeURIComponent(session.id)}`, {
        title: next === "" ? null : next,
      });
      notify(next ? `Renamed to “${next}”` : "Title cleared");
      done(true);
    } catch (e) {
      const taken = e instanceof ApiFailure && e.status === 409;
      setError(taken ? `Another session already has that title. ${e.message}` : String((e as Error).message));
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") done(false);
      }}
    >
      <label for="session-title">Title</label>
      <input
        ref={input}
        id="session-title"
        value={title}
        maxLength={200}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? "rename-error" : undefined}
        onInput={(e) => setTitle((e.currentTarget as HTMLInputElement).value)}
      />
      <button type="submit" class="btn primary" disabled={busy}>
        Save
      </button>
      <button type="button" class="btn" onClick={() => done(false)}>
        Cancel
      </button>
      {error ? (
        <p id="rename-error" class="note error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

export function Transcript({ id, route }: { id: string; route: Route }) {
  const answer = useApi<TranscriptAnswer>(`sessions/${encodeURIComponent(id)}`);
  const [renaming, setRenaming] = useState(false);
  const [shown, setShown] = useState(SHOWN_AT_FIRST);
  const body = useRef<HTMLDivElement>(null);
  const q = route.query.get("q") ?? "";
  const hit = route.query.get("hit");
  const session = answer.data?.session;

  useEffect(() => {
    setShown(SHOWN_AT_FIRST);
    setRenaming(false);
  }, [id]);

  useEffect(() => {
    // The list's link that opened this view is gone: put focus on this view's heading.
    if (document.activeElement === document.body || !document.activeElement)
      document.getElementById("page-title")?.focus({ preventScroll: true });
  }, [id]);

  useEffect(() => {
    if (!answer.data || !body.current) return;
    if (q) markTerms(body.current, q);
    if (hit) {
      const target = document.getElementById(`msg-${hit}`);
      if (target) {
        target.classList.add("hit");
        // A hit in a tool call's arguments (no word marked in the text) opens the calls to show it.
        if (target.dataset["collapsed"] === "1" || !target.querySelector("mark"))
          for (const details of target.querySelectorAll("details")) details.open = true;
        target.scrollIntoView({ block: "center" });
      }
    }
  }, [answer.data, q, hit]);

  if (answer.error) {
    const missing = answer.error instanceof ApiFailure && answer.error.status === 404;
    return (
      <section>
        <PageHeader title="Session" />
        <ErrorNote error={missing ? `No session ${id}: it may have been deleted.` : answer.error} />
        <a href={href("sessions")}>← All sessions</a>
      </section>
    );
  }
  if (!session) return <Loading label="Loading the transcript…" />;

  const exportIt = () =>
    apiDownload(
      `sessions/${encodeURIComponent(session.id)}/export`,
      `hermes-session-${session.id}.jsonl`,
    ).then(() => notify("Export downloaded"), notifyError);
  const remove = async () => {
    const ok = await confirmAction({
      title: "Delete this session?",
      body: `“${name}” and its ${session.messageCount} messages are removed from state.db for good. Sessions that continue it keep living.`,
      confirm: "Delete",
      danger: true,
    });
    if (!ok) return;
    try {
      await apiSend("DELETE", `sessions/${encodeURIComponent(session.id)}`);
      notify(`Deleted “${name}”`);
      navigate("sessions");
    } catch (e) {
      notifyError(e);
    }
  };
  const cost = session.actualCostUsd ?? session.estimatedCostUsd;
  const all = answer.data?.messages ?? [];
  // Untitled: the first thing the user asked, as the list shows it, else the id.
  const firstAsk = contentText(all.find((m) => m.role === "user")?.content ?? null)
    .replace(/\s+/g, " ")
    .trim();
  const name = session.title || (firstAsk.length > 80 ? `${firstAsk.slice(0, 79)}…` : firstAsk) || session.id;
  const total = all.length;
  // A search hit further down than what is drawn is drawn too.
  const hitAt = hit ? all.findIndex((m) => String(m.id) === hit) : -1;
  const visible = Math.max(shown, hitAt + 1);
  return (
    <section class="transcript-page">
      <p class="back">
        <a href={href("sessions", [], { q: q || undefined })}>← {q ? "Search results" : "All sessions"}</a>
      </p>
      <PageHeader
        title={name}
        actions={
          renaming ? null : (
            <>
              <button type="button" class="btn" onClick={() => setRenaming(true)}>
                Rename
              </button>
              <button type="button" class="btn" onClick={() => void exportIt()}>
                Export JSONL
              </button>
              <button type="button" class="btn danger" onClick={() => void remove()}>
                Delete
              </button>
            </>
          )
        }
      />
      {renaming ? (
        <RenameForm
          session={session}
          done={(renamed) => {
            setRenaming(false);
            if (renamed) answer.reload();
          }}
        />
      ) : null}
      <Facts
        items={[
          ["id", <code key="id">{session.id}</code>],
          ["source", <Badge key="s">{session.source}</Badge>],
          ["model", session.model ?? "–"],
          ["started", fmtTime(session.startedAt)],
          [
            "ended",
            session.endedAt
              ? `${fmtTime(session.endedAt)}${session.endReason ? ` (${session.endReason})` : ""}`
              : "open",
          ],
          ["messages", `${fmtNumber(session.messageCount)} (${fmtNumber(session.toolCallCount)} tool calls)`],
          ["tokens", `${fmtNumber(session.inputTokens)} in / ${fmtNumber(session.outputTokens)} out`],
          ["cost", cost === null ? "–" : fmtCost(cost)],
        ]}
      />
      <LineageView session={session} />
      <h2>Transcript</h2>
      <div class="transcript" ref={body}>
        {session.system_prompt ? (
          <details class="msg system">
            <summary>System prompt ({fmtNumber(session.system_prompt.length)} characters)</summary>
            <pre>{session.system_prompt}</pre>
          </details>
        ) : null}
        {answer.data?.messages.length ? (
          answer.data.messages.slice(0, visible).map((m) => <MessageView key={m.id} message={m} />)
        ) : (
          <p class="muted">This session has no messages.</p>
        )}
        {total > visible ? (
          <button type="button" class="btn" onClick={() => setShown(visible + SHOWN_AT_FIRST)}>
            Show {fmtNumber(Math.min(SHOWN_AT_FIRST, total - visible))} more of {fmtNumber(total - visible)}{" "}
            remaining messages
          </button>
        ) : null}
      </div>
    </section>
  );
}
