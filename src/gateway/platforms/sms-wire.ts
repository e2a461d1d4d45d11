/**
 * Pure pieces of the SMS (Twilio) platform: the webhook signature Twilio puts on every request it
 * sends (`X-Twilio-Signature`), what an inbound webhook means, and markdown flattened to the plain
 * text a phone shows. No I/O.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Twilio's signature: base64 HMAC-SHA1, keyed with the auth token, over the full URL Twilio
 * called followed by every POST parameter as name+value, sorted by name (values of a repeated
 * name in the order sent).
 */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const names = [...new Set([...params.keys()])].sort();
  let payload = url;
  for (const name of names) for (const value of params.getAll(name)) payload += name + value;
  return createHmac("sha1", authToken).update(payload, "utf8").digest("base64");
}

/**
 * The URLs Twilio may have signed: the URL as given, and with the default port added or removed
 * (Twilio's own validators accept both, since proxies differ in what they pass on).
 */
function urlVariants(url: string): string[] {
  try {
    const u = new URL(url);
    const defaultPort = u.protocol === "https:" ? "443" : "80";
    const other = new URL(url);
    other.port = u.port ? "" : defaultPort;
    // URL drops a default port on assignment; build that spelling by hand.
    const withPort = u.port
      ? url
      : url.replace(`${u.protocol}//${u.host}`, `${u.protocol}//${u.hostname}:${defaultPort}`);
    return [...new Set([url, other.toString(), withPort])];
  } catch {
    return [url];
  }
}

/** Whether `signature` is Twilio's for this request. Constant-time; false for a missing one. */
export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: URLSearchParams,
  signature: string | undefined,
): boolean {
  if (!signature || !authToken) return false;
  const given = Buffer.from(signature);
  return urlVariants(url).some((candidate) => {
    const expected = Buffer.from(twilioSignature(authToken, candidate, params));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

export interface SmsMediaRef {
  url: string;
  contentType?: string | undefined;
}

export interface SmsInbound {
  from: string;
  to: string;
  body: string;
  messageSid: string;
  media: SmsMediaRef[];
}

/** The fields of an inbound message webhook; undefined when it is not one (no sender). */
export function parseSmsWebhook(params: URLSearchParams): SmsInbound | undefined {
  const from = params.get("From")?.trim() ?? "";
  if (!from) return undefined;
  const count = Math.min(10, Math.max(0, Number.parseInt(params.get("NumMedia") ?? "0", 10) || 0));
  const media: SmsMediaRef[] = [];
  for (let i = 0; i < count; i++) {
    const url = params.get(`MediaUrl${i}`)?.trim();
    if (url) media.push({ url, contentType: params.get(`MediaContentType${i}`)?.trim() || undefined });
  }
  return {
    from,
    to: params.get("To")?.trim() ?? "",
    body: params.get("Body") ?? "",
    messageSid: params.get("MessageSid")?.trim() || params.get("SmsMessageSid")?.trim() || "",
    media,
  };
}

/** Markdown flattened to what an SMS shows: markers removed, links as `label (url)`, bullets kept. */
export function markdownToSms(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.replace(/\r\n?/g, "\n").split("\n")) {
    if (/^\s{0,3}(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      out.push(line);
      continue;
    }
    let text = line.replace(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/, "$1").replace(/^(\s*)[-*+]\s+/, "$1• ");
    text = text
      .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) =>
        label === url ? url : `${label} (${url})`,
      )
      .replace(/`([^`\n]+)`/g, "$1")
      .replace(/\*\*(?=\S)(.+?)\*\*/g, "$1")
      .replace(/__(?=\S)(.+?)__/g, "$1")
      .replace(/~~(?=\S)(.+?)~~/g, "$1")
      .replace(/(?<![\w*])\*(?=[^\s*])([^*\n]+?)\*(?![\w*])/g, "$1")
      .replace(/(?<![\w_])_(?=[^\s_])([^_\n]+?)_(?![\w_])/g, "$1");
    out.push(text);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** A phone number for logs: +15551234567 → +1555***4567. */
export function redactPhone(phone: string): string {
  if (phone.length <= 8) return phone.length > 4 ? `${phone.slice(0, 2)}***${phone.slice(-2)}` : "****";
  return `${phone.slice(0, 5)}***${phone.slice(-4)}`;
}
