/**
 * The knowledge stores a CLI command reads and writes through `knowledgeStores(home)` (memory
 * entries, skill usage, pins, curator states, the skill sink: hub installs and uninstalls,
 * snapshot imports, bundled resets, the curator's archive, restore, rollback and consolidation,
 * approved writes): a SQLite home's files as they are, or, when the home's config says
 * `state.backend: postgres`, the shared database's. There the backend is opened for the command
 * without joining the gateway instances (a CLI command is not one), so its mirror of the skills
 * is current first and every write reaches every instance; it is closed when the command ends.
 * Nothing of the backend is imported for a SQLite home. A config.yaml that does not load leaves
 * the command on the files, as `home-sessions.ts` does (reporting it is the config command's
 * job); a database that cannot be reached fails the command, since writing one instance's disk
 * alone would be lost at its next refresh.
 */
import type { HermesConfig } from "../../config/defaults.js";
import type { StateBackend } from "../../knowledge/state-backend.js";
import { stateBackendChoice } from "../../state/backend-config.js";
import { loadHomeConfig } from "../home-env.js";

/** Backends a command already holds open here, by home (a nested call reuses it). */
const open = new Map<string, { backend: StateBackend; users: number }>();

/**
 * Runs `body` with the home's stores registered (see the file comment); answers what it answers.
 * `body` gets the open backend on a postgres home (undefined on a file home). `loaded`: the config
 * and environment the command already has.
 */
export async function withHomeKnowledge<T>(
  home: string,
  env: Record<string, string | undefined>,
  body: (backend?: StateBackend) => T | Promise<T>,
  loaded?: { config: HermesConfig; env: Record<string, string | undefined> },
): Promise<T> {
  const held = open.get(home);
  if (held) return body(held.backend);
  let setup = loaded;
  if (!setup) {
    try {
      setup = loadHomeConfig(home, env);
    } catch {
      return body();
    }
  }
  if (stateBackendChoice(setup.config.state, setup.env).kind !== "postgres") return body();
  const { openStateBackend } = await import("../../knowledge/state-backend.js");
  const backend = await openStateBackend(home, setup.config, { env: setup.env, joinInstances: false });
  const entry = open.get(home) ?? { backend, users: 0 };
  entry.users += 1;
  open.set(home, entry);
  try {
    return await body(entry.backend);
  } finally {
    entry.users -= 1;
    if (entry.users === 0) open.delete(home);
    await backend.close();
  }
}
