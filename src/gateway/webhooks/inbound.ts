/**
 * Reading one inbound webhook request: its body (bounded), its signature under each scheme senders
 * use, its event type, the sender's delivery id and its payload. Pure apart from the body reader.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const REPLAY_WINDOW_S = 300;

/** A request header by lower-case name; "" when absent. */
export type HeaderGetter = (name: string) => string;

const digest = (text: string | Buffer) => createHash("sha256").update(text).digest();

/** Equality that takes the same time wherever the strings differ and whatever their lengths. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected)) && given.length === expected.length;
}

const hmacHex = (secret: string | Buffer, data: Buffer) =>
  createHmac("sha256", secret).update(data).digest("hex");

function timestampFresh(raw: string, nowS: number): boolean {
  if (!/^\d+$/.test(raw.trim())) return false;
  return Math.abs(nowS - Number(raw.trim())) <= REPLAY_WINDOW_S;
}

function svixValid(
  body: Buffer,
  secret: string,
  id: string,
  ts: string,
  header: string,
  nowS: number,
): boolean {
  if (!id || !ts || !header || !timestampFresh(ts, nowS)) return false;
  let key: Buffer;
  if (secret.startsWith("whsec_")) {
    const b64 = secret.slice(6);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return false;
    key = Buffer.from(b64, "base64");
  } else {
    key = Buffer.from(secret, "utf8");
  }
  const signed = Buffer.concat([Buffer.from(`${id}.${ts}.`, "utf8"), body]);
  const expected = createHmac("sha256", key).update(signed).digest("base64");
  let ok = false;
  for (const part of header.split(/\s+/)) {
    const [version, signature] = part.split(",", 2);
    if (version === "v1" && signature !== undefined && sameSecret(signature, expected)) ok = true;
  }
  return ok;
}

/**
 * Checks a request's signature against `secret`, trying each scheme whose header is present, in
 * Python Hermes's order: Svix / Standard Webhooks (`svix-*`, `webhook-*`), Linear
 * (`Linear-Signature`), GitHub (`X-Hub-Signature-256: sha256=<hex>`), GitLab (`X-Gitlab-Token`), a
 * bearer token, generic V2 (`X-Webhook-Signature-V2` over `<timestamp>.<body>` with
 * `X-Webhook-Timestamp` within 5 minutes) and legacy V1 (`X-Webhook-Signature`, hex HMAC of the
 * body). No recognised header means invalid. `scheme` names what was checked.
 */
export function verifySignature(
  get: HeaderGetter,
  body: Buffer,
  secret: string,
  nowS: number,
): { ok: boolean; scheme: string } {
  let svix = ["svix-id", "svix-timestamp", "svix-signature"].map(get);
  if (!svix.some(Boolean) && get("webhook-signature")) {
    svix = ["webhook-id", "webhook-timestamp", "webhook-signature"].map(get);
  }
  if (svix.some(Boolean)) {
    const [id = "", ts = "", sig = ""] = svix;
    return { ok: svixValid(body, secret, id, ts, sig, nowS), scheme: "svix" };
  }
  const linear = get("linear-signature");
  if (linear) return { ok: sameSecret(linear, hmacHex(secret, body)), scheme: "linear" };
  const github = get("x-hub-signature-256");
  if (github) return { ok: sameSecret(github, `sha256=${hmacHex(secret, body)}`), scheme: "github" };
  const gitlab = get("x-gitlab-token");
  if (gitlab) return { ok: sameSecret(gitlab, secret), scheme: "gitlab" };
  const bearer = /^Bearer\s+(.+)$/i.exec(get("authorization").trim())?.[1];
  if (bearer) return { ok: sameSecret(bearer.trim(), secret), scheme: "bearer" };
  const v2 = get("x-webhook-signature-v2");
  if (v2) {
    // The V2 header commits to V2: a stripped timestamp must not fall back to replayable V1.
    const ts = get("x-webhook-timestamp");
    const ok =
      timestampFresh(ts, nowS) &&
      sameSecret(v2, hmacHex(secret, Buffer.concat([Buffer.from(`${ts.trim()}.`), body])));
    return { ok, scheme: "generic-v2" };
  }
  const v1 = get("x-webhook-signature");
  if (v1) return { ok: sameSecret(v1, hmacHex(secret, body)), scheme: "generic-v1" };
  return { ok: false, scheme: "none" };
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/**
 * The event type of a request: `X-GitHub-Event`, `X-Gitlab-Event`, then the payload's
 * `event_type`, `type` or `event`, else `unknown`. `aliases` holds other names the `events` filter
 * also accepts: GitLab's `object_kind` (`merge_request` for a "Merge Request Hook").
 */
export function detectEvent(get: HeaderGetter, payload: unknown): { event: string; aliases: string[] } {
  const body = payload !== null && typeof payload === "object" && !Array.isArray(payload) ? payload : {};
  const field = (key: string) => str((body as Record<string, unknown>)[key]);
  const event =
    get("x-github-event") ||
    get("x-gitlab-event") ||
    field("event_type") ||
    field("type") ||
    field("event") ||
    "unknown";
  const aliases = get("x-gitlab-event") && field("object_kind") ? [field("object_kind")] : [];
  return { event, aliases };
}

/** The sender's id for this delivery (retries repeat it), or undefined when it sent none. */
export function deliveryIdOf(get: HeaderGetter): string | undefined {
  for (const name of [
    "x-github-delivery",
    "svix-id",
    "webhook-id",
    "x-request-id",
    "idempotency-key",
    "x-gitlab-event-uuid",
  ]) {
    const value = get(name).trim();
    if (value) return value.slice(0, 200);
  }
  return undefined;
}

export type BodyResult = { ok: true; body: Buffer } | { ok: false; size: number };

/** Reads up to `limit` bytes; past it drains the rest (cut off far past it) and reports the size. */
export function readLimited(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        if (size > limit * 16 + 65_536) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () =>
      resolve(size > limit ? { ok: false, size } : { ok: true, body: Buffer.concat(chunks) }),
    );
    req.on("close", () => {
      if (!req.complete) resolve({ ok: false, size });
    });
    req.on("error", reject);
  });
}

/** The payload of a body: JSON (object or array), or a form (GitHub's `payload=<json>` form too). */
export function parsePayload(
  body: Buffer,
  contentType: string,
): { ok: true; payload: unknown } | { ok: false; error: string } {
  const text = body.toString("utf8").replace(/^\uFEFF/, "");
  if (!text.trim()) return { ok: false, error: "Empty body: send a JSON object" };
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object") return { ok: true, payload: value };
    return { ok: false, error: "Cannot parse body: expected a JSON object or array" };
  } catch {
    if (!/application\/x-www-form-urlencoded/i.test(contentType)) {
      return { ok: false, error: "Cannot parse body: it is not valid JSON" };
    }
  }
  const form = Object.fromEntries(new URLSearchParams(text));
  const inner = form["payload"];
  if (inner !== undefined && Object.keys(form).length === 1) {
    try {
      const value: unknown = JSON.parse(inner);
      if (value !== null && typeof value === "object") return { ok: true, payload: value };
    } catch {
      // A plain form field named payload: keep the form.
    }
  }
  return { ok: true, payload: form };
}
