/**
 * Pure rules of the email platform: which mail is never answered (automated senders, bounces,
 * mailing lists, our own mail), how a received body becomes the user's message (quoted history and
 * signatures cut), and the headers that keep a reply in its thread (Subject, In-Reply-To,
 * References). No I/O here; `email.ts` feeds parsed mail in.
 */

/** Address substrings of automated senders (upstream's `_NOREPLY_PATTERNS`). */
const NOREPLY_PATTERNS = [
  "noreply",
  "no-reply",
  "no_reply",
  "donotreply",
  "do-not-reply",
  "mailer-daemon",
  "postmaster",
  "bounce",
  "notifications@",
  "automated@",
  "auto-confirm",
  "auto-reply",
  "automailer",
] as const;

/** Header name (lower case) → when its value marks automated mail. */
const AUTOMATED_HEADERS: ReadonlyArray<readonly [string, (value: string) => boolean]> = [
  // RFC 3834: anything but "no" is machine-sent (auto-replied, auto-generated, auto-notified).
  ["auto-submitted", (v) => v.trim().toLowerCase() !== "no"],
  ["precedence", (v) => ["bulk", "list", "junk", "auto_reply"].includes(v.trim().toLowerCase())],
  ["x-auto-response-suppress", (v) => v.trim() !== ""],
  ["list-unsubscribe", (v) => v.trim() !== ""],
  // Beyond upstream: a list's own id, and the autoresponders that mark themselves.
  ["list-id", (v) => v.trim() !== ""],
  ["x-autoreply", (v) => v.trim() !== ""],
  ["x-autorespond", (v) => v.trim() !== ""],
];

/** The headers the decision reads, lower-cased names to their (first) text value. */
export type HeaderMap = ReadonlyMap<string, string>;

export interface SkipInput {
  /** Sender address, lower case. */
  from: string;
  /** The agent's own address. */
  self: string;
  headers: HeaderMap;
  /** Top-level content type, e.g. `multipart/report`. */
  contentType?: string | undefined;
  messageId?: string | undefined;
}

/**
 * Why a message must not reach the agent (and so is never answered), or undefined when it may.
 * Answering any of these is how reply loops and backscatter start.
 */
export function skipReason(input: SkipInput): string | undefined {
  const from = input.from.trim().toLowerCase();
  if (!from) return "no sender address";
  if (from === input.self.trim().toLowerCase()) return "sent by this mailbox";
  if (input.messageId && /^<?hermes-[0-9a-f]+@/i.test(input.messageId)) return "one of our own replies";
  const pattern = NOREPLY_PATTERNS.find((p) => from.includes(p));
  if (pattern) return `automated sender (${pattern})`;
  // Delivery status notifications (bounces) are multipart/report; so are read receipts.
  if ((input.contentType ?? "").toLowerCase().startsWith("multipart/report")) return "delivery report";
  for (const [name, automated] of AUTOMATED_HEADERS) {
    const value = input.headers.get(name);
    if (value !== undefined && automated(value)) return `${name} header`;
  }
  return undefined;
}

/** Lines that open the quoted previous message in common mail clients. */
const QUOTE_OPENERS: readonly RegExp[] = [
  // Gmail, Apple Mail, Thunderbird: "On Tue, 3 Mar 2026 at 10:00, Alice <a@x> wrote:".
  /^\s*On\b.{0,300}\bwrote:\s*$/i,
  /^\s*Am\b.{0,300}\bschrieb\b.{0,100}:\s*$/i,
  /^\s*Le\b.{0,300}\ba \u00e9crit\s*:\s*$/i,
  /^\s*El\b.{0,300}\bescribi\u00f3:\s*$/i,
  // Outlook.
  /^\s*-{2,}\s*Original Message\s*-{2,}\s*$/i,
  /^\s*_{10,}\s*$/,
  /^\s*-{2,}\s*Forwarded message\s*-{2,}\s*$/i,
];

/** Outlook's header block that starts a quoted message: "From: …" followed by "Sent:"/"Date:". */
function outlookHeaderAt(lines: readonly string[], i: number): boolean {
  if (!/^\s*\*?From:\*?\s+\S/i.test(lines[i] ?? "")) return false;
  const next = lines.slice(i + 1, i + 4).join("\n");
  return /^\s*\*?(Sent|Date):\*?\s+\S/im.test(next);
}

