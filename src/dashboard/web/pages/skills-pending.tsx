/**
 * The agent's staged writes awaiting approval (`skills.write_approval`, `memory.write_approval`):
 * each with what it does, who proposed it and when; "Review" shows the new SKILL.md or the diff,
 * "Approve" applies it through the same checks as a direct write, "Reject" drops it. Shared by the
 * Skills and Memory pages.
 */
import { useState } from "preact/hooks";
import { ApiFailure, apiGet, apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, ErrorNote, Loading } from "../components/ui.js";
import { fmtRelative } from "../format.js";
import { useApi } from "../hooks.js";

interface PendingItem {
  id: string;
  action?: string;
  summary?: string;
  origin?: string;
  created_at?: number;
  error?: string;
}

interface PendingAnswer {
  write_approval: boolean;
  pending: PendingItem[];
}

const ORIGIN: Record<string, string> = {
  foreground: "asked in a chat",
  background_review: "background review",
  curator: "curator",
};

function Row({
  subsystem,
  item,
  onDone,
}: {
  subsystem: "skills" | "memory";
  item: PendingItem;
  onDone: () => void;
}) {
  const [diff, setDiff] = useState<{ text: string; stale: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [stale, setStale] = useState(false);
  const path = `pending/${subsystem}/${encodeURIComponent(item.id)}`;
  const review = async () => {
    if (diff) return setDiff(null);
    try {
      setDiff(await apiGet<{ text: string; stale: string | null }>(path));
    } catch (error) {
      notifyError(error);
    }
  };
  const decide = async (verb: "approve" | "reject", force = false) => {
    if (verb === "reject") {
      const ok = await confirmAction({
        title: "Reject this write?",
        body: `${item.summary ?? item.id}: nothing is written and the proposal is dropped.`,
        confirm: "Reject",
        danger: true,
      });
      if (!ok) return;
    }
    if (force) {
      const ok = await confirmAction({
        title: "Approve anyway?",
        body: "The file changed since this write was staged; approving replaces those changes.",
        confirm: "Approve anyway",
        danger: true,
      });
      if (!ok) return;
    }
    setBusy(true);
    setRefusal(null);
    try {
      const r = await apiSend<{ message: string }>("POST", `${path}/${verb}`, force ? { force: true } : {});
      notify(verb === "approve" ? `Approved: ${r.message}` : "Rejected: nothing was written.");
      onDone();
    } catch (error) {
      setRefusal(error instanceof Error ? error.message : String(error));
      setStale(error instanceof ApiFailure && error.status === 409);
      if (error instanceof ApiFailure && error.status === 404) onDone();
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="pending-item card" data-pending-id={item.id}>
      <div class="pending-head">
        <span class="pending-summary">
          {item.error ? `${item.id} (unreadable: ${item.error})` : item.summary}
        </span>
        <span class="muted">
          {item.origin ? <Badge tone="info">{ORIGIN[item.origin] ?? item.origin}</Badge> : null}{" "}
          {item.created_at ? fmtRelative(item.created_at) : ""}
        </span>
      </div>
      <div class="actions">
        {item.error ? null : (
          <button type="button" class="btn small" aria-expanded={diff !== null} onClick={review}>
            {diff ? "Hide" : "Review"}
          </button>
        )}
        {item.error ? null : (
          <button
            type="button"
            class="btn small primary"
            disabled={busy}
            onClick={() => decide("approve")}
            aria-label={`Approve: ${item.summary ?? item.id}`}
          >
            Approve
          </button>
        )}
        {stale ? (
          <button
            type="button"
            class="btn small danger"
            disabled={busy}
            onClick={() => decide("approve", true)}
          >
            Approve anyway
          </button>
        ) : null}
        <button
          type="button"
          class="btn small"
          disabled={busy}
          onClick={() => decide("reject")}
          aria-label={`Reject: ${item.summary ?? item.id}`}
        >
          Reject
        </button>
      </div>
      {refusal ? <ErrorNote error={refusal} /> : null}
      {diff ? (
        <>
          {diff.stale ? <p class="note warn">Changed since it was staged: {diff.stale}</p> : null}
          <pre class="pending-diff">{diff.text}</pre>
        </>
      ) : null}
    </li>
  );
}

export function PendingWrites({
  subsystem,
  onChange,
}: {
  subsystem: "skills" | "memory";
  onChange?: () => void;
}) {
  const pending = useApi<PendingAnswer>(`pending/${subsystem}`);
  const data = pending.data;
  const done = () => {
    pending.reload();
    onChange?.();
  };
  if (pending.error) return <ErrorNote error={pending.error} onRetry={pending.reload} />;
  if (!data) return <Loading />;
  if (data.pending.length === 0) {
    return (
      <p class="muted">
        No {subsystem} writes wait for approval.{" "}
        {data.write_approval
          ? `(${subsystem}.write_approval is on: the agent's ${subsystem} writes wait here for you.)`
          : `(${subsystem}.write_approval is off: the agent writes ${subsystem} directly.)`}
      </p>
    );
  }
  return (
    <ul class="pending-list" aria-label={`Pending ${subsystem} writes`}>
      {data.pending.map((item) => (
        <Row key={item.id} subsystem={subsystem} item={item} onDone={done} />
      ))}
    </ul>
  );
}
