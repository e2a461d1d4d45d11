/**
 * Allowlists on the Gateway page: per platform, the users who may talk to the agent without
 * pairing (`<PLATFORM>_ALLOWED_USERS` in .env), with add and remove. A running gateway re-reads
 * them when `.env` changes, so changes apply from the next message.
 */
import { useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, Empty, ErrorNote, Field, Loading } from "../components/ui.js";
import { useApi } from "../hooks.js";
import type { Allowlists } from "./gateway-types.js";

function AddForm({ platforms, onDone }: { platforms: string[]; onDone: () => void }) {
  const [platform, setPlatform] = useState(
    platforms.includes("telegram") ? "telegram" : (platforms[0] ?? ""),
  );
  const [user, setUser] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    if (user.trim() === "*") {
      const ok = await confirmAction({
        title: `Let everyone talk to the agent on ${platform}?`,
        body: "* admits anyone who can write to the bot, with no pairing. The agent has tools on this machine.",
        confirm: "Allow everyone",
        danger: true,
      });
      if (!ok) return;
    }
    try {
      const answer = await apiSend<{ changed: boolean }>(
        "POST",
        `allowlists/${encodeURIComponent(platform)}`,
        {
          user,
        },
      );
      notify(
        answer.changed
          ? `Added ${user.trim()} to ${platform}; it applies from the next message`
          : `${user.trim()} was already on ${platform}`,
      );
      setUser("");
      onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form class="toolbar allowlist-add" onSubmit={submit} aria-label="Add to an allowlist">
      <Field label="Platform">
        <select
          name="platform"
          value={platform}
          onChange={(e) => setPlatform((e.currentTarget as HTMLSelectElement).value)}
        >
          {platforms.map((p) => (
            <option key={p} value={p}>
              {p === "gateway" ? "every platform" : p}
            </option>
          ))}
        </select>
      </Field>
      <Field label="User" hint="An id, @handle, email address or phone number">
        <input
          name="user"
          required
          autocomplete="off"
          value={user}
          onInput={(e) => setUser((e.currentTarget as HTMLInputElement).value)}
        />
      </Field>
      <button type="submit" class="btn primary">
        Add
      </button>
      {error ? <ErrorNote error={error} /> : null}
    </form>
  );
}

export function AllowlistsSection() {
  const lists = useApi<Allowlists>("allowlists");
  const remove = (platform: string, user: string) =>
    apiSend("DELETE", `allowlists/${encodeURIComponent(platform)}/${encodeURIComponent(user)}`).then(() => {
      notify(`Removed ${user} from ${platform}; it applies from the next message`);
      lists.reload();
    }, notifyError);
  const entries = Object.entries(lists.data?.platforms ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <h2 id="allowlists">Allowlists</h2>
      <p class="muted">
        Users listed here may talk to the agent without pairing. They are kept in <code>.env</code>; a running
        gateway applies changes at once, from the next message (no restart needed).
      </p>
      {lists.error ? <ErrorNote error={lists.error} onRetry={lists.reload} /> : null}
      {!lists.data && !lists.error ? <Loading /> : null}
      {lists.data ? <AddForm platforms={lists.data.known_platforms} onDone={lists.reload} /> : null}
      {lists.data && entries.length === 0 ? <Empty>No allowlists: strangers pair with a code.</Empty> : null}
      {entries.length > 0 ? (
        <dl class="allowlists" aria-labelledby="allowlists">
          {entries.map(([platform, list]) => (
            <div key={platform} class="allowlist" data-platform={platform}>
              <dt>
                {platform === "gateway" ? "every platform" : platform}{" "}
                <code class="small-text">{list.env_name}</code>
                {list.allow_all ? <Badge tone="warn">everyone allowed</Badge> : null}
                {list.editable ? null : <Badge tone="info">set in the environment</Badge>}
              </dt>
              <dd>
                {list.allowed_users.length === 0 ? <span class="muted">nobody listed</span> : null}
                <ul class="chips">
                  {list.allowed_users.map((user) => (
                    <li key={user} class="chip">
                      <code>{user}</code>
                      {list.editable ? (
                        <button
                          type="button"
                          class="btn small"
                          aria-label={`Remove ${user} from ${platform}`}
                          onClick={() => remove(platform, user)}
                        >
                          Remove
                        </button>
                      ) : null}
                    </li>
                  ))}
                </ul>
              </dd>
            </div>
          ))}
        </dl>
      ) : null}
    </>
  );
}
