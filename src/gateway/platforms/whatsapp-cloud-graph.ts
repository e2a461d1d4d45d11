/**
 * The Graph API calls of the WhatsApp Cloud adapter: `POST /<version>/<phone-number-id>/messages`
 * (sends, typing and read receipts), `POST …/media` (uploads), `GET /<version>/<media-id>` then the
 * signed URL it names (downloads), all with the access token as a bearer.
 *
 * Graph takes no idempotency key, so a send is retried only when it certainly did not arrive: the
 * connection was refused or the name did not resolve, or Graph answered 429/5xx or marked the
 * error transient. A connection that drops after the request went out is reported, not repeated,
 * so the user never gets an answer twice.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { errorText } from "./media-files.js";
import { PlatformError } from "./types.js";
import { type GraphError, parseGraphError } from "./whatsapp-cloud-wire.js";

export const GRAPH_DEFAULT_URL = "https://graph.facebook.com";

/** A Graph call that failed with Graph's own error. */
export class GraphCallError extends PlatformError {
  constructor(
    message: string,
    readonly graph: GraphError,
  ) {
    super(message, graph.status === 429 ? 5000 : undefined);
    this.name = "GraphCallError";
  }
}

const NEVER_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Whether a fetch failure happened before the request could reach the server. */
function neverSent(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NEVER_SENT.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export interface GraphClientOptions {
  baseUrl: string;
  apiVersion: string;
  phoneNumberId: string;
  accessToken: string;
  /** Told before each retry (one line), so a long outage shows in the gateway's log. */
  onRetry?: (line: string) => void;
  /** Waits between attempts (tests pass a short one); default 0.5 s doubling. */
  backoffMs?: (attempt: number) => number;
  attempts?: number;
}

export interface GraphClient {
  /** POSTs a `/messages` payload; the new message's id (`wamid.…`). `once`: no retries (typing). */
  sendMessage(payload: Record<string, unknown>, what: string, once?: boolean): Promise<string>;
  /** Uploads a file; its media id. */
  upload(path: string, mimeType: string): Promise<string>;
  /** Resolves and downloads a media id, refusing more than `limit` bytes. */
  download(mediaId: string, limit: number): Promise<{ bytes: Buffer; mimeType: string | undefined }>;
}

export function createGraphClient(o: GraphClientOptions): GraphClient {
  const root = `${o.baseUrl.replace(/\/+$/, "")}/${o.apiVersion}`;
  const auth = { authorization: `Bearer ${o.accessToken}` };
  const attempts = o.attempts ?? 5;
  const backoff = o.backoffMs ?? ((n: number) => 500 * 2 ** (n - 1));

  async function call(
    what: string,
    url: string,
    init: () => RequestInit,
    tries = attempts,
  ): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      let failure: PlatformError;
      try {
        const res = await fetch(url, { ...init(), signal: AbortSignal.timeout(60_000) });
        const body = (await res.json().catch(() => undefined)) as unknown;
        if (res.ok) return body;
        const graph = parseGraphError(res.status, body);
        const detail = `${graph.code !== undefined ? `error ${graph.code}, ` : ""}HTTP ${graph.status}: ${graph.message}`;
        if (graph.status === 401 || graph.code === 190)
          throw new GraphCallError(
            `the Graph API refused the access token (${detail}): renew WHATSAPP_CLOUD_ACCESS_TOKEN (a system user's permanent token does not expire)`,
            graph,
          );
        failure = new GraphCallError(`Graph refused ${what} (${detail})`, graph);
        if (!graph.transient) throw failure;
      } catch (err) {
        if (err instanceof PlatformError) throw err;
        if (!neverSent(err))
          throw new PlatformError(
            `WhatsApp ${what} failed: the connection to ${o.baseUrl} broke (${errorText(err)}); it may or may not have been delivered, so it was not sent again`,
          );
        failure = new PlatformError(
          `WhatsApp ${what} failed: could not reach ${o.baseUrl} (${errorText(err)})`,
        );
      }
      if (attempt >= tries) throw failure;
      const wait = backoff(attempt);
      o.onRetry?.(`${failure.message}; trying again in ${(wait / 1000).toFixed(1)} s`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  return {
    async sendMessage(payload, what, once = false) {
      const body = (await call(
        what,
        `${root}/${o.phoneNumberId}/messages`,
        () => ({
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify(payload),
        }),
        once ? 1 : attempts,
      )) as { messages?: Array<{ id?: unknown }> } | undefined;
      const id = body?.messages?.[0]?.id;
      return typeof id === "string" ? id : "";
    },

    async upload(path, mimeType) {
      const bytes = await readFile(path);
      const body = (await call(`the upload of ${basename(path)}`, `${root}/${o.phoneNumberId}/media`, () => {
        const form = new FormData();
        form.set("messaging_product", "whatsapp");
        form.set("type", mimeType);
        form.set("file", new Blob([bytes], { type: mimeType }), basename(path));
        return { method: "POST", headers: auth, body: form };
      })) as { id?: unknown } | undefined;
      if (typeof body?.id !== "string" || !body.id)
        throw new PlatformError(`Graph accepted the upload of ${basename(path)} but returned no media id`);
      return body.id;
    },

    async download(mediaId, limit) {
      const meta = (await call(
        `the lookup of media ${mediaId}`,
        `${root}/${encodeURIComponent(mediaId)}`,
        () => ({
          headers: auth,
        }),
      )) as { url?: unknown; mime_type?: unknown; file_size?: unknown } | undefined;
      const url = typeof meta?.url === "string" ? meta.url : "";
      if (!/^https?:\/\//.test(url)) throw new Error("Graph returned no download URL for it");
      const declared = Number(meta?.file_size);
      if (Number.isFinite(declared) && declared > limit)
        throw new Error(`it is ${declared} bytes, over the ${limit}-byte limit`);
      // The URL is signed, yet Meta still wants the bearer on it.
      const res = await fetch(url, { headers: auth, signal: AbortSignal.timeout(120_000) });
      if (!res.ok) throw new Error(`the media server answered ${res.status}`);
      const length = Number(res.headers.get("content-length"));
      if (Number.isFinite(length) && length > limit)
        throw new Error(`it is ${length} bytes, over the ${limit}-byte limit`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (bytes.length > limit) throw new Error(`it is ${bytes.length} bytes, over the ${limit}-byte limit`);
      const mimeType =
        (typeof meta?.mime_type === "string" ? meta.mime_type : (res.headers.get("content-type") ?? ""))
          .split(";")[0]
          ?.trim() || undefined;
      return { bytes, mimeType };
    },
  };
}
