/**
 * The one tiny request `hermes setup` sends to prove the chosen provider, key and model work
 * together: a short prompt, a handful of output tokens, no tools, no retries.
 */
import { createTransport, type ResolvedRuntime, type TransportOptions } from "../../ai/resolve.js";

export type ConnectionResult = { ok: true; reply: string; ms: number } | { ok: false; message: string };

/** Sends one request. Never throws; a failure carries the provider's own words. */
export async function testConnection(
  runtime: ResolvedRuntime,
  options: {
    timeoutMs?: number;
    now?: () => number;
    signal?: AbortSignal;
    /** Settings the run would read from config.yaml (Bedrock's region), the environment for Entra ID. */
    transport?: Pick<TransportOptions, "bedrock" | "env">;
  } = {},
): Promise<ConnectionResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const transport = await createTransport(runtime, {
      ...options.transport,
      timeoutMs: options.timeoutMs ?? 30_000,
    });
    let reply = "";
    for await (const event of transport.stream(
      {
        model: runtime.model,
        messages: [{ role: "user", content: "Reply with the single word: ok" }],
        maxTokens: 16,
      },
      signal,
    )) {
      if (event.type === "text_delta") reply += event.text;
    }
    return { ok: true, reply: reply.trim(), ms: Math.max(0, Math.round(now() - started)) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      message: options.signal?.aborted
        ? "cancelled"
        : timeout.aborted
          ? `no answer within ${Math.round((options.timeoutMs ?? 30_000) / 1000)}s`
          : message,
    };
  }
}
