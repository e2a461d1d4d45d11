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
