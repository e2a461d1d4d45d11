/** Small building blocks every page uses: status lines, errors, empty states, paging, badges. */
import type { ComponentChildren } from "preact";
import { useId, useLayoutEffect, useRef } from "preact/hooks";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p class="muted loading" role="status">
      {label}
    </p>
  );
}

export function ErrorNote({ error, onRetry }: { error: Error | string; onRetry?: () => void }) {
  return (
    <div class="note error" role="alert">
      <span>{typeof error === "string" ? error : error.message}</span>
      {onRetry ? (
        <button type="button" class="btn small" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty muted">{children}</p>;
}

export type Tone = "ok" | "warn" | "bad" | "info" | "plain";

export function Badge({ tone = "plain", children }: { tone?: Tone; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

export function PageHeader({
  title,
  children,
  actions,
}: {
  title: string;
  children?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <header class="page-header">
      <div>
        <h1 tabIndex={-1} id="page-title">
          {title}
        </h1>
        {children ? <p class="muted">{children}</p> : null}
      </div>
      {actions ? <div class="actions">{actions}</div> : null}
    </header>
  );
}

export function Pager({
  offset,
  limit,
  count,
  more,
  onPage,
}: {
  offset: number;
  limit: number;
  /** Rows on this page. */
  count: number;
  more: boolean;
  onPage: (offset: number) => void;
}) {
  if (offset === 0 && !more) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        class="btn"
        disabled={offset === 0}
        onClick={() => onPage(Math.max(0, offset - limit))}
      >
        ← Newer
      </button>
      <span class="muted">{count === 0 ? "none" : `${offset + 1}–${offset + count}`}</span>
      <button type="button" class="btn" disabled={!more} onClick={() => onPage(offset + limit)}>
        Older →
      </button>
    </nav>
  );
}

/** A labelled form control row. */
/**
 * A labelled form control. The label names the control (its `for` points at the control, so
 * buttons beside it stay out of the name) and the hint describes it (`aria-describedby`), so a
 * screen reader reads "Prompt" and then the hint, and `getByLabel("Prompt")` finds one control.
 */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  const base = useId();
  const box = useRef<HTMLDivElement>(null);
  const tag = useRef<HTMLLabelElement>(null);
  const hintId = `${base}-hint`;
  // The control is whatever the page passed in: link it once it is in the DOM, before paint.
  useLayoutEffect(() => {
    const control = box.current?.querySelector<HTMLElement>("input, select, textarea");
    if (!control || !tag.current) return;
    if (!control.id) control.id = `${base}-control`;
    tag.current.htmlFor = control.id;
    const described = (control.getAttribute("aria-describedby") ?? "").split(/\s+/).filter(Boolean);
    const others = described.filter((id) => id !== hintId);
    const next = hint ? [...others, hintId] : others;
    if (next.length > 0) control.setAttribute("aria-describedby", next.join(" "));
    else control.removeAttribute("aria-describedby");
  });
  return (
    <div class="field" ref={box}>
      {/* biome-ignore lint/a11y/noLabelWithoutControl: `for` is set above, to the control passed in */}
      <label class="field-label" ref={tag}>
        {label}
      </label>
      {children}
      {hint ? (
        <span class="hint muted" id={hintId}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

/** A definition list of label/value pairs. */
export function Facts({ items }: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
