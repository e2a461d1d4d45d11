/**
 * The Gateway page: whether this home's gateway runs, its platforms and running turns, its pending
 * approvals (a protected-path one can only be denied here), pairing requests to approve (with the
 * code the user was sent) or deny and paired users to revoke, the allowlists and the webhook
 * subscriptions. Live parts refresh every few seconds.
 */
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, Empty, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { fmtRelative, fmtTime } from "../format.js";
import { useApi } from "../hooks.js";
import { AllowlistsSection } from "./gateway-allowlists.js";
import { PairingSection } from "./gateway-pairing.js";
import { useRefresh } from "./gateway-refresh.js";
import type { ApprovalInfo, GatewayLive } from "./gateway-types.js";
import { WebhooksSection } from "./gateway-webhooks.js";
import type { PageDef } from "./types.js";

function Approval({ approval, onDone }: { approval: ApprovalInfo; onDone: () => void }) {
  const answer = async (decision: "once" | "session" | "always" | "deny") => {
    if (decision === "always") {
      const ok = await confirmAction({
        title: "Always allow this kind of command?",
        body: "Commands matching this pattern will run without asking again, in every chat.",
        confirm: "Always allow",
      });
      if (!ok) return;
    }
    await apiSend("POST", `gateway/approvals/${encodeURIComponent(approval.id)}`, { decision }).then(() => {
      notify(decision === "deny" ? "Denied" : "Approved");
      onDone();
    }, notifyError);
  };
  return (
    <li class="card approval">
      <pre class="approval-command">{approval.command}</pre>
      <p>
        {approval.reason}{" "}
        <span class="muted">
          · {approval.platform} chat {approval.chat_id}
          {approval.instance ? ` · instance ${approval.instance}` : ""}
        </span>
      </p>
      <p class="muted small-text">
        asked {fmtRelative(approval.created_at)}, denied by itself {fmtRelative(approval.expires_at)}
      </p>
      {approval.protected_path ? (
        <p class="note">
          This touches a protected path (Hermes's own settings): only the chat's user can approve it. You can
          deny it here.
        </p>
      ) : null}
      <div class="actions">
        {approval.protected_path ? null : (
          <>
            <button type="button" class="btn primary" onClick={() => answer("once")}>
              Approve once
            </button>
            <button type="button" class="btn" onClick={() => answer("session")}>
              For this session
            </button>
            <button type="button" class="btn" onClick={() => answer("always")}>
              Always
            </button>
          </>
        )}
        <button type="button" class="btn danger" onClick={() => answer("deny")}>
          Deny
        </button>
      </div>
    </li>
  );
}

function Approvals({ approvals, onDone }: { approvals: ApprovalInfo[]; onDone: () => void }) {
  return (
    <>
      <h2>Pending approvals</h2>
      {approvals.length === 0 ? (
        <Empty>No command is waiting for approval.</Empty>
      ) : (
        <ul class="approvals">
          {approvals.map((a) => (
            <Approval key={`${a.instance ?? ""}/${a.id}`} approval={a} onDone={onDone} />
          ))}
        </ul>
      )}
    </>
  );
}

function Live() {
  const live = useApi<GatewayLive>("gateway");
  useRefresh(live.reload);
  if (live.error) return <ErrorNote error={live.error} onRetry={live.reload} />;
  if (!live.data) return <Loading />;
  const data = live.data;
  if (!data.running) {
    return (
      <>
        <p class="note" data-gateway="stopped">
          <Badge tone="warn">not running</Badge> No gateway runs for this home. Start it with{" "}
          <code>hermes gateway</code>. {data.conversations} conversation(s) on record.
        </p>
        {/* Several instances on PostgreSQL: the others' approvals are answered from here too. */}
        {data.approvals?.length ? <Approvals approvals={data.approvals} onDone={live.reload} /> : null}
      </>
    );
  }
  return (
    <>
      <Facts
        items={[
          [
            "state",
            <Badge key="s" tone="ok">
              running
            </Badge>,
          ],
          ["since", `${fmtRelative(data.started_at)} (${fmtTime(data.started_at)})`],
          ["process", `pid ${data.pid}, Hermes-TS ${data.version}`],
          ["services", data.services.join(", ") || "–"],
          ["conversations", String(data.conversations)],
        ]}
      />
      <h2>Platforms</h2>
      {data.platforms.length === 0 ? (
        <Empty>
          No chat platforms are configured. Set one up with <code>hermes setup gateway</code>.
        </Empty>
      ) : (
        <ul class="platforms">
          {data.platforms.map((p) => (
            <li key={p.name} class="card platform">
              <strong>{p.name}</strong>{" "}
              <Badge tone={p.state === "connected" ? "ok" : p.state === "failed" ? "bad" : "warn"}>
                {p.state}
              </Badge>
              <span class="muted small-text"> since {fmtRelative(p.since)}</span>
              {p.error ? <div class="cron-error small-text">{p.error}</div> : null}
            </li>
          ))}
        </ul>
      )}
      <h2>Running turns</h2>
      {data.running_turns.length === 0 ? (
        <Empty>Nothing is running right now.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Platform</th>
                <th>Chat</th>
                <th>Started</th>
                <th class="hide-narrow">Session</th>
              </tr>
            </thead>
            <tbody>
              {data.running_turns.map((t) => (
                <tr key={t.session_key}>
                  <td>{t.platform}</td>
                  <td>{t.chat_id}</td>
                  <td>{fmtRelative(t.started_at)}</td>
                  <td class="hide-narrow">
                    <code>{t.session_id ?? "–"}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Approvals approvals={data.approvals} onDone={live.reload} />
    </>
  );
}

function Gateway() {
  return (
    <section class="gateway-page">
      <PageHeader title="Gateway">
        The messaging gateway of this home: who is connected and who may talk to it.
      </PageHeader>
      <Live />
      <PairingSection />
      <AllowlistsSection />
      <WebhooksSection />
    </section>
  );
}

export const gatewayPage: PageDef = { id: "gateway", title: "Gateway", order: 70, component: Gateway };
