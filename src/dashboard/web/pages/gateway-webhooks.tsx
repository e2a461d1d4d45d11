/**
 * Webhook subscriptions on the Gateway page: the routes with their URL (secrets never come back
 * from the server), a form to add one, and delete for subscriptions. A secret can be generated
 * here in the browser: it is shown once, before it is sent, so it can be copied to the sender.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, Empty, ErrorNote, Field, Loading } from "../components/ui.js";
import { useApi } from "../hooks.js";
import type { Webhooks, WebhookView } from "./gateway-types.js";

function randomSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function WebhookForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const [values, setValues] = useState<Record<string, string>>({ deliver: "log" });
  const [deliverOnly, setDeliverOnly] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const set = (name: string) => (e: Event) =>
    setValues((v) => ({ ...v, [name]: (e.currentTarget as HTMLInputElement).value }));
  const input = (name: string) => <input name={name} value={values[name] ?? ""} onInput={set(name)} />;
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = await apiSend<{ created: boolean; route: WebhookView }>("POST", "webhooks", {
        name: values["name"] ?? "",
        secret: values["secret"] || undefined,
        prompt: values["prompt"] || undefined,
        events: values["events"] || undefined,
        description: values["description"] || undefined,
        skills: values["skills"] || undefined,
        deliver: values["deliver"] || undefined,
        deliver_chat_id: values["deliver_chat_id"] || undefined,
        deliver_only: deliverOnly,
      });
      notify(`${answer.created ? "Created" : "Updated"} ${answer.route.name}: ${answer.route.url}`);
      onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form class="card webhook-form" onSubmit={submit} aria-label="New webhook subscription">
      <h3>New subscription</h3>
      {error ? <ErrorNote error={error} /> : null}
      <div class="cron-form-row">
        <Field label="Name" hint="Lower-case letters, digits, - and _; the URL ends in /webhooks/<name>">
          <input ref={first} name="name" required value={values["name"] ?? ""} onInput={set("name")} />
        </Field>
        <Field label="Events" hint="Comma-separated event types (empty: all)">
          {input("events")}
        </Field>
      </div>
      <Field
        label="Secret"
        hint="The sender signs each event with it (at least 16 characters). Copy it now: it is never shown again."
      >
        <span class="secret-row">
          <input
            name="secret"
            autocomplete="off"
            spellcheck={false}
            value={values["secret"] ?? ""}
            onInput={set("secret")}
          />
          <button
            type="button"
            class="btn"
            onClick={() => setValues((v) => ({ ...v, secret: randomSecret() }))}
          >
            Generate
          </button>
        </span>
      </Field>
      <Field label="Prompt" hint="{dot.path} fills in payload fields, {__raw__} the whole payload">
        <textarea name="prompt" value={values["prompt"] ?? ""} onInput={set("prompt")} />
      </Field>
      <div class="cron-form-row">
        <Field label="Deliver to" hint="log, telegram, telegram:CHAT, discord, slack, github_comment, …">
          {input("deliver")}
        </Field>
        <Field label="Chat id" hint="Default: the platform's home channel">
          {input("deliver_chat_id")}
        </Field>
        <Field label="Skills" hint="Comma-separated">
          {input("skills")}
        </Field>
      </div>
      <Field label="Description">{input("description")}</Field>
      <label class="check">
        <input
          type="checkbox"
          checked={deliverOnly}
          onChange={(e) => setDeliverOnly((e.currentTarget as HTMLInputElement).checked)}
        />{" "}
        Send the rendered prompt as the message, without running the agent
      </label>
      <div class="actions">
        <button type="submit" class="btn primary">
          Save subscription
        </button>
        <button type="button" class="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function WebhooksSection() {
  const hooks = useApi<Webhooks>("webhooks");
  const [adding, setAdding] = useState(false);
  const remove = async (route: WebhookView) => {
    const ok = await confirmAction({
      title: `Delete the webhook ${route.name}?`,
      body: "Events sent to its URL will be refused from now on.",
      confirm: "Delete",
      danger: true,
    });
    if (!ok) return;
    await apiSend("DELETE", `webhooks/${encodeURIComponent(route.name)}`).then(() => {
      notify(`Deleted ${route.name}`);
      hooks.reload();
    }, notifyError);
  };
  const routes = hooks.data?.routes ?? [];
  return (
    <>
      <h2 id="webhooks">Webhooks</h2>
      {hooks.data && !hooks.data.enabled ? (
        <p class="note">
          The webhook platform is off: set <code>WEBHOOK_ENABLED=true</code> in .env (or{" "}
          <code>platforms.webhook.enabled: true</code>) and restart the gateway to receive events.
        </p>
      ) : null}
      {hooks.error ? <ErrorNote error={hooks.error} onRetry={hooks.reload} /> : null}
      {!hooks.data && !hooks.error ? <Loading /> : null}
      {adding ? (
        <WebhookForm
          onDone={() => {
            setAdding(false);
            hooks.reload();
          }}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <div class="toolbar">
          <button type="button" class="btn" onClick={() => setAdding(true)}>
            New subscription
          </button>
        </div>
      )}
      {hooks.data && routes.length === 0 ? <Empty>No webhook routes yet.</Empty> : null}
      {routes.length > 0 ? (
        <div class="table-wrap">
          <table class="webhook-table" aria-labelledby="webhooks">
            <thead>
              <tr>
                <th>Name</th>
                <th class="hide-narrow">URL</th>
                <th>Events</th>
                <th>Deliver</th>
                <th class="hide-narrow">Secret</th>
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {routes.map((r) => (
                <tr key={r.name} data-webhook={r.name}>
                  <td>
                    <strong>{r.name}</strong>
                    {r.enabled === false ? <Badge tone="warn">disabled</Badge> : null}
                    <div class="muted small-text">{r.description ?? ""}</div>
                  </td>
                  <td class="hide-narrow">
                    <code class="small-text">{r.url}</code>
                  </td>
                  <td>{r.events?.length ? r.events.join(", ") : <span class="muted">all</span>}</td>
                  <td>
                    {r.deliver ?? "log"}
                    {r.deliver_only ? <span class="muted small-text"> (no agent)</span> : null}
                  </td>
                  <td class="hide-narrow">
                    <Badge tone={r.secret_set === "none" ? "bad" : "ok"}>
                      {r.secret_set === "route"
                        ? "own"
                        : r.secret_set === "global"
                          ? "WEBHOOK_SECRET"
                          : "none"}
                    </Badge>
                  </td>
                  <td>
                    {r.source === "config" ? (
                      <span class="muted small-text">config.yaml</span>
                    ) : (
                      <button
                        type="button"
                        class="btn small danger"
                        aria-label={`Delete webhook ${r.name}`}
                        onClick={() => remove(r)}
                      >
                        Delete
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
