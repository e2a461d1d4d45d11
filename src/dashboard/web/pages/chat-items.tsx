/** How each transcript item of the chat page looks: messages, tool lines, approval cards, notes. */
import { useEffect, useRef, useState } from "preact/hooks";
import { Markdown } from "../components/markdown.js";
import type { Item } from "./chat-state.js";

const CHOICE_LABELS: Record<string, string> = {
  once: "Approve once",
  session: "Approve for this session",
  always: "Always approve",
  deny: "Deny",
};

function ToolLine({ item }: { item: Extract<Item, { kind: "tool" }> }) {
  const state =
    item.status === "running"
      ? "running…"
      : item.status === "failed"
        ? "failed"
        : item.durationMs !== null
          ? `${(item.durationMs / 1000).toFixed(1)} s`
          : "done";
  return (
    <details class={`chat-tool ${item.status}`}>
      <summary>
        <span class="chat-tool-icon" aria-hidden="true">
          {item.status === "running" ? "…" : item.status === "failed" ? "✗" : "✓"}
        </span>
        <code class="chat-tool-name">{item.name}</code>
        {item.preview ? <span class="chat-tool-preview">{item.preview}</span> : null}
        <span class="muted chat-tool-state">{state}</span>
      </summary>
      {item.progress.length > 0 ? (
        <ul class="chat-tool-progress muted">
          {item.progress.map((line, i) => (
            <li key={i}>{line}</li>
          ))}
        </ul>
      ) : null}
      {item.output.trim() ? <pre class="chat-tool-output">{item.output}</pre> : null}
      {item.result ? <pre class="chat-tool-result">{item.result}</pre> : null}
    </details>
  );
}

function ApprovalCard({
  item,
  onAnswer,
}: {
  item: Extract<Item, { kind: "approval" }>;
  onAnswer: (id: string, decision: string) => void;
}) {
  const first = useRef<HTMLButtonElement>(null);
  const open = item.decision === null;
  useEffect(() => {
    // The question needs the user now: focus goes to it (its safest answer first).
    if (open) first.current?.focus();
  }, [open]);
  const titleId = `approval-${item.id}`;
  const ordered = [...item.choices].sort((a, b) => (a === "deny" ? -1 : b === "deny" ? 1 : 0));
  return (
    <section class={`card chat-approval ${open ? "open" : "answered"}`} aria-labelledby={titleId}>
      <h2 id={titleId} class="chat-approval-title">
        {item.protectedPath ? "🔒 Approval needed (protected path)" : "⚠️ Approval needed"}
      </h2>
      <p class="muted">{item.reason}</p>
      <pre class="chat-approval-command">{item.command}</pre>
      {open ? (
        <>
          <p class="muted small">
            {item.protectedPath
              ? "Only you can approve this, one action at a time; it is never remembered. "
              : ""}
            No answer within {item.timeoutS} s denies it.
          </p>
          <fieldset class="actions chat-approval-choices">
            <legend class="sr-only">Answer the approval</legend>
            {ordered.map((choice, i) => (
              <button
                key={choice}
                ref={i === 0 ? first : undefined}
                type="button"
                class={`btn ${choice === "deny" ? "danger" : choice === "once" ? "primary" : ""}`}
                onClick={() => onAnswer(item.id, choice)}
              >
                {CHOICE_LABELS[choice] ?? choice}
              </button>
            ))}
          </fieldset>
        </>
      ) : (
        <p class={`badge ${item.decision === "deny" ? "bad" : "ok"}`} role="status">
          {item.decision === "deny"
            ? item.by === "timeout"
              ? "Denied: no answer in time"
              : item.by === "stopped"
                ? "Denied: the turn was stopped"
                : "Denied"
            : `Approved (${item.decision})`}
        </p>
      )}
    </section>
  );
}

function QuestionCard({
  item,
  onReply,
}: {
  item: Extract<Item, { kind: "question" }>;
  onReply: (id: string, answer: string) => void;
}) {
  const [text, setText] = useState("");
  const first = useRef<HTMLButtonElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const open = item.answer === null;
  useEffect(() => {
    if (open) (first.current ?? input.current)?.focus();
  }, [open]);
  const titleId = `question-${item.id}`;
  return (
    <section class={`card chat-question ${open ? "open" : "answered"}`} aria-labelledby={titleId}>
      <h2 id={titleId} class="chat-approval-title">
        <span class="muted">Hermes asks:</span> {item.question}
      </h2>
      {open ? (
        <form
          class="chat-question-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) onReply(item.id, text);
          }}
        >
          {item.choices.length > 0 ? (
            <fieldset class="actions chat-approval-choices">
              <legend class="sr-only">Suggested answers</legend>
              {item.choices.map((choice, i) => (
                <button
                  key={choice}
                  ref={i === 0 ? first : undefined}
                  type="button"
                  class="btn"
                  onClick={() => onReply(item.id, choice)}
                >
                  {choice}
                </button>
              ))}
            </fieldset>
          ) : null}
          <div class="chat-question-own">
            <label class="muted" for={`answer-${item.id}`}>
              Your answer
            </label>
            <input
              id={`answer-${item.id}`}
              ref={input}
              value={text}
              onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
            />
            <button type="submit" class="btn primary" disabled={!text.trim()}>
              Answer
            </button>
          </div>
        </form>
      ) : (
        <p class={`badge ${item.answer ? "ok" : "warn"}`} role="status">
          {item.answer ? `Answered: ${item.answer}` : "Not answered"}
        </p>
      )}
    </section>
  );
}

export function ChatItem({
  item,
  onAnswer,
  onReply,
}: {
  item: Item;
  onAnswer: (id: string, decision: string) => void;
  onReply: (id: string, answer: string) => void;
}) {
  switch (item.kind) {
    case "user":
      return (
        <div class="chat-msg user">
          <span class="sr-only">You said:</span>
          <p class="chat-text">{item.text}</p>
        </div>
      );
    case "assistant":
      return (
        <div class="chat-msg assistant" aria-busy={item.streaming ? "true" : undefined}>
          <span class="sr-only">Hermes said:</span>
          {item.reasoning ? (
            <details class="chat-reasoning">
              <summary class="muted">Reasoning</summary>
              <pre>{item.reasoning}</pre>
            </details>
          ) : null}
          {item.streaming ? (
            <p class="chat-text streaming">{item.text}</p>
          ) : (
            <Markdown text={item.text} class="chat-text" />
          )}
        </div>
      );
    case "tool":
      return <ToolLine item={item} />;
    case "approval":
      return <ApprovalCard item={item} onAnswer={onAnswer} />;
    case "question":
      return <QuestionCard item={item} onReply={onReply} />;
    case "command":
      return <Markdown text={item.text} class="chat-command card" />;
    case "notice":
      return <p class="chat-notice muted">{item.text}</p>;
    case "error":
      return (
        <div class="note error chat-error" role="alert">
          {item.text}
        </div>
      );
  }
}
