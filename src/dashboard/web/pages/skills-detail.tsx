/**
 * One skill (`#/skills/<name>`): its facts and usage, pin/unpin and archive through the curator's
 * verbs (bundled and hub skills are the curator's to leave alone, so those buttons are absent),
 * and its SKILL.md rendered (frontmatter shown as the source text it is).
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { Markdown } from "../components/markdown.js";
import { notify, notifyError } from "../components/toast.js";
import { Badge, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { fmtNumber, fmtRelative } from "../format.js";
import { useApi } from "../hooks.js";
import { href, navigate } from "../router.js";

interface SkillView {
  name: string;
  description: string;
  category: string;
  tags: string[];
  version: string | null;
  origin: string;
  source: string;
  disabled: boolean;
  owner: string | null;
  state: string;
  pinned: boolean;
  curator_managed: boolean;
  created_by: string | null;
  created_at: string | null;
  use_count: number;
  view_count: number;
  patch_count: number;
  last_used_at: string | null;
  last_viewed_at: string | null;
  last_patched_at: string | null;
  required_env: string[];
  missing_env: string[];
  linked_files: string[];
}

/** Splits `---\n...\n---` frontmatter from the body. */
function splitFrontmatter(text: string): { head: string; body: string } {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  return m ? { head: m[1] ?? "", body: text.slice(m[0].length) } : { head: "", body: text };
}

export function stateTone(state: string): "ok" | "warn" | "bad" | "plain" {
  return state === "active" ? "ok" : state === "stale" ? "warn" : state === "archived" ? "bad" : "plain";
}

const when = (at: string | null) => (at ? fmtRelative(at) : "never");

export function SkillDetail({ name, category }: { name: string; category: string }) {
  const skill = useApi<{ skill: SkillView; content: string }>(
    `skills/${encodeURIComponent(name)}`,
    category ? { category } : {},
  );
  const [busy, setBusy] = useState(false);
  const s = skill.data?.skill;
  const act = async (verb: "pin" | "unpin" | "archive") => {
    if (verb === "archive") {
      const ok = await confirmAction({
        title: `Archive "${name}"?`,
        body: "It moves to skills/.archive/ and the agent stops seeing it; the curator's Restore brings it back.",
        confirm: "Archive",
        danger: true,
      });
      if (!ok) return;
    }
    setBusy(true);
    try {
      const r = await apiSend<{ message: string }>("POST", `skills/${encodeURIComponent(name)}/${verb}`);
      notify(r.message);
      if (verb === "archive") navigate("skills");
      else skill.reload();
    } catch (error) {
      notifyError(error);
    } finally {
      setBusy(false);
    }
  };
  const curated = s && s.source === "home" && s.owner === null;
  const { head, body } = splitFrontmatter(skill.data?.content ?? "");
  return (
    <section>
      <p>
        <a href={href("skills")}>← All skills</a>
      </p>
      <PageHeader
        title={name}
        actions={
          curated ? (
            <>
              <button
                type="button"
                class="btn"
                disabled={busy}
                onClick={() => act(s.pinned ? "unpin" : "pin")}
              >
                {s.pinned ? "Unpin" : "Pin"}
              </button>
              <button
                type="button"
                class="btn danger"
                disabled={busy || s.pinned}
                onClick={() => act("archive")}
              >
                Archive
              </button>
            </>
          ) : null
        }
      >
        {s?.description ?? ""}
      </PageHeader>
      {skill.error ? <ErrorNote error={skill.error} onRetry={skill.reload} /> : null}
      {skill.loading && !s ? <Loading /> : null}
      {s ? (
        <>
          <Facts
            items={[
              [
                "state",
                <span key="state">
                  <Badge tone={stateTone(s.state)}>{s.state}</Badge>
                  {s.pinned ? (
                    <>
                      {" "}
                      <Badge tone="info">pinned</Badge>
                    </>
                  ) : null}
                  {s.disabled ? (
                    <>
                      {" "}
                      <Badge>disabled in config</Badge>
                    </>
                  ) : null}
                </span>,
              ],
              ["category", s.category || "–"],
              ["made by", s.created_by === "agent" ? "the agent" : s.origin],
              [
                "curator",
                curated
                  ? s.pinned
                    ? "leaves it alone (pinned)"
                    : "manages it"
                  : `never touches it (${s.owner})`,
              ],
              [
                "uses · views · patches",
                `${fmtNumber(s.use_count)} · ${fmtNumber(s.view_count)} · ${fmtNumber(s.patch_count)}`,
              ],
              ["last used", when(s.last_used_at)],
              ["last viewed", when(s.last_viewed_at)],
              ["last patched", when(s.last_patched_at)],
              ...(s.version ? [["version", s.version] as [string, string]] : []),
              ...(s.tags.length > 0 ? [["tags", s.tags.join(", ")] as [string, string]] : []),
              ...(s.required_env.length > 0
                ? [
                    [
                      "environment",
                      s.missing_env.length > 0 ? (
                        <Badge key="env" tone="warn">
                          missing {s.missing_env.join(", ")}
                        </Badge>
                      ) : (
                        s.required_env.join(", ")
                      ),
                    ] as [string, ComponentChildren],
                  ]
                : []),
              ...(s.linked_files.length > 0
                ? [["files", s.linked_files.join(", ")] as [string, string]]
                : []),
            ]}
          />
          <h2>SKILL.md</h2>
          {head ? (
            <details>
              <summary>Frontmatter</summary>
              <pre>{head}</pre>
            </details>
          ) : null}
          <article class="card skill-body">
            <Markdown text={body} />
          </article>
        </>
      ) : null}
    </section>
  );
}
