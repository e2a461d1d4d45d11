/**
 * Which state backend a home uses: `state.backend` (`sqlite`, the default, or `postgres`) and the
 * database URL from `HERMES_DATABASE_URL` or `state.url`. Setting `HERMES_DATABASE_URL` alone does
 * not switch a home to PostgreSQL; `state.backend: postgres` does. A postgres backend without a
 * URL, or with one that is not a postgres URL, is a configuration error with the fix in it.
 */
import { maskDatabaseUrl } from "./postgres/database.js";

export type StateBackendChoice =
  | { kind: "sqlite" }
  | { kind: "postgres"; url: string; poolSize: number; label: string };

export class StateBackendConfigError extends Error {
  override name = "StateBackendConfigError";
}

export function stateBackendChoice(
  state: { backend?: unknown; url?: unknown; pool_size?: unknown } | undefined,
  env: Record<string, string | undefined> = process.env,
): StateBackendChoice {
  const backend = state?.backend ?? "sqlite";
  if (backend === "sqlite") return { kind: "sqlite" };
  if (backend !== "postgres") {
    throw new StateBackendConfigError(`state.backend is ${JSON.stringify(backend)}: use sqlite or postgres`);
  }
  const url = (env["HERMES_DATABASE_URL"] || (typeof state?.url === "string" ? state.url : "")).trim();
  if (!url) {
    throw new StateBackendConfigError(
      "state.backend is postgres but no database is named: set HERMES_DATABASE_URL in ~/.hermes/.env or state.url in config.yaml (postgres://user:password@host:5432/db)",
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new StateBackendConfigError(`the database URL ${maskDatabaseUrl(url)} is not a postgres:// URL`);
  }
  const size = Number(state?.pool_size ?? 10);
  const poolSize = Number.isInteger(size) && size >= 1 && size <= 200 ? size : 10;
  return { kind: "postgres", url, poolSize, label: maskDatabaseUrl(url) };
}
