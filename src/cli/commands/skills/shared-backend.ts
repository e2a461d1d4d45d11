/**
 * Commands that change a home's skills (`hermes skills …`, `hermes curator …`) on a home whose
 * state lives in PostgreSQL: the backend is opened around the command, without joining the gateway
 * instances, so its mirror of the skills is current first and every write (hub installs and
 * uninstalls, snapshot imports, bundled resets, the curator's archive, restore, rollback and
 * consolidation, approved writes) reaches the database and so every instance. A SQLite home is
 * left exactly as before; nothing of the backend is imported for it.
 */
import type { HermesConfig } from "../../../config/defaults.js";
import { loadHomeConfig } from "../../home-env.js";

/**
 * Runs `body` with the home's PostgreSQL backend open (see the file comment), or as is when the
 * home is not on PostgreSQL. `loaded`: the config and environment the command already has. A
 * database that cannot be reached fails the command: writing one instance's disk alone would be
 * lost at its next refresh.
 */
export async function withSharedSkills<T>(
  home: string,
  env: Record<string, string | undefined>,
  body: () => T | Promise<T>,
  loaded?: { config: HermesConfig; env: Record<string, string | undefined> },
): Promise<T> {
  let setup = loaded;
  if (!setup) {
    try {
      setup = loadHomeConfig(home, env);
    } catch {
      // A config.yaml that does not load is the config command's to report; skills stay on disk.
      return body();
    }
  }
  if (setup.config.state?.backend !== "postgres") return body();
  const { openStateBackend } = await import("../../../knowledge/state-backend.js");
  const backend = await openStateBackend(home, setup.config, { env: setup.env, joinInstances: false });
  try {
    return await body();
  } finally {
    await backend.close();
  }
}
