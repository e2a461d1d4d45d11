/**
 * A local server with no model configured: use the model the server lists, or ask which one when
 * it lists several. Without this the first request names the placeholder `default`, which most
 * servers (Ollama, vLLM, llama.cpp with several models) refuse.
 */
import { listModels, type ModelListing } from "../../ai/model-listing.js";
import { isLocalBaseUrl } from "../../ai/pricing.js";
import type { ResolvedRuntime } from "../../ai/resolve.js";
import { CliFailure } from "../command.js";
import type { Prompter } from "./prompter.js";

export type ServerModelDecision =
  | { kind: "use"; id: string }
  | { kind: "choose"; ids: string[] }
  | { kind: "none" }
  /** The listing failed: keep the runtime; the model call reports the endpoint's own error. */
  | { kind: "keep" };

/** Whether the runtime is a local server whose model nobody named. */
export function needsServerModel(runtime: ResolvedRuntime): boolean {
  if (runtime.modelIsDefault !== true) return false;
  const provider = runtime.provider.toLowerCase();
  return (
    provider === "custom" ||
    provider.startsWith("custom:") ||
    provider === "lmstudio" ||
    isLocalBaseUrl(runtime.baseUrl)
  );
}

/** Pure: what the listing means for the model choice. */
export function serverModelDecision(listing: ModelListing): ServerModelDecision {
  if (!listing.ok) return { kind: "keep" };
  const ids = [...new Set(listing.models.map((m) => m.id))];
  if (ids.length === 0) return { kind: "none" };
  if (ids.length === 1 && ids[0]) return { kind: "use", id: ids[0] };
  return { kind: "choose", ids };
}

/**
 * The runtime with the server's model when nothing named one. `prompter` is given only on a
 * terminal; without it several models are a configuration error naming them. Throws CliFailure (2).
 */
export async function withServerModel(
  runtime: ResolvedRuntime,
  options: { prompter?: () => Prompter; fetch?: typeof fetch; timeoutMs?: number },
): Promise<ResolvedRuntime> {
  if (!needsServerModel(runtime)) return runtime;
  const listing = await listModels({
    baseUrl: runtime.baseUrl,
    apiKey: runtime.apiKey,
    apiKeyHeader: runtime.apiKeyHeader,
    apiMode: runtime.apiMode,
    timeoutMs: options.timeoutMs ?? 5000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const decision = serverModelDecision(listing);
  const use = (id: string): ResolvedRuntime => {
    const { modelIsDefault: _default, ...rest } = runtime;
    return { ...rest, model: id };
  };
  switch (decision.kind) {
    case "keep":
      return runtime;
    case "use":
      return use(decision.id);
    case "none":
      throw new CliFailure(
        `the server at ${runtime.baseUrl} lists no models and none is configured.\n` +
          "Load a model in the server, or name one: hermes model custom:MODEL (or -m MODEL).",
        2,
      );
    case "choose": {
      if (!options.prompter) {
        throw new CliFailure(
          `the server at ${runtime.baseUrl} serves ${decision.ids.length} models and none is configured: ${decision.ids.slice(0, 10).join(", ")}${decision.ids.length > 10 ? ", …" : ""}.\n` +
            `Pick one: hermes model custom:${decision.ids[0]} (or -m ${decision.ids[0]} for one run).`,
          2,
        );
      }
      const prompter = options.prompter();
      try {
        prompter.say(`The server at ${runtime.baseUrl} serves several models; none is configured:`);
        for (const [i, id] of decision.ids.entries()) prompter.say(`  ${i + 1}. ${id}`);
        for (;;) {
          const answer = await prompter.ask("Model for this session (number or id)", "1");
          const index = /^\d+$/.test(answer) ? Number(answer) - 1 : decision.ids.indexOf(answer);
          const id = decision.ids[index];
          if (id) {
            prompter.say(`Using ${id}. To keep it: hermes model custom:${id}`);
            return use(id);
          }
          prompter.say(`"${answer}" is not in the list.`);
        }
      } finally {
        prompter.close();
      }
    }
  }
}
