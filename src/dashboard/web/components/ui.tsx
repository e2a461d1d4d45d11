/** Small building blocks every page uses: status lines, errors, empty states, paging, badges. */
import type { ComponentChildren } from "preact";

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
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child passed in
    <label class="field">
      <span class="field-label">{label}</span>
      {children}
      {hint ? <span class="hint muted">{hint}</span> : null}
    </label>
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
