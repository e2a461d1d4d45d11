/**
 * Whether a runtime authenticates with Microsoft Entra ID, read from config.yaml
 * (`model.auth_mode: entra_id`, `model.entra.scope`). Pure and light: it sits on the start-up path,
 * the credential chain (azure-identity.ts) loads only when a transport or a check needs a token.
 */

/** Foundry's inference scope for every endpoint shape (upstream's default; `model.entra.scope` overrides). */
export const ENTRA_DEFAULT_SCOPE = "https://ai.azure.com/.default";

/** What a runtime needs to get Entra ID bearers. */
export interface EntraSettings {
  scope: string;
}

/** The model section's Entra settings when `auth_mode` is `entra_id` (any case), else undefined. */
export function entraSettings(
  model: Readonly<Record<string, unknown>> | undefined,
): EntraSettings | undefined {
  const mode = model?.["auth_mode"];
  if (typeof mode !== "string" || mode.trim().toLowerCase() !== "entra_id") return undefined;
  const entra = model?.["entra"];
  const scope =
    typeof entra === "object" && entra !== null ? (entra as Record<string, unknown>)["scope"] : undefined;
  return { scope: typeof scope === "string" && scope.trim() ? scope.trim() : ENTRA_DEFAULT_SCOPE };
}

/**
 * The credential sources this environment sets up, in the chain's order, without asking any of
 * them (status lines; the metadata service and the Azure CLI are always tried and not listed).
 */
export function entraSourcesSetUp(env: Readonly<Record<string, string | undefined>>): string[] {
  const set = (name: string): boolean => (env[name] ?? "").trim() !== "";
  const sp = set("AZURE_TENANT_ID") && set("AZURE_CLIENT_ID");
  const out: string[] = [];
  if (sp && set("AZURE_CLIENT_SECRET")) out.push("environment client secret");
  if (sp && set("AZURE_FEDERATED_TOKEN_FILE")) out.push("workload identity");
  if (set("IDENTITY_ENDPOINT") && set("IDENTITY_HEADER")) out.push("managed identity (IDENTITY_ENDPOINT)");
  return out;
}

/**
 * The key and header a request outside a transport (a `/models` listing) sends for a runtime: its
 * own, or with Entra ID the process's bearer for the scope (no header name: `Authorization`).
 * Without a token (the chain found none) nothing is sent, and the endpoint's 401 says so.
 */
export async function requestAuth(
  runtime: {
    apiKey?: string | undefined;
    apiKeyHeader?: string | undefined;
    entra?: EntraSettings | undefined;
  },
  env?: Readonly<Record<string, string | undefined>>,
): Promise<{ apiKey: string | undefined; apiKeyHeader: string | undefined }> {
  if (!runtime.entra) return { apiKey: runtime.apiKey, apiKeyHeader: runtime.apiKeyHeader };
  try {
    const { sharedAzureTokenProvider } = await import("./azure-token.js");
    const token = await sharedAzureTokenProvider(runtime.entra.scope, env).token();
    return { apiKey: token.token, apiKeyHeader: undefined };
  } catch {
    return { apiKey: undefined, apiKeyHeader: undefined };
  }
}
