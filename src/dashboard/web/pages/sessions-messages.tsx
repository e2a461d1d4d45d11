/**
 * One stored message in a transcript: user and assistant text as markdown (raw HTML shown as
 * text, see components/markdown.tsx), tool calls with their arguments and tool results collapsed
 * in `<details>`, reasoning collapsed. Plus `markTerms`, which marks searched words in the
 * rendered markdown.
 */
import { Markdown } from "../components/markdown.js";
import { Badge } from "../components/ui.js";
import { fmtNumber, fmtTime } from "../format.js";

type Part =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: string };

/** A message of `GET /api/sessions/:id`. */
export interface TranscriptMessage {
  id: number;
  role: "system" | "user" | "assistant" | "tool";
  content: string | Part[] | null;
  tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> | null;
  tool_call_id: string | null;
  tool_name: string | null;
  timestamp: number;
  finish_reason: string | null;
  reasoning: string | null;
  active: boolean;
}

/** The text of a message's content; images become a note (the page loads nothing from elsewhere). */
export function contentText(content: TranscriptMessage["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content
    .map((p) => {
      if (p.type === "text" && "text" in p) return p.text;
      if (p.type === "image_url") return "[image]";
      return `[${p.type}]`;
    })
    .join("\n\n");
}

/** Tool arguments pretty-printed when they are JSON, else as sent. */
function prettyArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function ToolCall({ call }: { call: { id: string; function: { name: string; arguments: string } } }) {
  return (
    <details class="tool-call">
      <summary>
        Tool call: <code>{call.function.name}</code>
      </summary>
      <pre>{prettyArgs(call.function.arguments)}</pre>
    </details>
  );
}

const ROLE_LABEL: Record<TranscriptMessage["role"], string> = {
  system: "System",
  user: "User",
  assistant: "Assistant",
  tool: "Tool result",
};

export function MessageView({ message: m }: { message: TranscriptMessage }) {
  const text = contentText(m.content);
  const head = (
    <div class="msg-head">
      <strong>{ROLE_LABEL[m.role] ?? m.role}</strong>
      {m.role === "tool" && m.tool_name ? <code>{m.tool_name}</code> : null}
      {!m.active ? <Badge tone="warn">undone</Badge> : null}
      <span class="muted msg-time">{fmtTime(m.timestamp)}</span>
    </div>
  );
  if (m.role === "tool" || m.role === "system") {
    const name = m.role === "tool" ? `Result of ${m.tool_name ?? "a tool"}` : "System message";
    return (
      <article id={`msg-${m.id}`} class={`msg ${m.role}`} data-collapsed="1" aria-label={name}>
        <details>
          <summary>
            {name} <span class="muted">({fmtNumber(text.length)} characters)</span>
          </summary>
          <pre>{text}</pre>
        </details>
      </article>
    );
  }
  return (
    <article id={`msg-${m.id}`} class={`msg ${m.role}`} aria-label={ROLE_LABEL[m.role]}>
      {head}
      {m.reasoning ? (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <Markdown text={m.reasoning} />
        </details>
      ) : null}
      {text ? <Markdown text={text} /> : null}
      {m.tool_calls?.map((call) => (
        <ToolCall key={call.id} call={call} />
      ))}
    </article>
  );
}

/** The plain words of a search query (operators, quotes and `*` removed). */
export function queryTerms(q: string): string[] {
  const phrases = [...q.matchAll(/"([^"]+)"/g)].map((m) => m[1]?.trim() ?? "");
  const words = q
    .replace(/"[^"]*"/g, " ")
    .split(/\s+/)
    .map((w) => w.replace(/[*()^:]/g, ""))
    .filter((w) => w && w !== "OR" && w !== "NOT" && w !== "AND");
  return [...new Set([...phrases, ...words])].filter((t) => t.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * Wraps occurrences of the query's words in `<mark>` inside the rendered markdown under `root`
 * (markdown blocks only: their HTML is set once, so the page's renderer never redraws over it).
 */
export function markTerms(root: HTMLElement, q: string): void {
  const terms = queryTerms(q).map((t) => t.toLowerCase());
  if (terms.length === 0) return;
  for (const block of root.querySelectorAll<HTMLElement>(".markdown")) {
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    const nodes: Text[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!(n.parentElement?.closest("mark") ?? null)) nodes.push(n as Text);
    }
    for (const node of nodes) {
      const text = node.data;
      const lower = text.toLowerCase();
      const pieces: Array<string | HTMLElement> = [];
      let i = 0;
      let last = 0;
      while (i < text.length) {
        const term = terms.find((t) => lower.startsWith(t, i));
        if (!term) {
          i++;
          continue;
        }
        if (i > last) pieces.push(text.slice(last, i));
        const mark = document.createElement("mark");
        mark.textContent = text.slice(i, i + term.length);
        pieces.push(mark);
        i += term.length;
        last = i;
      }
      if (last === 0) continue;
      if (last < text.length) pieces.push(text.slice(last));
      node.replaceWith(...pieces);
    }
  }
}
