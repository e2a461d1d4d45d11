/**
 * `#/chat`, `#/chat/<session id>`: talk to the agent. A message goes to `POST /api/chat`, whose
 * answer streams back as events (text, tool lines, approval questions) into the transcript; the
 * answer is plain text while it streams and markdown once done. Stop interrupts the turn as Ctrl+C
 * does. Resuming shows the stored conversation first. What is typed is never lost: the box keeps
 * text typed during a turn, and a message whose turn failed goes back into an empty box.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, apiGet, apiSend, apiStream } from "../api.js";
import { notifyError } from "../components/toast.js";
import { ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { href, type Route } from "../router.js";
import { ChatItem } from "./chat-items.js";
import {
  applyEvent,
  errorItem,
  historyItems,
  type Item,
  type StoredMessage,
  userItem,
} from "./chat-state.js";
import type { PageDef } from "./types.js";

interface StoredSession {
  session: { id: string; title?: string | null; source?: string };
  messages: StoredMessage[];
}

function Chat({ route }: { route: Route }) {
  const routeId = route.parts[0] ?? null;
  const [sessionId, setSessionId] = useState<string | null>(routeId);
  const [title, setTitle] = useState<string | null>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [draft, setDraft] = useState("");
  const [running, setRunning] = useState(false);
  const [loading, setLoading] = useState(routeId !== null);
  const [loadError, setLoadError] = useState<Error | null>(null);
  const abort = useRef<AbortController | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);
  // The conversation this page shows; events of an older stream never reach a newer one.
  const current = useRef<string | null>(routeId);

  // Opening `#/chat/<id>` of another conversation shows its history; the page's own id updates do not.
  useEffect(() => {
    if (routeId === current.current && items.length > 0) return;
    abort.current?.abort();
    current.current = routeId;
    setSessionId(routeId);
    setItems([]);
    setTitle(null);
    setLoadError(null);
    if (!routeId) {
      setLoading(false);
      return;
    }
    const controller = new AbortController();
    setLoading(true);
    apiGet<StoredSession>(`sessions/${encodeURIComponent(routeId)}`, {}, controller.signal).then(
      (data) => {
        setItems(historyItems(data.messages));
        setTitle(data.session.title ?? null);
        setLoading(false);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setLoadError(error instanceof Error ? error : new Error(String(error)));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [routeId]);

  // Leaving the page ends the stream (the server stops the turn: nobody could answer it).
  useEffect(() => () => abort.current?.abort(), []);

  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" });
  }, [items]);

  const send = useCallback(async () => {
    const text = draft;
    if (!text.trim() || running) return;
    setDraft("");
    setItems((list) => [...list, userItem(text)]);
    setRunning(true);
    const controller = new AbortController();
    abort.current = controller;
    let failed = false;
    // A command that moved to another session (`/new`, `/resume`, `/branch`): its transcript follows.
    let switchedTo: { id: string; stored: boolean } | null = null;
    try {
      await apiStream(
        "chat",
        { message: text, ...(sessionId ? { session_id: sessionId } : {}) },
        (event, data) => {
          if (event === "session" && data && typeof data === "object") {
            const record = data as {
              session_id?: string;
              title?: string | null;
              compressed_from?: string;
              stored?: boolean;
            };
            if (record.session_id && current.current && record.session_id !== current.current) {
              if (!record.compressed_from)
                switchedTo = { id: record.session_id, stored: record.stored !== false };
            }
            if (record.session_id) {
              current.current = record.session_id;
              setSessionId(record.session_id);
              // The address shows the conversation (kept without a new history entry or reload).
              history.replaceState(history.state, "", href("chat", [record.session_id]));
            }
            if (record.title) setTitle(record.title);
          }
          if (event === "error") failed = true;
          if (event === "done" && data && typeof data === "object") {
            const reason = (data as { reason?: string }).reason;
            if (reason === "error") failed = true;
          }
          setItems((list) => applyEvent(list, event, data));
        },
        controller.signal,
      );
    } catch (error) {
      if (!controller.signal.aborted) {
        failed = true;
        const message =
          error instanceof ApiFailure && error.status === 409
            ? `${error.message}.`
            : error instanceof Error
              ? error.message
              : String(error);
        setItems((list) => [...applyEvent(list, "done", {}), errorItem(message)]);
      }
    } finally {
      if (abort.current === controller) abort.current = null;
      setRunning(false);
      // A failed turn gives the message back for another try, unless something new was typed.
      if (failed) setDraft((now) => (now.trim() ? now : text));
      box.current?.focus();
    }
    // Set inside the event callback, which TypeScript's narrowing does not follow.
    const target = switchedTo as { id: string; stored: boolean } | null;
    if (target) await showSwitched(target.id, target.stored);
  }, [draft, running, sessionId]);

  /** After a command changed the session: its stored transcript, the command's replies after it. */
  const showSwitched = async (id: string, stored: boolean) => {
    const replies = (list: Item[]) => {
      const start = list.findLastIndex((item) => item.kind === "user");
      return list.slice(start).filter((item) => item.kind !== "user");
    };
    if (!stored) {
      setItems((list) => replies(list));
      setTitle(null);
      return;
    }
    try {
      const data = await apiGet<StoredSession>(`sessions/${encodeURIComponent(id)}`);
      if (current.current !== id) return;
      setItems((list) => [...historyItems(data.messages), ...replies(list)]);
      setTitle(data.session.title ?? null);
    } catch (error) {
      if (current.current !== id) return;
      // A new session has no stored row until its first message: an empty transcript.
      if (error instanceof ApiFailure && error.status === 404) {
        setItems((list) => replies(list));
        setTitle(null);
      } else notifyError(error);
    }
  };

  const stop = useCallback(() => {
    if (!sessionId) return;
    apiSend("POST", `chat/${encodeURIComponent(sessionId)}/stop`).catch(notifyError);
  }, [sessionId]);

  const answer = useCallback(
    (id: string, decision: string) => {
      if (!sessionId) return;
      apiSend("POST", `chat/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(id)}`, {
        decision,
      }).catch(notifyError);
      box.current?.focus();
    },
    [sessionId],
  );

  const reply = useCallback(
    (id: string, text: string) => {
      if (!sessionId) return;
      apiSend("POST", `chat/${encodeURIComponent(sessionId)}/questions/${encodeURIComponent(id)}`, {
        answer: text,
      }).catch(notifyError);
      box.current?.focus();
    },
    [sessionId],
  );

  const newChat = () => {
    abort.current?.abort();
    current.current = null;
    setSessionId(null);
    setItems([]);
    setTitle(null);
    history.replaceState(history.state, "", href("chat"));
    box.current?.focus();
  };

  return (
    <section class="chat-page">
      <PageHeader
        title="Chat"
        actions={
          <>
            {sessionId ? (
              <a class="btn" href={href("sessions", [sessionId])}>
                Transcript in Sessions
              </a>
            ) : null}
            <button type="button" class="btn" onClick={newChat} disabled={running}>
              New chat
            </button>
          </>
        }
      >
        {title ? `${title} · ` : ""}
        {sessionId
          ? `session ${sessionId}`
          : "A new conversation with the agent, with this home's tools and approvals."}
      </PageHeader>
      {loading ? <Loading label="Loading the conversation…" /> : null}
      {loadError ? <ErrorNote error={loadError} /> : null}
      <div class="chat-log" aria-label="Conversation" role="log">
        {items.length === 0 && !loading ? (
          <p class="empty muted">
            Ask anything. Commands work too: type <code>/help</code>. Dangerous commands wait for your answer
            here.
          </p>
        ) : null}
        {items.map((item) => (
          <ChatItem key={item.key} item={item} onAnswer={answer} onReply={reply} />
        ))}
        <div ref={end} />
      </div>
      <p class="sr-only" role="status">
        {running ? "Hermes is answering" : ""}
      </p>
      <form
        class="chat-form"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label class="sr-only" for="chat-input">
          Message
        </label>
        <div class="chat-input-wrap">
          <textarea
            id="chat-input"
            ref={box}
            rows={3}
            value={draft}
            aria-describedby="chat-input-hint"
            onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send();
              }
            }}
          />
          <p id="chat-input-hint" class="chat-hint muted">
            Enter sends, Shift+Enter starts a new line.
          </p>
        </div>
        <div class="chat-buttons">
          {running ? (
            <button type="button" class="btn danger" onClick={stop}>
              Stop
            </button>
          ) : null}
          <button type="submit" class="btn primary" disabled={running || !draft.trim()}>
            Send
          </button>
        </div>
      </form>
    </section>
  );
}

export const chatPage: PageDef = { id: "chat", title: "Chat", order: 20, component: Chat };
