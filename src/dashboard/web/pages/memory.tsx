/**
 * Memory: MEMORY.md (the agent's notes) and USER.md (the user profile), each with a meter of its
 * characters against the limit, its entries, and add / edit / remove through `POST
 * /api/memory/:target` (the memory tool's injection scan, limits and lock; a refusal shows why).
 * An entry the scan would keep out of the prompt is shown as blocked, its text behind a disclosure.
 */
import { useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify } from "../components/toast.js";
import { Badge, Empty, ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { fmtNumber } from "../format.js";
import { useApi } from "../hooks.js";
import { PendingWrites } from "./skills-pending.js";
import type { PageDef } from "./types.js";

interface MemoryItem {
  text: string;
  chars: number;
  blocked: string | null;
}

interface MemoryTargetView {
  target: "memory" | "user";
  limit: number;
  chars: number;
  usage: string;
  items: MemoryItem[];
}

/** The page's view of `GET /api/memory`. */
interface MemoryAnswer {
  write_approval: boolean;
  pending: number;
  targets: MemoryTargetView[];
}

const TITLES = {
  memory: { title: "Agent notes", file: "MEMORY.md", hint: "What the agent keeps in mind across sessions" },
  user: { title: "User profile", file: "USER.md", hint: "Who you are, as the agent remembers it" },
};

function Meter({ chars, limit, label }: { chars: number; limit: number; label: string }) {
  const pct = limit > 0 ? Math.round((chars / limit) * 100) : 0;
  const tone = pct >= 100 ? "bad" : pct >= 80 ? "warn" : "ok";
  return (
    <div class="memory-meter">
      <meter class="sr-only" aria-label={label} min={0} max={limit} value={chars} />
      <div class={`meter ${tone}`} aria-hidden="true">
        <span class="meter-fill" style={{ width: `${Math.min(100, pct)}%` }} />
      </div>
      <span class="muted meter-text">
        {fmtNumber(chars)} / {fmtNumber(limit)} chars ({pct}%)
      </span>
    </div>
  );
}

const refused = (why: string) => (/^refused/i.test(why) ? why : `Refused: ${why}`);

/** Sends one edit; resolves the refusal text (or null when it was saved). */
async function edit(target: string, body: Record<string, unknown>): Promise<string | null> {
  try {
    const result = await apiSend<{ message?: string }>("POST", `memory/${target}`, body);
    notify(result.message ?? "Saved.");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function Entry({ target, item, onChange }: { target: string; item: MemoryItem; onChange: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (body: Record<string, unknown>) => {
    setBusy(true);
    const why = await edit(target, body);
    setBusy(false);
    setRefusal(why);
    if (why === null) {
      setEditing(null);
      onChange();
    }
  };
  const remove = async () => {
    const ok = await confirmAction({
      title: "Remove this entry?",
      body: item.blocked ? "The blocked entry is deleted from the file." : item.text.slice(0, 200),
      confirm: "Remove",
      danger: true,
    });
    if (ok) await run({ action: "remove", old_text: item.text });
  };
  return (
    <li class={`memory-entry ${item.blocked ? "blocked" : ""}`}>
      {item.blocked ? (
        <>
          <p>
            <Badge tone="bad">blocked</Badge> Kept out of the agent's prompt: {item.blocked}.
          </p>
          <details>
            <summary>Show the blocked text</summary>
            <pre class="memory-text">{item.text}</pre>
          </details>
        </>
      ) : editing !== null ? (
        <label class="field">
          <span class="sr-only">Edit entry</span>
          <textarea
            value={editing}
            onInput={(e) => setEditing((e.currentTarget as HTMLTextAreaElement).value)}
            aria-label="Edit entry"
          />
        </label>
      ) : (
        <p class="memory-text">{item.text}</p>
      )}
      <div class="actions">
        <span class="muted">{fmtNumber(item.chars)} chars</span>
        {editing !== null ? (
          <>
            <button
              type="button"
              class="btn small primary"
              disabled={busy || editing.trim() === ""}
              onClick={() => run({ action: "replace", old_text: item.text, content: editing })}
            >
              Save
            </button>
            <button
              type="button"
              class="btn small"
              onClick={() => {
                setEditing(null);
                setRefusal(null);
              }}
            >
              Cancel
            </button>
          </>
        ) : item.blocked ? null : (
          <button type="button" class="btn small" onClick={() => setEditing(item.text)}>
            Edit
          </button>
        )}
        <button type="button" class="btn small" disabled={busy} onClick={remove}>
          Remove
        </button>
      </div>
      {refusal ? <ErrorNote error={refused(refusal)} /> : null}
    </li>
  );
}

function Target({ view, onChange }: { view: MemoryTargetView; onChange: () => void }) {
  const meta = TITLES[view.target];
  const [draft, setDraft] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const add = async (e: Event) => {
    e.preventDefault();
    if (!draft.trim()) return;
    setBusy(true);
    const why = await edit(view.target, { action: "add", content: draft });
    setBusy(false);
    setRefusal(why);
    if (why === null) {
      setDraft("");
      onChange();
    }
  };
  const blocked = view.items.filter((i) => i.blocked).length;
  return (
    <section class="card memory-target" aria-labelledby={`memory-${view.target}`}>
      <h2 id={`memory-${view.target}`}>
        {meta.title} <code>{meta.file}</code>
      </h2>
      <p class="muted">
        {meta.hint}. {view.items.length} {view.items.length === 1 ? "entry" : "entries"}
        {blocked > 0 ? `, ${blocked} blocked` : ""}.
      </p>
      <Meter chars={view.chars} limit={view.limit} label={`${meta.file} size`} />
      {view.items.length === 0 ? (
        <Empty>No entries yet. Add one below, or let the agent save what it learns.</Empty>
      ) : (
        <ul class="memory-entries">
          {view.items.map((item) => (
            <Entry key={item.text} target={view.target} item={item} onChange={onChange} />
          ))}
        </ul>
      )}
      <form onSubmit={add} class="memory-add">
        <label class="field">
          <span class="field-label">Add to {meta.file}</span>
          <textarea value={draft} onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)} />
          <span class="hint muted">One fact per entry; the agent sees it from its next session.</span>
        </label>
        <button type="submit" class="btn primary" disabled={busy || draft.trim() === ""}>
          Add
        </button>
      </form>
      {refusal ? <ErrorNote error={refused(refusal)} /> : null}
    </section>
  );
}

function Memory() {
  const memory = useApi<MemoryAnswer>("memory");
  const data = memory.data;
  return (
    <section>
      <PageHeader title="Memory">
        What the agent remembers, with the same checks as its memory tool: injection scan, size limits, file
        lock.
      </PageHeader>
      {memory.error ? <ErrorNote error={memory.error} onRetry={memory.reload} /> : null}
      {memory.loading && !data ? <Loading /> : null}
      {data ? (
        <>
          {data.write_approval || data.pending > 0 ? (
            <>
              <h2>Memory writes awaiting approval</h2>
              <PendingWrites subsystem="memory" onChange={memory.reload} />
            </>
          ) : null}
          <div class="memory-grid">
            {data.targets.map((t) => (
              <Target key={t.target} view={t} onChange={memory.reload} />
            ))}
          </div>
        </>
      ) : null}
    </section>
  );
}

export const memoryPage: PageDef = { id: "memory", title: "Memory", order: 40, component: Memory };
