/**
 * The Config page: the effective settings grouped by section (what differs from the defaults,
 * what config.yaml sets, what came from the environment), editing one key at a time with the
 * checks of `hermes config set`, config.yaml as written (masked), and the names in `.env`.
 * Secrets arrive masked from the server and are never asked for back: a secret's editor starts
 * empty. Views and filters live in the URL: `#/config?view=yaml`, `#/config?q=model&changed=1`.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Badge, Empty, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { useApi } from "../hooks.js";
import { href, type Route, setQuery } from "../router.js";
import { EnvForm, RowEditor, SetKeyForm } from "./config-edit.js";
import {
  type ConfigAnswer,
  editText,
  isSecretSetting,
  type Section,
  type SettingRow,
  sectionsOf,
  showValue,
} from "./config-tree.js";
import type { PageDef } from "./types.js";

type View = "settings" | "yaml" | "env";
const VIEWS: Array<[View, string]> = [
  ["settings", "Settings"],
  ["yaml", "config.yaml"],
  ["env", ".env names"],
];

function viewOf(route: Route): View {
  const v = route.query.get("view");
  return v === "yaml" || v === "env" ? v : "settings";
}

function queryOf(
  route: Route,
  change: Record<string, string | undefined>,
): Record<string, string | undefined> {
  const current: Record<string, string | undefined> = {};
  for (const [k, v] of route.query) current[k] = v;
  return { ...current, ...change };
}

function Row({
  row,
  locked,
  choices,
  editing,
  onEdit,
  onDone,
}: {
  row: SettingRow;
  locked: boolean;
  choices: string[] | undefined;
  editing: boolean;
  onEdit: () => void;
  onDone: (saved: boolean) => void;
}) {
  const secret = isSecretSetting(row.key, row.value);
  // Back from the editor (saved or cancelled), the focus returns to this row's Edit button.
  const button = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    if (wasEditing.current && !editing) button.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  return (
    <tr class={row.changed ? "changed" : ""}>
      <th scope="row" class="setting-key">
        <code>{row.key}</code>
        <span class="setting-badges">
          {row.changed ? <Badge tone="info">changed</Badge> : null}
          {row.inFile ? <Badge>config.yaml</Badge> : null}
          {row.fromEnv ? <Badge tone="warn">environment</Badge> : null}
        </span>
      </th>
      <td class="setting-value">
        {editing ? (
          <RowEditor
            settingKey={row.key}
            initial={editText(row.value)}
            secret={secret}
            choices={choices}
            onDone={onDone}
          />
        ) : (
          <code>{showValue(row.value)}</code>
        )}
      </td>
      <td class="hide-narrow setting-default">
        <code class="muted">{showValue(row.fallback)}</code>
      </td>
      <td class="setting-action">
        {locked ? (
          <Badge tone="warn">terminal only</Badge>
        ) : editing ? null : (
          <button
            type="button"
            class="btn small"
            ref={button}
            onClick={onEdit}
            aria-label={`Edit ${row.key}`}
          >
            Edit
          </button>
        )}
      </td>
    </tr>
  );
}

function SectionCard({
  section,
  locked,
  choices,
  editing,
  setEditing,
  reload,
}: {
  section: Section;
  locked: boolean;
  choices: Record<string, string[]>;
  editing: string | null;
  setEditing: (key: string | null) => void;
  reload: () => void;
}) {
  const changed = section.rows.filter((r) => r.changed).length;
  const headingId = `section-${section.name.replace(/[^\w-]/g, "_")}`;
  return (
    <section class="config-section" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {section.name} {changed > 0 ? <span class="muted section-count">({changed} changed)</span> : null}
      </h2>
      {locked ? (
        <p class="note warn">
          The dashboard may not change its own <code>{section.name}.*</code> settings (its sign-in): use{" "}
          <code>hermes config set</code> in a terminal.
        </p>
      ) : null}
      <div class="table-wrap">
        <table class="settings">
          <thead>
            <tr>
              <th scope="col">key</th>
              <th scope="col">value</th>
              <th scope="col" class="hide-narrow">
                default
              </th>
              <th scope="col">
                <span class="sr-only">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {section.rows.map((row) => (
              <Row
                key={row.key}
                row={row}
                locked={locked}
                choices={choices[row.key]}
                editing={editing === row.key}
                onEdit={() => setEditing(row.key)}
                onDone={(saved) => {
                  setEditing(null);
                  if (saved) reload();
                }}
              />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function SettingsView({ data, route, reload }: { data: ConfigAnswer; route: Route; reload: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const text = route.query.get("q") ?? "";
  const onlyChanged = route.query.get("changed") === "1";
  const all = useMemo(() => sectionsOf(data), [data]);
  const knownKeys = useMemo(() => all.flatMap((s) => s.rows.map((r) => r.key)), [all]);
  const needle = text.trim().toLowerCase();
  const shown = all
    .map((s) => ({
      ...s,
      rows: s.rows.filter(
        (r) =>
          (!onlyChanged || r.changed) &&
          (needle === "" ||
            r.key.toLowerCase().includes(needle) ||
            showValue(r.value).toLowerCase().includes(needle)),
      ),
    }))
    .filter((s) => s.rows.length > 0);
  const changedCount = all.reduce((n, s) => n + s.rows.filter((r) => r.changed).length, 0);
  return (
    <>
      <SetKeyForm knownKeys={knownKeys} onSaved={reload} />
      <div class="toolbar config-filter">
        <label class="sr-only" for="config-filter">
          Filter settings
        </label>
        <input
          id="config-filter"
          type="search"
          placeholder="Filter by key or value"
          value={text}
          onInput={(e) =>
            setQuery(queryOf(route, { q: (e.currentTarget as HTMLInputElement).value || undefined }))
          }
        />
        <label class="check">
          <input
            type="checkbox"
            checked={onlyChanged}
            onChange={(e) =>
              setQuery(
                queryOf(route, { changed: (e.currentTarget as HTMLInputElement).checked ? "1" : undefined }),
              )
            }
          />
          Only changed from the defaults ({changedCount})
        </label>
      </div>
      {shown.length === 0 ? (
        <Empty>No setting matches. Clear the filter, or set a new key in the form above.</Empty>
      ) : (
        shown.map((section) => (
          <SectionCard
            key={section.name}
            section={section}
            locked={data.not_editable.sections.includes(section.name)}
            choices={data.choices}
            editing={editing}
            setEditing={setEditing}
            reload={reload}
          />
        ))
      )}
    </>
  );
}

function YamlView({ data }: { data: ConfigAnswer }) {
  if (!data.exists) {
    return (
      <Empty>
        There is no config.yaml yet: every setting has its default. Saving a value creates the file.
      </Empty>
    );
  }
  if (data.raw === null) {
    return (
      <ErrorNote error={`config.yaml cannot be shown masked: ${data.raw_error ?? "it does not parse"}`} />
    );
  }
  return (
    <section aria-labelledby="yaml-title">
      <h2 id="yaml-title">config.yaml as written</h2>
      <p class="muted">
        Values under secret-looking keys are masked; comments and layout are as in the file.
      </p>
      <pre
        class="config-yaml"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
        tabIndex={0}
      >
        <code>{data.raw}</code>
      </pre>
    </section>
  );
}

function EnvView({ data, reload }: { data: ConfigAnswer; reload: () => void }) {
  const env = data.env_file;
  return (
    <section aria-labelledby="env-title">
      <h2 id="env-title">.env variable names</h2>
      <p class="muted">
        Names only: values never leave the server. <code>{env.path}</code> (mode 0600).
      </p>
      {!env.exists || env.names.length === 0 ? (
        <Empty>No .env file, or it defines nothing. Credentials set below are written there.</Empty>
      ) : (
        <ul class="env-names">
          {env.names.map((n) => (
            <li key={n.name}>
              <code>{n.name}</code>{" "}
              {n.overridden ? <Badge tone="warn">the real environment sets it too and wins</Badge> : null}
            </li>
          ))}
        </ul>
      )}
      <h2>Set a credential or allowlist</h2>
      <p class="muted">The dashboard sets {data.not_editable.env}; other variables are set in a terminal.</p>
      <EnvForm onSaved={reload} />
    </section>
  );
}

function ConfigPage({ route }: { route: Route }) {
  const config = useApi<ConfigAnswer>("config");
  const view = viewOf(route);
  const data = config.data;
  return (
    <section class="config-page">
      <PageHeader title="Config">
        {data ? <code>{data.path}</code> : "config.yaml"} over the built-in defaults; secrets masked.
      </PageHeader>
      <nav class="view-switch" aria-label="Config views">
        {VIEWS.map(([id, label]) => (
          <a
            key={id}
            href={href("config", [], id === "settings" ? {} : { view: id })}
            aria-current={view === id ? "page" : undefined}
            class={view === id ? "active" : ""}
          >
            {label}
          </a>
        ))}
      </nav>
      {config.error ? <ErrorNote error={config.error} onRetry={config.reload} /> : null}
      {config.loading && !data ? <Loading /> : null}
      {data && data.warnings.length > 0 ? (
        <div class="note warn" role="status">
          <Facts items={data.warnings.map((w, i) => [`warning ${i + 1}`, w])} />
        </div>
      ) : null}
      {data && view === "settings" ? <SettingsView data={data} route={route} reload={config.reload} /> : null}
      {data && view === "yaml" ? <YamlView data={data} /> : null}
      {data && view === "env" ? <EnvView data={data} reload={config.reload} /> : null}
    </section>
  );
}

export const configPage: PageDef = { id: "config", title: "Config", order: 80, component: ConfigPage };
