/**
 * The knowledge stores a CLI command reads through `knowledgeStores(home)` (memory entries, skill
 * usage, pins, curator states): a SQLite home's files as they are, or, when the home's config says
 * `state.backend: postgres`, the shared database's. There the backend is opened for the command
 * without joining the gateway instances (a CLI command is not one), and closed when it ends. A
 * config.yaml that does not load leaves the command on the files, as `home-sessions.ts` does.
 */
import type { StateBackend } from "../../knowledge/state-backend.js";
import { stateBackendChoice } from "../../state/backend-config.js";
import { loadHomeConfig } from "../home-env.js";

/**
 * Runs `body` with the home's stores registered (see the file comment); answers what it answers.
 * `body` gets the open backend on a postgres home (undefined on a file home).
 */
export async function withHomeKnowledge<T>(
  home: string,
  env: Record<string, string | undefined>,
  body: (backend?: StateBackend) => Promise<T>,
): Promise<T> {
  let loaded: ReturnType<typeof loadHomeConfig>;
  try {
    loaded = loadHomeConfig(home, env);
  } catch {
    return body();
  }
  if (stateBackendChoice(loaded.config.state, loaded.env).kind !== "postgres") return body();
  const { openStateBackend } = await import("../../knowledge/state-backend.js");
  const backend = await openStateBackend(home, loaded.config, { env: loaded.env, joinInstances: false });
  try {
    return await body(backend);
  } finally {
    await backend.close();
  }
}
