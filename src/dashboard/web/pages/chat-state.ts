/**
 * The chat page's transcript as data: what the server's events (`POST /api/chat`, see API.md) and
 * a stored session's messages (`GET /api/sessions/:id`) turn into. Pure functions, so the page
 * only renders.
 */

export type Item =
  | { kind: "user"; key: number; text: string }
  | { kind: "assistant"; key: number; text: string; streaming: boolean; reasoning: string }
  | {
      kind: "tool";
      key: number;
      callId: string;
      name: string;
      preview: string;
      status: "running" | "ok" | "failed";
      progress: string[];
      output: string;
      result: string;
      durationMs: number | null;
    }
  | {
      kind: "approval";
      key: number;
      id: string;
      command: string;
      reason: string;
      protectedPath: boolean;
      choices: string[];
      timeoutS: number;
      decision: string | null;
      by: string | null;
    }
  | {
      kind: "question";
      key: number;
      id: string;
      question: string;
      choices: string[];
      answer: string | null;
      by: string | null;
    }
  | { kind: "command"; key: number; text: string }
  | { kind: "notice"; key: number; text: string }
  | { kind: "error"; key: number; text: string };

let nextKey = 1;
const key = () => nextKey++;

type Json = Record<string, unknown>;
const str = (v: unknown): string =>
  typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);

/** Live output kept per tool line (the tail; the result holds what the model read). */
const MAX_OUTPUT = 20_000;

function lastAssistant(items: Item[]): Extract<Item, { kind: "assistant" }> | undefined {
  const last = items.at(-1);
  return last?.kind === "assistant" && last.streaming ? last : undefined;
}

function updateTool(
  items: Item[],
  callId: string,
  change: (tool: Extract<Item, { kind: "tool" }>) => Item,
): Item[] {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.kind === "tool" && item.callId === callId) {
      const next = items.slice();
      next[i] = change(item);
      return next;
    }
  }
  return items;
}

/** The transcript after one server event. */
export function applyEvent(items: Item[], event: string, raw: unknown): Item[] {
  const data = (raw && typeof raw === "object" ? raw : {}) as Json;
  switch (event) {
    case "text":
    case "reasoning": {
      const open = lastAssistant(items);
      const piece = str(data["text"]);
      const field = event === "text" ? "text" : "reasoning";
      if (open) return [...items.slice(0, -1), { ...open, [field]: open[field] + piece }];
      return [
        ...items,
        { kind: "assistant", key: key(), streaming: true, text: "", reasoning: "", [field]: piece },
      ];
    }
    case "discard": {
      const open = lastAssistant(items);
      const note: Item = {
        kind: "notice",
        key: key(),
        text: `The answer so far was dropped: ${str(data["reason"])}`,
      };
      return open ? [...items.slice(0, -1), note] : [...items, note];
    }
    case "tool_start":
      return [
        ...closeText(items),
        {
          kind: "tool",
          key: key(),
          callId: str(data["call_id"]),
          name: str(data["name"]),
          preview: str(data["preview"]),
          status: "running",
          progress: [],
          output: "",
          result: "",
          durationMs: null,
        },
      ];
    case "tool_progress":
      return updateTool(items, str(data["call_id"]), (t) => ({
        ...t,
        progress: [...t.progress, str(data["message"])].slice(-20),
      }));
    case "tool_output":
      return updateTool(items, str(data["call_id"]), (t) => ({
        ...t,
        output: (t.output + str(data["text"])).slice(-MAX_OUTPUT),
      }));
    case "tool_end":
      return updateTool(items, str(data["call_id"]), (t) => ({
        ...t,
        status: data["ok"] === false ? "failed" : "ok",
        result: str(data["result"]),
        durationMs: typeof data["duration_ms"] === "number" ? data["duration_ms"] : null,
      }));
    case "approval":
      return [
        ...closeText(items),
        {
          kind: "approval",
          key: key(),
          id: str(data["id"]),
          command: str(data["command"]),
          reason: str(data["reason"]),
          protectedPath: data["protected_path"] === true,
          choices: Array.isArray(data["choices"]) ? data["choices"].map(str) : ["once", "deny"],
          timeoutS: typeof data["timeout_s"] === "number" ? data["timeout_s"] : 60,
          decision: null,
          by: null,
        },
      ];
    case "approval_resolved":
      return items.map((item) =>
        item.kind === "approval" && item.id === str(data["id"])
          ? { ...item, decision: str(data["decision"]), by: str(data["by"]) }
          : item,
      );
    case "clarify":
      return [
        ...closeText(items),
        {
          kind: "question",
          key: key(),
          id: str(data["id"]),
          question: str(data["question"]),
          choices: Array.isArray(data["choices"]) ? data["choices"].map(str) : [],
          answer: null,
          by: null,
        },
      ];
    case "clarify_resolved":
      return items.map((item) =>
        item.kind === "question" && item.id === str(data["id"])
          ? { ...item, answer: data["answer"] === null ? "" : str(data["answer"]), by: str(data["by"]) }
          : item,
      );
    case "command":
      return [...closeText(items), { kind: "command", key: key(), text: str(data["text"]) }];
    case "notice":
      return [...items, { kind: "notice", key: key(), text: str(data["message"]) }];
    case "error":
      return [...closeText(items), { kind: "error", key: key(), text: str(data["message"]) }];
    case "done": {
      const closed = closeText(items).map((item) =>
        item.kind === "tool" && item.status === "running" ? { ...item, status: "failed" as const } : item,
      );
      const reason = str(data["reason"]);
      if (reason === "interrupted") return [...closed, { kind: "notice", key: key(), text: "Stopped." }];
      if (reason === "max_turns")
        return [
          ...closed,
          { kind: "notice", key: key(), text: "Stopped at the turn's tool-call limit (agent.max_turns)." },
        ];
      return closed;
    }
    default:
      return items;
  }
}

