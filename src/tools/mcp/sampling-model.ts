/**
 * The default {@link McpSampler}: the session's provider and model as config.yaml (and `.env`)
 * resolve them, the same redacted transport every model call uses, with `sampling.model` (or an
 * allowed hint) swapped in for the model name. The runtime is resolved at the first request, so a
 * provider problem fails that request with its message and never the server's start.
 */
import { createTransport, type Env, type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import { messageText, type Transport } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { McpSampler } from "./sampling.js";

export interface ModelSamplerInput {
  config: HermesConfig;
  env: Env;
  /** The active home (its OAuth logins may supply the key). */
  home: string | undefined;
  /** The runtime the session already resolved (`-m`, `--provider` included); else from config. */
  runtime?: ResolvedRuntime;
}

export function modelSampler(input: ModelSamplerInput): McpSampler {
  let base: ResolvedRuntime | undefined = input.runtime;
  const transports = new Map<string, Promise<Transport>>();
  return async (request) => {
    base ??= resolveRuntime({ flags: {}, config: input.config, env: input.env, home: input.home });
    const runtime = request.model ? { ...base, model: request.model } : base;
    let transport = transports.get(runtime.model);
    if (!transport) {
      transport = createTransport(runtime, { timeoutMs: 600_000 });
      transports.set(runtime.model, transport);
    }
    let text = "";
    let final: string | undefined;
    let truncated = false;
    const stream = (await transport).stream(
      {
        model: runtime.model,
        messages: request.messages,
        maxTokens: request.maxTokens,
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      },
      request.signal,
    );
    for await (const event of stream) {
      if (event.type === "text_delta") text += event.text;
      else if (event.type === "finish") {
        final = messageText(event.message);
        truncated = event.reason === "length";
      }
    }
    const answer = (final || text).trim();
    if (!answer) throw new Error(`the model (${runtime.model}) returned an empty answer`);
    return { text: answer, model: runtime.model, truncated };
  };
}
