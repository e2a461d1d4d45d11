/**
 * The latest published version of a package, from the npm registry the user's npm would use
 * (`npm_config_registry`, which npm sets from .npmrc for scripts and users set for mirrors;
 * default registry.npmjs.org). One GET of the abbreviated package document.
 */

export const DEFAULT_REGISTRY = "https://registry.npmjs.org/";

/** A check that could not be made: the registry was unreachable, refused, or answered nonsense. */
export class UpdateCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpdateCheckError";
  }
}

/** The registry URL from the environment, with one trailing slash. */
export function registryUrl(env: Record<string, string | undefined>): string {
  const configured = (env["npm_config_registry"] ?? env["NPM_CONFIG_REGISTRY"] ?? "").trim();
  const url = configured || DEFAULT_REGISTRY;
  return url.endsWith("/") ? url : `${url}/`;
}

/** `dist-tags.latest` of `name` on `registry`. Throws UpdateCheckError with the reason. */
export async function latestVersion(
  name: string,
  registry: string,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<string> {
  // A scoped name keeps its @ and escapes its slash, as the registry expects.
  const url = `${registry}${name.replace("/", "%2f")}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      headers: { accept: "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8" },
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
  } catch (error) {
    const reason =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    throw new UpdateCheckError(`could not reach the registry ${registry}: ${reason}`);
  }
  if (response.status === 404) throw new UpdateCheckError(`${name} is not published on ${registry}`);
  if (!response.ok)
    throw new UpdateCheckError(`the registry ${registry} answered HTTP ${response.status} for ${name}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new UpdateCheckError(`the registry ${registry} sent something other than JSON for ${name}`);
  }
  const latest = (body as { "dist-tags"?: { latest?: unknown } } | null)?.["dist-tags"]?.latest;
  if (typeof latest !== "string" || !/^\d+\.\d+\.\d+/.test(latest)) {
    throw new UpdateCheckError(`the registry ${registry} lists no latest version of ${name}`);
  }
  return latest;
}
