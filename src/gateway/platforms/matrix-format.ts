/**
 * Agent markdown as Matrix message content: `body` keeps the markdown (what clients without HTML
 * show, and what notifications quote) and `formatted_body` carries `org.matrix.custom.html`
 * rendered by `marked`. Raw HTML the model wrote is shown as text, never passed through, and only
 * web, mail and matrix.to links become anchors. Pure, apart from loading `marked` on first use.
 *
 * Also the relation shapes the adapter sends: replies (`m.in_reply_to`), threads (`m.thread` with
 * the reply fallback for clients without threads) and edits (`m.replace` with `m.new_content`).
 */
import { escapeHtml, markdownToSafeHtml } from "./markdown-html.js";

export interface MatrixTextContent {
  msgtype: "m.text" | "m.notice";
  body: string;
  format?: "org.matrix.custom.html";
  formatted_body?: string;
  [key: string]: unknown;
}

/** Markdown → message content; `plain` sends the text as is (pairing codes, command output). */
export function matrixTextContent(text: string, plain = false): MatrixTextContent {
  if (plain) return { msgtype: "m.text", body: text };
  const html = markdownToSafeHtml(text).trim();
  // A single paragraph of plain words needs no HTML at all.
  const bare = /^<p>([^<]*)<\/p>$/.exec(html);
  if (bare && bare[1] === escapeHtml(text).replace(/\n/g, "<br>")) return { msgtype: "m.text", body: text };
  return { msgtype: "m.text", body: text, format: "org.matrix.custom.html", formatted_body: html };
}

/** Where a message goes in its room: a thread (rooted at an event) and/or a reply to an event. */
export interface MatrixPlacement {
  threadId?: string | undefined;
  replyTo?: string | undefined;
}

/** The `m.relates_to` for a new message placed in a thread and/or as a reply. */
export function relationFor(placement: MatrixPlacement): Record<string, unknown> | undefined {
  if (placement.threadId) {
    const replyTo = placement.replyTo ?? placement.threadId;
    return {
      rel_type: "m.thread",
      event_id: placement.threadId,
      // Clients without threads show it as a reply to the last message.
      is_falling_back: placement.replyTo === undefined,
      "m.in_reply_to": { event_id: replyTo },
    };
  }
  if (placement.replyTo) return { "m.in_reply_to": { event_id: placement.replyTo } };
  return undefined;
}

/** Content that replaces event `eventId` with `content` (an edit; clients show the new text). */
export function editContent(eventId: string, content: MatrixTextContent): Record<string, unknown> {
  const fallback: Record<string, unknown> = { msgtype: content.msgtype, body: `* ${content.body}` };
  if (content.formatted_body) {
    fallback["format"] = content.format;
    fallback["formatted_body"] = `* ${content.formatted_body}`;
  }
  return {
    ...fallback,
    "m.new_content": content,
    "m.relates_to": { rel_type: "m.replace", event_id: eventId },
  };
}

/**
 * A target as `hermes send -t matrix:<room>[:<thread>]` parses it: the last colon splits, so a
 * room id (`!abc:server`) arrives cut in two. Event ids (threads) start with `$`; anything else
 * after the colon is the room's server part.
 */
export function matrixRoute(
  chatId: string,
  threadId: string | undefined,
): { roomId: string; threadId?: string } {
  if (threadId && !threadId.startsWith("$")) return { roomId: `${chatId}:${threadId}` };
  return { roomId: chatId, ...(threadId ? { threadId } : {}) };
}
