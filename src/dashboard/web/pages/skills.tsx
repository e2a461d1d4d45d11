/**
 * Skills: every installed skill with its category, who made it, state, pin and usage, filtered and
 * searched in the page (`#/skills?q=...&category=...&state=...&origin=...`); a skill's own page at
 * `#/skills/<name>`; the curator's status and actions; the agent's skill writes awaiting approval.
 */
import { Badge, Empty, ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { fmtNumber, fmtRelative } from "../format.js";
import { useApi } from "../hooks.js";
import { href, type Route, setQuery } from "../router.js";
import { CuratorPanel } from "./skills-curator.js";
import { SkillDetail, stateTone } from "./skills-detail.js";
import { PendingWrites } from "./skills-pending.js";
import type { PageDef } from "./types.js";

export interface SkillRow {
  name: string;
  description: string;
  category: string;
  origin: string;
  source: string;
  disabled: boolean;
  state: string;
  pinned: boolean;
  created_by: string | null;
  use_count: number;
  view_count: number;
  patch_count: number;
  last_used_at: string | null;
  last_activity_at: string | null;
  missing_env: string[];
}

interface SkillsAnswer {
  write_approval: boolean;
  pending: number;
  warnings: string[];
  skills: SkillRow[];
}

function matches(s: SkillRow, q: string): boolean {
  if (!q) return true;
  const text = `${s.name} ${s.description} ${s.category}`.toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => text.includes(word));
}

function Filters({ route, skills }: { route: Route; skills: SkillRow[] }) {
  const q = route.query.get("q") ?? "";
  const current = Object.fromEntries(
    ["q", "category", "state", "origin"].map((k) => [k, route.query.get(k) || undefined]),
  ) as Record<string, string | undefined>;
  const set = (key: string, value: string) => setQuery({ ...current, [key]: value || undefined });
  const options = (pick: (s: SkillRow) => string) => [...new Set(skills.map(pick).filter(Boolean))].sort();
  const select = (key: string, label: string, all: string, values: string[]) => (
    <label>
      <span class="sr-only">{label}</span>
      <select
        aria-label={label}
        value={route.query.get(key) ?? ""}
        onChange={(e) => set(key, (e.currentTarget as HTMLSelectElement).value)}
      >
        <option value="">{all}</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="toolbar">
      <label class="skills-search">
        <span class="muted">Search</span>
        <input
          type="search"
          aria-label="Search skills"
          value={q}
          onInput={(e) => set("q", (e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      {select(
        "category",
        "Category",
        "All categories",
        options((s) => s.category),
      )}
      {select(
        "state",
        "State",
        "Any state",
        options((s) => s.state),
      )}
      {select(
        "origin",
        "Made by",
        "Anyone",
        options((s) => s.origin),
      )}
    </div>
  );
}

function SkillTable({ rows }: { rows: SkillRow[] }) {
  return (
    <div class="table-wrap">
      <table class="skills-table">
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col" class="hide-narrow">
              Category
            </th>
            <th scope="col">State</th>
            <th scope="col" class="num" title="uses / views / patches">
              Use · view · patch
            </th>
            <th scope="col" class="hide-narrow">
              Last used
            </th>
            <th scope="col" class="hide-narrow">
              Made by
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={`${s.category}/${s.name}`} data-skill={s.name}>
              <td>
                <a href={href("skills", [s.name], s.category ? { category: s.category } : {})}>{s.name}</a>
                {s.pinned ? (
                  <>
                    {" "}
                    <Badge tone="info">pinned</Badge>
                  </>
                ) : null}
                {s.missing_env.length > 0 ? (
                  <>
                    {" "}
                    <Badge tone="warn">needs {s.missing_env.join(", ")}</Badge>
                  </>
                ) : null}
                <div class="muted skill-description">{s.description}</div>
              </td>
              <td class="hide-narrow">{s.category || "–"}</td>
              <td>
                <Badge tone={stateTone(s.state)}>{s.state}</Badge>
                {s.disabled ? (
                  <>
                    {" "}
                    <Badge tone="plain">disabled</Badge>
                  </>
                ) : null}
              </td>
              <td class="num">
                {fmtNumber(s.use_count)} · {fmtNumber(s.view_count)} · {fmtNumber(s.patch_count)}
              </td>
              <td class="hide-narrow">{s.last_used_at ? fmtRelative(s.last_used_at) : "never"}</td>
              <td class="hide-narrow">
                {s.created_by === "agent" ? "agent" : s.origin}
                {s.source === "external" ? " (external)" : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SkillList({ route }: { route: Route }) {
  const skills = useApi<SkillsAnswer>("skills");
  const data = skills.data;
  const q = route.query.get("q") ?? "";
  const category = route.query.get("category") ?? "";
  const state = route.query.get("state") ?? "";
  const origin = route.query.get("origin") ?? "";
  const rows = (data?.skills ?? []).filter(
    (s) =>
      matches(s, q) &&
      (!category || s.category === category) &&
      (!state || s.state === state) &&
      (!origin || s.origin === origin),
  );
  return (
    <section>
      <PageHeader title="Skills">
        What the agent knows how to do, how often it uses each, and the curator that tidies them.
      </PageHeader>
      {skills.error ? <ErrorNote error={skills.error} onRetry={skills.reload} /> : null}
      {skills.loading && !data ? <Loading /> : null}
      {data ? (
        <>
          {data.warnings.length > 0 ? (
            <div class="note warn">
              {data.warnings.map((w) => (
                <div key={w}>{w}</div>
              ))}
            </div>
          ) : null}
          {data.write_approval || data.pending > 0 ? (
            <section aria-labelledby="pending-title">
              <h2 id="pending-title">Skill writes awaiting approval</h2>
              <PendingWrites subsystem="skills" onChange={skills.reload} />
            </section>
          ) : null}
          <h2>Curator</h2>
          <CuratorPanel onChange={skills.reload} />
          <h2>Installed skills</h2>
          <Filters route={route} skills={data.skills} />
          <p class="muted" aria-live="polite">
            {rows.length === data.skills.length
              ? `${data.skills.length} skills`
              : `${rows.length} of ${data.skills.length} skills`}
          </p>
          {rows.length > 0 ? (
            <SkillTable rows={rows} />
          ) : data.skills.length === 0 ? (
            <Empty>
              No skills installed. `hermes skills browse` finds some, or the agent makes its own as it works.
            </Empty>
          ) : (
            <Empty>No skill matches these filters.</Empty>
          )}
        </>
      ) : null}
    </section>
  );
}

function Skills({ route }: { route: Route }) {
  const name = route.parts[0];
  return name ? (
    <SkillDetail name={name} category={route.query.get("category") ?? ""} />
  ) : (
    <SkillList route={route} />
  );
}

export const skillsPage: PageDef = { id: "skills", title: "Skills", order: 50, component: Skills };
