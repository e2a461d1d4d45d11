/**
 * Webhook prompt templates, as Python Hermes renders them: `{dot.path}` placeholders are filled
 * from the JSON payload (`{pull_request.title}` → `payload.pull_request.title`), `{__raw__}` is the
 * whole payload as indented JSON (cut at 4000 characters) and `{event_type}` is the detected event.
 * A path that does not resolve stays in the text as written (`{missing.key}`), so a typo shows up
 * in the agent's prompt instead of silently vanishing. Objects and arrays become indented JSON cut
 * at 2000 characters; other values their plain text (`true`, `42`, `null`). Pure; never throws.
 *
 * One extension over Python: a numeric segment indexes an array (`{commits.0.message}`); Python
 * leaves such a placeholder unresolved.
 */

/** Placeholder syntax shared with Python Hermes: letters, digits, `_` and `.` between braces. */
const PLACEHOLDER = /\{([a-zA-Z0-9_.]+)\}/g;

/** Longest `{__raw__}` dump and longest rendering of one object or array value. */
export const RAW_MAX_CHARS = 4000;
export const VALUE_MAX_CHARS = 2000;

export interface TemplateContext {
  /** Event type detected for the request (`pull_request`, `push`); fills `{event_type}`. */
  eventType?: string;
  /** Route name; used by the default prompt when a route has no template. */
  routeName?: string;
}

type Lookup = { found: true; value: unknown } | { found: false };

/**
 * Follows `path` (`a.b.0.c`) through objects (own keys only) and arrays (numeric segments).
 * `found: false` when any segment is missing or the value on the way is not a container.
 */
export function lookupPath(payload: unknown, path: string): Lookup {
  let value: unknown = payload;
  for (const part of path.split(".")) {
    if (Array.isArray(value)) {
      if (!/^\d+$/.test(part)) return { found: false };
      const index = Number(part);
      if (index >= value.length) return { found: false };
      value = value[index];
    } else if (value !== null && typeof value === "object") {
      if (!Object.hasOwn(value, part)) return { found: false };
      value = (value as Record<string, unknown>)[part];
    } else {
      return { found: false };
    }
  }
  return { found: true, value };
}

/** `text` cut to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end);
}

/** Indented JSON of `value`, or its plain text when it cannot be serialised. */
function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** How one resolved value reads in the prompt. */
export function stringifyValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "null";
  if (typeof value === "object") return cutText(json(value), VALUE_MAX_CHARS);
  return String(value);
}

/**
 * Fills the placeholders of `template` from `payload`. Unknown paths are left as written; the
 * result is never longer than the template plus the values put into it.
 */
export function renderTemplate(template: string, payload: unknown, context: TemplateContext = {}): string {
  return template.replace(PLACEHOLDER, (whole, key: string) => {
    if (key === "__raw__") return cutText(json(payload), RAW_MAX_CHARS);
    if (key === "event_type" && context.eventType !== undefined) return context.eventType;
    const hit = lookupPath(payload, key);
    return hit.found ? stringifyValue(hit.value) : whole;
  });
}

/**
 * The agent's prompt for a route: its template rendered, or, when the route has no template, the
 * event and route named over the payload as a fenced JSON block (cut at 4000 characters).
 */
export function renderPrompt(
  template: string | undefined,
  payload: unknown,
  context: TemplateContext = {},
): string {
  if (template?.trim()) return renderTemplate(template, payload, context);
  const dump = cutText(json(payload), RAW_MAX_CHARS);
  return (
    `Webhook event '${context.eventType ?? "unknown"}' on route '${context.routeName ?? ""}':\n\n` +
    "```json\n" +
    `${dump}\n` +
    "```"
  );
}

/**
 * A route's `deliver_extra` with each string value rendered against the payload
 * (`chat_id: "{match.chat}"`); other values are kept as they are.
 */
export function renderDeliverExtra(extra: unknown, payload: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (extra === null || typeof extra !== "object" || Array.isArray(extra)) return out;
  for (const [key, value] of Object.entries(extra)) {
    out[key] = typeof value === "string" ? renderTemplate(value, payload) : value;
  }
  return out;
}

/**
 * Every string in `payload` (values, not keys), joined by newlines, up to `max` characters: the
 * third-party text a prompt-injection scan should read.
 */
export function payloadText(payload: unknown, max = 65_536): string {
  const parts: string[] = [];
  let size = 0;
  const stack: unknown[] = [payload];
  while (stack.length > 0 && size < max) {
    const value = stack.pop();
    if (typeof value === "string") {
      parts.push(value);
      size += value.length + 1;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value !== null && typeof value === "object") {
      stack.push(...Object.values(value).reverse());
    }
  }
  return cutText(parts.join("\n"), max);
}
