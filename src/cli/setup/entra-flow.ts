/**
 * Azure AI Foundry's choice between an API key and Microsoft Entra ID in `hermes setup` and
 * `hermes model`: the question, the scope, and the check that a token can be got now (so a
 * wizard never saves an Entra setup that cannot sign in without saying so).
 */

import { ENTRA_DEFAULT_SCOPE, entraSettings } from "../../ai/oauth/entra-config.js";
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { Prompter } from "./prompter.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A token check's outcome: where the token came from and how long it lasts, or why there is none. */
export type EntraCheck =
  | { ok: true; source: string; minutesLeft: number }
  | { ok: false; message: string; transient: boolean };

/**
 * Asks the credential chain for a token for `scope` now, walking it afresh (nothing kept from an
 * earlier try). Never throws. The token itself is never returned or printed.
 */
export async function checkEntraToken(scope: string, env: Env): Promise<EntraCheck> {
  const [{ AzureTokenProvider }, { defaultAzureDeps, EntraError }] = await Promise.all([
    import("../../ai/oauth/azure-token.js"),
    import("../../ai/oauth/azure-identity.js"),
  ]);
  try {
    const token = await new AzureTokenProvider(scope, defaultAzureDeps(env)).token();
    return {
      ok: true,
      source: token.source,
      minutesLeft: Math.max(0, Math.round((token.expiresAt - Date.now() / 1000) / 60)),
    };
  } catch (error) {
    if (error instanceof EntraError) {
      const message = error.hint ? `${error.message}\nTo fix: ${error.hint}.` : error.message;
      return { ok: false, message, transient: error.transient };
    }
    return { ok: false, message: error instanceof Error ? error.message : String(error), transient: false };
  }
}

/**
 * A runtime as it sends requests outside a transport (`/models` listings): with Entra ID, the
 * process's bearer as its key (sent as `Authorization: Bearer`). Rejects with the chain's error.
 */
export async function withEntraBearer(runtime: ResolvedRuntime, env: Env): Promise<ResolvedRuntime> {
  if (!runtime.entra) return runtime;
  const { sharedAzureTokenProvider } = await import("../../ai/oauth/azure-token.js");
  const token = await sharedAzureTokenProvider(runtime.entra.scope, env).token();
  return { ...runtime, entra: undefined, apiKeyHeader: undefined, apiKey: token.token };
}

/**
 * Asks how Azure AI Foundry signs in. Returns the Entra scope, or undefined for an API key. With
 * Entra ID, a token is asked for at once: on failure the user may try again (after `az login` in
 * another terminal), take an API key instead, or keep Entra ID anyway. Throws PromptCancelled.
 */
export async function askEntraChoice(
  p: Pick<Prompter, "ask" | "say">,
  config: HermesConfig,
  env: Env,
): Promise<{ scope: string } | undefined> {
  const current = entraSettings(config.model as unknown as Record<string, unknown>);
  p.say("Azure AI Foundry signs in with an API key or with Microsoft Entra ID");
  p.say("  (az login, a service principal's AZURE_CLIENT_SECRET, workload identity or a managed identity).");
  let mode: "key" | "entra" | undefined;
  while (!mode) {
    const answer = (await p.ask("Authentication: 1. API key  2. Entra ID", current ? "2" : "1"))
      .trim()
      .toLowerCase();
    mode = ["1", "key", "api key", "api_key"].includes(answer)
      ? "key"
      : ["2", "entra", "entra id", "entra_id"].includes(answer)
        ? "entra"
        : undefined;
    if (!mode) p.say(`"${answer}" is neither; type 1 for an API key or 2 for Entra ID.`);
  }
  if (mode === "key") return undefined;
  let scope = "";
  while (!scope) {
    scope = (await p.ask("Entra ID scope (model.entra.scope)", current?.scope ?? ENTRA_DEFAULT_SCOPE)).trim();
    if (/\s/.test(scope)) {
      p.say("A scope has no spaces, e.g. https://ai.azure.com/.default");
      scope = "";
    }
  }
  for (;;) {
    p.say("Asking for an Entra ID token…");
    const check = await checkEntraToken(scope, env);
    if (check.ok) {
      p.say(`✓ Entra ID token from ${check.source} (valid for ${check.minutesLeft} more minutes).`);
      return { scope };
    }
    p.say(`✗ ${check.message}`);
    const next = (await p.ask("Try again (t), use an API key instead (k), or keep Entra ID anyway (e)?", "t"))
      .trim()
      .toLowerCase();
    if (next === "k") return undefined;
    if (next === "e") return { scope };
  }
}
