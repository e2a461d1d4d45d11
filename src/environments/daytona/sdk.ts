/**
 * The official `@daytonaio/sdk`, required on first use (it is external to the CLI bundle: only
 * `terminal.backend: daytona` pays for it), and the client settings read from Hermes's
 * environment. `require`, not `import()`: the bundle runs in a vm.Script without a module loader.
 */
import { createRequire } from "node:module";
import { EnvironmentError } from "../types.js";

export type DaytonaSdk = typeof import("@daytonaio/sdk");

let sdkPromise: Promise<DaytonaSdk> | undefined;

export function loadDaytonaSdk(): Promise<DaytonaSdk> {
  sdkPromise ??= new Promise<DaytonaSdk>((resolve) => {
    const require = createRequire(import.meta.url);
    resolve(require("@daytonaio/sdk") as DaytonaSdk);
  }).catch((error: unknown) => {
    sdkPromise = undefined;
    throw new EnvironmentError(
      `The Daytona SDK (@daytonaio/sdk) could not be loaded: ${(error as Error).message}`,
      "Reinstall Hermes-TS so its dependencies are complete (npm install in its directory).",
      "runtime",
    );
  });
  return sdkPromise;
}

export const DEFAULT_DAYTONA_API_URL = "https://app.daytona.io/api";

/** What the Daytona client is built from (upstream's variables; secrets stay in this object). */
export interface DaytonaClientSettings {
  apiKey?: string;
  jwtToken?: string;
  organizationId?: string;
  apiUrl: string;
  target?: string;
}

/** Reads DAYTONA_API_KEY (or DAYTONA_JWT_TOKEN + DAYTONA_ORGANIZATION_ID), _API_URL, _TARGET. */
export function daytonaClientSettings(
  env: Readonly<Record<string, string | undefined>>,
): DaytonaClientSettings {
  const pick = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const settings: DaytonaClientSettings = {
    apiUrl: pick("DAYTONA_API_URL") ?? pick("DAYTONA_SERVER_URL") ?? DEFAULT_DAYTONA_API_URL,
  };
  const apiKey = pick("DAYTONA_API_KEY");
  const jwtToken = pick("DAYTONA_JWT_TOKEN");
  const organizationId = pick("DAYTONA_ORGANIZATION_ID");
  const target = pick("DAYTONA_TARGET");
  if (apiKey) settings.apiKey = apiKey;
  if (jwtToken) settings.jwtToken = jwtToken;
  if (organizationId) settings.organizationId = organizationId;
  if (target) settings.target = target;
  return settings;
}

/** Throws the config error a user can act on when no credential is set. */
export function requireCredentials(settings: DaytonaClientSettings): void {
  if (settings.apiKey) return;
  if (settings.jwtToken && settings.organizationId) return;
  throw new EnvironmentError(
    "terminal.backend is daytona but DAYTONA_API_KEY is not set",
    "Put DAYTONA_API_KEY=<key from app.daytona.io> in ~/.hermes/.env (or the environment), or choose another terminal.backend.",
    "config",
  );
}

/** Turns an SDK or network failure at start-up into an EnvironmentError with the fix. */
export function daytonaStartError(error: unknown, settings: DaytonaClientSettings): EnvironmentError {
  if (error instanceof EnvironmentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const status = (error as { statusCode?: unknown }).statusCode;
  const name = (error as { name?: unknown }).name;
  if (status === 401 || status === 403 || name === "DaytonaAuthenticationError") {
    return new EnvironmentError(
      `Daytona rejected the credentials (${message})`,
      "Check DAYTONA_API_KEY in ~/.hermes/.env: create a new key at app.daytona.io if it was revoked.",
      "config",
    );
  }
  if (
    status === undefined &&
    (name === "DaytonaConnectionError" ||
      name === "DaytonaConnectionTimeoutError" ||
      /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|socket hang up|network/i.test(message))
  ) {
    return new EnvironmentError(
      `Could not reach the Daytona API at ${settings.apiUrl}: ${message}`,
      "Check the network and DAYTONA_API_URL (unset it for app.daytona.io), then try again.",
      "unreachable",
    );
  }
  return new EnvironmentError(
    `The Daytona sandbox could not be started: ${message}`,
    "Check terminal.daytona_image and the container_* limits against your Daytona plan, then try again.",
    "unreachable",
  );
}