/**
 * The new part of a reply: drops the quoted previous message ("On … wrote:" and what follows,
 * Outlook's "From:/Sent:" block, `>`-quoted lines at the end) and a trailing signature after the
 * standard `-- ` delimiter. Quoted lines in the middle (inline answers) are kept, since the user's
 * text around them refers to them. Returns the text unchanged when nothing new would remain.
 */
export function stripQuotedReply(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let end = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    // A wrapped "On … \n … wrote:" header spans two lines.
    const joined = `${line} ${lines[i + 1] ?? ""}`;
    if (
      QUOTE_OPENERS.some((re) => re.test(line)) ||
      (/^\s*On\b/i.test(line) &&
        /\bwrote:\s*$/i.test(lines[i + 1] ?? "") &&
        /^\s*On\b.*\bwrote:\s*$/i.test(joined)) ||
      outlookHeaderAt(lines, i)
    ) {
      end = i;
      break;
    }
    if (line === "-- " || line === "--") {
      end = i;
      break;
    }
  }
  let kept = lines.slice(0, end);
  // Trailing quoted lines (and blank lines among them) are history, not the answer.
  let last = kept.length;
  while (last > 0 && /^\s*(>.*)?$/.test(kept[last - 1] ?? "")) last--;
  kept = kept.slice(0, last);
  const result = kept.join("\n").trim();
  return result === "" ? text.trim() : result;
}

/**
 * What the agent reads: the body, headed by the subject on a new conversation (upstream's
 * `[Subject: …]`; replies, whose subject starts with Re:, carry only the body).
 */
export function inboundText(subject: string, body: string, hasMedia: boolean): string {
  const text = body.trim();
  const s = subject.trim();
  if (s && !/^re:/i.test(s)) return text ? `[Subject: ${s}]\n\n${text}` : `[Subject: ${s}]`;
  if (text) return text;
  return hasMedia ? "" : "(empty email)";
}

/** `Re: <subject>` without stacking prefixes (`Re: Re: Re:` and `RE:`/`Aw:` variants). */
export function replySubject(subject: string | undefined): string {
  const s = (subject ?? "").trim();
  if (!s) return "Re: Hermes Agent";
  return /^(re|aw|sv|antw):/i.test(s) ? `Re: ${s.replace(/^(re|aw|sv|antw):\s*/i, "")}` : `Re: ${s}`;
}

/** Message-IDs in a References/In-Reply-To value, in order, each in angle brackets. */
export function messageIds(value: string | readonly string[] | undefined): string[] {
  const raw = Array.isArray(value) ? value.join(" ") : ((value as string | undefined) ?? "");
  const ids = raw.match(/<[^<>\s]+>/g) ?? [];
  if (ids.length > 0) return ids;
  return raw
    .split(/\s+/)
    .filter((s) => s.includes("@"))
    .map((s) => `<${s.replace(/^<|>$/g, "")}>`);
}

/** The conversation a received message continues, remembered to answer in its thread. */
export interface ThreadContext {
  subject: string;
  /** The received message's own Message-ID. */
  messageId?: string | undefined;
  /** Its References chain (oldest first). */
  references: string[];
}

/** Most References ids sent; long threads keep the first (the root) and the latest ones. */
const MAX_REFERENCES = 20;

/** Headers that put a reply in the thread of `ctx` (RFC 5322 §3.6.4). */
export function threadHeaders(ctx: ThreadContext | undefined): {
  subject: string;
  inReplyTo?: string;
  references?: string[];
} {
  if (!ctx) return { subject: "Hermes Agent" };
  const chain = [...ctx.references, ...(ctx.messageId ? [ctx.messageId] : [])];
  const unique = chain.filter((id, i) => chain.indexOf(id) === i);
  const references =
    unique.length > MAX_REFERENCES ? [unique[0] ?? "", ...unique.slice(-(MAX_REFERENCES - 1))] : unique;
  return {
    subject: replySubject(ctx.subject),
    ...(ctx.messageId ? { inReplyTo: ctx.messageId } : {}),
    ...(references.length > 0 ? { references } : {}),
  };
}

/** A file name safe to write under the media cache (no separators, no leading dots, bounded). */
export function safeAttachmentName(name: string | undefined, fallback: string): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .replace(/[^\w.\- ]+/g, "_")
    .replace(/^[.\s]+/, "")
    .slice(0, 120)
    .trim();
  return cleaned || fallback;
}
