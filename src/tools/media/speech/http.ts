/**
 * HTTP for the speech APIs: redirects are never followed (a key in a header must reach only the
 * host it was configured for, and fetch would carry custom headers such as `xi-api-key` to wherever
 * a redirect points), and bodies are read with a byte limit so a huge or endless answer cannot fill
 * memory.
 */
import { apiErrorMessage } from "../shared.js";

export interface SpeechHttpRequest {
  url: string;
  method?: "POST" | "GET";
  headers: Record<string, string>;
  body?: string | FormData;
  label: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

export interface SpeechHttpResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(unparsable URL)";
  }
}

/** Sends the request and reads the answer (any status) up to `maxBytes`; throws on transport failures. */
export async function speechRequest(req: SpeechHttpRequest): Promise<SpeechHttpResponse> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const seconds = Math.round(req.timeoutMs / 1000);
  let response: Response;
  try {
    response = await fetch(req.url, {
      method: req.method ?? "POST",
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    if (req.signal?.aborted) throw new Error(`${req.label} request was interrupted`);
    if (timeout.aborted) throw new Error(`${req.label} did not answer within ${seconds} s`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `cannot reach ${req.label} at ${origin(req.url)}: ${cause?.code ?? cause?.message ?? String(error)}`,
    );
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => {});
    const target = response.headers.get("location");
    throw new Error(
      `${req.label} answered with a redirect (HTTP ${response.status}${target ? ` to ${origin(new URL(target, req.url).href)}` : ""}); not followed, so the key stays with ${origin(req.url)}.`,
    );
  }
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > req.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`${req.label} announced ${declared} bytes, over the ${limitText(req.maxBytes)} limit.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > req.maxBytes) {
        await reader.cancel().catch(() => {});
        throw new Error(`${req.label} sent more than ${limitText(req.maxBytes)}.`);
      }
      chunks.push(Buffer.from(value));
    }
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(req.label)) throw error;
    if (req.signal?.aborted) throw new Error(`${req.label} request was interrupted`);
    if (timeout.aborted) throw new Error(`${req.label} did not finish answering within ${seconds} s`);
    throw new Error(`${req.label} broke off its answer: ${(error as Error).message}`);
  }
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: Buffer.concat(chunks),
  };
}

function limitText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MB` : `${Math.round(bytes / 1024)} KB`;
}

/** The audio bytes of a successful answer; throws naming the provider's own error message otherwise. */
export function audioFrom(res: SpeechHttpResponse, label: string): Buffer {
  if (res.status < 200 || res.status >= 300)
    throw new Error(
      `${label} refused the request (HTTP ${res.status}): ${apiErrorMessage(res.body.toString("utf8"))}`,
    );
  if (res.body.length === 0) throw new Error(`${label} sent no audio.`);
  if (res.contentType.includes("json") || res.contentType.startsWith("text/"))
    throw new Error(
      `${label} sent ${res.contentType} instead of audio: ${apiErrorMessage(res.body.toString("utf8"))}`,
    );
  return res.body;
}
