/**
 * The skill curator on the Skills page: on or off, paused, runs so far, the last run and its
 * summary, the next one; buttons for a pass in the background (or a dry-run preview), pause and
 * resume; archived skills with Restore. Everything goes through `/api/curator` and the curator's
 * own verbs, as `hermes curator …` does.
 */
import { useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, ErrorNote, Facts, Loading } from "../components/ui.js";
import { fmtRelative } from "../format.js";
import { useApi } from "../hooks.js";

interface CuratorAnswer {
  enabled: boolean;
  paused: boolean;
  run_count: number;
  last_run_at: string | null;
  last_run_summary: string | null;
  next_run: string;
  settings: { intervalHours: number; staleAfterDays: number; archiveAfterDays: number; consolidate: boolean };
  archived: Array<{ name: string; description: string; archived_at: string | null }>;
  pinned: string[];
  backups: number;
  lines: string[];
}

export function CuratorPanel({ onChange }: { onChange: () => void }) {
  const curator = useApi<CuratorAnswer>("curator");
  const [busy, setBusy] = useState(false);
  const c = curator.data;
  const send = async (path: string, body: Record<string, unknown> = {}) => {
    setBusy(true);
    try {
      const r = await apiSend<{ message: string }>("POST", path, body);
      notify(r.message);
      curator.reload();
      onChange();
    } catch (error) {
      notifyError(error);
    } finally {
      setBusy(false);
    }
  };
  if (curator.error) return <ErrorNote error={curator.error} onRetry={curator.reload} />;
  if (!c) return <Loading />;
  return (
    <section class="card curator" aria-label="Curator">
      <Facts
        items={[
          [
            "status",
            c.paused ? (
              <Badge tone="warn">paused</Badge>
            ) : c.enabled ? (
              <Badge tone="ok">enabled</Badge>
            ) : (
              <Badge>disabled</Badge>
            ),
          ],
          ["runs", String(c.run_count)],
          ["last run", c.last_run_at ? fmtRelative(c.last_run_at) : "never"],
          ["last summary", c.last_run_summary ?? "–"],
          ["next run", c.next_run],
          [
            "rules",
            `every ${c.settings.intervalHours} h; stale after ${c.settings.staleAfterDays} d unused, archived after ${c.settings.archiveAfterDays} d`,
          ],
          ["backups", String(c.backups)],
          ["pinned", c.pinned.length > 0 ? c.pinned.join(", ") : "none"],
        ]}
      />
      <div class="actions curator-actions">
        <button
          type="button"
          class="btn primary"
          disabled={busy || !c.enabled}
          onClick={() => send("curator/run")}
        >
          Run now
        </button>
        <button
          type="button"
          class="btn"
          disabled={busy}
          onClick={() => send("curator/run", { dry_run: true })}
        >
          Preview (dry run)
        </button>
        <button
          type="button"
          class="btn"
          disabled={busy}
          onClick={() => send(c.paused ? "curator/resume" : "curator/pause")}
        >
          {c.paused ? "Resume" : "Pause"}
        </button>
        <button type="button" class="btn" disabled={busy} onClick={curator.reload}>
          Refresh
        </button>
      </div>
      <h3>Archived skills</h3>
      {c.archived.length === 0 ? (
        <p class="muted">
          None. The curator archives agent-made skills left unused; you can archive one from its page.
        </p>
      ) : (
        <ul class="archived-list">
          {c.archived.map((a) => (
            <li key={a.name}>
              <strong>{a.name}</strong>{" "}
              <span class="muted">
                {a.archived_at ? `archived ${fmtRelative(a.archived_at)}` : "archived"} {a.description}
              </span>{" "}
              <button
                type="button"
                class="btn small"
                disabled={busy}
                aria-label={`Restore ${a.name}`}
                onClick={() => send(`skills/${encodeURIComponent(a.name)}/restore`)}
              >
                Restore
              </button>
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>As `hermes curator status` prints it</summary>
        <pre>{c.lines.join("\n")}</pre>
      </details>
    </section>
  );
}
