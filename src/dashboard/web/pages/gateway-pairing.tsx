/**
 * Pairing on the Gateway page: pending requests (never their codes: the code went to the user, who
 * tells it to you) to approve by typing that code, or to deny; paired users to revoke.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Empty, ErrorNote, Loading } from "../components/ui.js";
import { fmtRelative } from "../format.js";
import { useApi } from "../hooks.js";
import { useRefresh } from "./gateway-refresh.js";
import type { PairingList } from "./gateway-types.js";

type Pending = PairingList["pending"][number];

function ApproveForm({ request, onDone }: { request: Pending; onDone: () => void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const who = request.userName || request.userId;
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await apiSend("POST", "pairing/approve", { platform: request.platform, code });
      notify(`Approved ${who} on ${request.platform}`);
      onDone();
    } catch (err) {
      if (err instanceof ApiFailure && err.body["status"] === "invalid") {
        const left = Number(err.body["attemptsLeft"] ?? 0);
        setError(
          left > 0
            ? `That code matches no pending request on ${request.platform} (${left} tries left before a 1-hour lockout).`
            : `That code matches no pending request; approvals on ${request.platform} are locked for an hour.`,
        );
      } else if (err instanceof ApiFailure && err.status === 429) {
        setError(`Approvals on ${request.platform} are locked after too many wrong codes; try again later.`);
      } else setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form class="pairing-approve" onSubmit={submit}>
      <label>
        <span class="sr-only">Pairing code {who} received</span>
        <input
          ref={input}
          name="code"
          required
          autocomplete="off"
          spellcheck={false}
          placeholder="Code they received"
          aria-label={`Pairing code ${who} received`}
          value={code}
          onInput={(e) => setCode((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="btn primary small">
        Approve
      </button>
      {error ? <ErrorNote error={error} /> : null}
    </form>
  );
}

export function PairingSection() {
  const pairing = useApi<PairingList>("pairing");
  useRefresh(pairing.reload);
  const [approving, setApproving] = useState<string | null>(null);
  const deny = async (request: Pending) => {
    await apiSend("POST", "pairing/deny", { platform: request.platform, request_id: request.requestId }).then(
      () => {
        notify(`Denied ${request.userName || request.userId}`);
        pairing.reload();
      },
      notifyError,
    );
  };
  const revoke = async (user: PairingList["approved"][number]) => {
    const who = user.userName || user.userId;
    const ok = await confirmAction({
      title: `Revoke ${who} on ${user.platform}?`,
      body: "They will need a new pairing code (or an allowlist entry) to talk to the agent again.",
      confirm: "Revoke",
      danger: true,
    });
    if (!ok) return;
    await apiSend("POST", "pairing/revoke", { platform: user.platform, user_id: user.userId }).then(() => {
      notify(`Revoked ${who}`);
      pairing.reload();
    }, notifyError);
  };
  return (
    <>
      <h2 id="pairing">Pairing requests</h2>
      {pairing.error ? <ErrorNote error={pairing.error} onRetry={pairing.reload} /> : null}
      {!pairing.data && !pairing.error ? <Loading /> : null}
      {pairing.data && pairing.data.pending.length === 0 ? (
        <Empty>
          No one is waiting. A stranger who writes to the bot in a DM gets a code and shows up here.
        </Empty>
      ) : null}
      {pairing.data && pairing.data.pending.length > 0 ? (
        <>
          <p class="muted">
            Each person was sent a code. Approve them by typing the code they tell you (it is never shown
            here).
          </p>
          <div class="table-wrap">
            <table class="pairing-table" aria-labelledby="pairing">
              <thead>
                <tr>
                  <th>Platform</th>
                  <th>User</th>
                  <th class="hide-narrow">Asked</th>
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {pairing.data.pending.map((r) => {
                  const who = r.userName || r.userId;
                  return (
                    <tr key={`${r.platform}:${r.requestId || r.userId}`}>
                      <td>{r.platform}</td>
                      <td>
                        {r.userName ? <strong>{r.userName}</strong> : null} <code>{r.userId}</code>
                      </td>
                      <td class="hide-narrow">
                        {fmtRelative(r.createdAt)}
                        <div class="muted small-text">expires {fmtRelative(r.expiresAt)}</div>
                      </td>
                      <td>
                        {approving === `${r.platform}:${r.userId}` ? (
                          <ApproveForm
                            request={r}
                            onDone={() => {
                              setApproving(null);
                              pairing.reload();
                            }}
                          />
                        ) : (
                          <div class="actions">
                            <button
                              type="button"
                              class="btn small primary"
                              aria-label={`Approve ${who}`}
                              onClick={() => setApproving(`${r.platform}:${r.userId}`)}
                            >
                              Approve…
                            </button>
                            <button
                              type="button"
                              class="btn small"
                              aria-label={`Deny ${who}`}
                              disabled={!r.requestId}
                              onClick={() => deny(r)}
                            >
                              Deny
                            </button>
                          </div>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <h2 id="paired">Paired users</h2>
      {pairing.data && pairing.data.approved.length === 0 ? <Empty>No one has been paired yet.</Empty> : null}
      {pairing.data && pairing.data.approved.length > 0 ? (
        <ul class="chips" aria-labelledby="paired">
          {pairing.data.approved.map((u) => (
            <li key={`${u.platform}:${u.userId}`} class="chip">
              <span>
                {u.platform}: {u.userName ? `${u.userName} ` : ""}
                <code>{u.userId}</code>
              </span>
              <button
                type="button"
                class="btn small"
                aria-label={`Revoke ${u.userName || u.userId} on ${u.platform}`}
                onClick={() => revoke(u)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