/** Ends the streaming answer (it is then shown as markdown). */
export function closeText(items: Item[]): Item[] {
  const open = lastAssistant(items);
  if (!open) return items;
  if (!open.text.trim() && !open.reasoning.trim()) return items.slice(0, -1);
  return [...items.slice(0, -1), { ...open, streaming: false }];
}

export function userItem(text: string): Item {
  return { kind: "user", key: key(), text };
}

export function errorItem(text: string): Item {
  return { kind: "error", key: key(), text };
}

/** A stored message as `GET /api/sessions/:id` gives it. */
export interface StoredMessage {
  role: string;
  content: unknown;
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> | null;
  tool_call_id?: string | null;
  tool_name?: string | null;
  reasoning?: string | null;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && "text" in part ? str((part as Json)["text"]) : "[image]",
      )
      .join("\n");
  }
  return "";
}

function argsPreview(raw: string | undefined): string {
  try {
    const args = JSON.parse(raw ?? "{}") as Json;
    for (const k of ["command", "path", "query", "url", "pattern", "name", "goal"]) {
      if (typeof args[k] === "string") return args[k].replace(/\s+/g, " ").slice(0, 160);
    }
  } catch {
    // Arguments that are not JSON are shown as they are.
  }
  return (raw ?? "").slice(0, 160);
}

/** A stored conversation as transcript items (system messages left out). */
export function historyItems(messages: StoredMessage[]): Item[] {
  let items: Item[] = [];
  for (const m of messages) {
    if (m.role === "user") items.push({ kind: "user", key: key(), text: textOf(m.content) });
    else if (m.role === "assistant") {
      const text = textOf(m.content);
      if (text.trim() || m.reasoning)
        items.push({ kind: "assistant", key: key(), text, reasoning: m.reasoning ?? "", streaming: false });
      for (const call of m.tool_calls ?? []) {
        items.push({
          kind: "tool",
          key: key(),
          callId: str(call.id),
          name: str(call.function?.name),
          preview: argsPreview(call.function?.arguments),
          status: "ok",
          progress: [],
          output: "",
          result: "",
          durationMs: null,
        });
      }
    } else if (m.role === "tool") {
      items = updateTool(items, str(m.tool_call_id), (t) => ({ ...t, result: textOf(m.content) }));
    }
  }
  return items;
}
