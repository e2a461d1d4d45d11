/**
 * Doctor checks of a PostgreSQL state backend (`state.backend: postgres`): the database answers,
 * its schema is at this build's version (`--fix` applies the missing migrations), full-text search
 * is in place (`pg_trgm` and the messages' `tsvector` column), and which instances share it. A
 * SQLite home gets no lines here (its state.db has its own checks), and loads nothing of `pg`.
 */
import type { HermesConfig } from "../../config/defaults.js";
import { StateBackendConfigError, stateBackendChoice } from "../../state/backend-config.js";
import type { DoctorLine } from "./types.js";

const GROUP = "Database";

export async function databaseChecks(
  config: Pick<HermesConfig, "state">,
  env: Record<string, string | undefined>,
  options: { connectTimeoutMs?: number } = {},
): Promise<DoctorLine[]> {
  let choice: ReturnType<typeof stateBackendChoice>;
  try {
    choice = stateBackendChoice(config.state, env);
  } catch (error) {
    if (!(error instanceof StateBackendConfigError)) throw error;
    return [
      {
        group: GROUP,
        name: "state backend",
        status: "fail",
        detail: error.message,
        fix: "Fix state.* in config.yaml.",
      },
    ];
  }
  if (choice.kind !== "postgres") return [];
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { appliedVersions, migrate } = await import("../../state/postgres/migrate.js");
  const { MIGRATIONS } = await import("../../state/postgres/migrations/index.js");
  const { listPgInstances } = await import("../../state/postgres/coordination-instances.js");
  const label = choice.label;
  const url = choice.url;
  const clean = (error: unknown) =>
    (error instanceof Error ? error.message : String(error)).split(url).join(label) || "no answer";
  const db = await openPgDatabase(url, {
    max: 1,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    applicationName: "hermes doctor",
  });
  const lines: DoctorLine[] = [];
  try {
    let version: string;
    try {
      const rows = await db.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      version = rows[0]?.v ?? "?";
    } catch (error) {
      return [
        {
          group: GROUP,
          name: "PostgreSQL",
          status: "fail",
          detail: `${label} does not answer: ${clean(error)}`,
          fix: "Check that the server runs and the URL, user and password in HERMES_DATABASE_URL (or state.url) are right.",
        },
      ];
    }
    lines.push({
      group: GROUP,
      name: "PostgreSQL",
      status: "ok",
      detail: `${label} answers (server ${version})`,
    });

    const known = MIGRATIONS.map((m) => m.version);
    const applied = await appliedVersions(db);
    const missing = known.filter((v) => !applied.includes(v));
    const newer = applied.filter((v) => !known.includes(v));
    const latest = known.at(-1) ?? 0;
    if (newer.length > 0) {
      lines.push({
        group: GROUP,
        name: "schema",
        status: "fail",
        detail: `migrated by a newer Hermes (versions ${newer.join(", ")} are unknown to this build)`,
        fix: "Upgrade this Hermes to the version the other instances run.",
      });
    } else if (missing.length > 0) {
      lines.push({
        group: GROUP,
        name: "schema",
        status: applied.length === 0 ? "warn" : "fail",
        detail:
          applied.length === 0
            ? "empty: no Hermes schema yet"
            : `at ${applied.at(-1)}, this build needs ${latest} (missing ${missing.join(", ")})`,
        fix: "Run hermes doctor --fix (or start the gateway: it migrates at start).",
        repair: async () => {
          const target = await openPgDatabase(url, { max: 1 });
          try {
            const report = await migrate(target, MIGRATIONS);
            return `applied ${report.applied.length} migration(s); schema at ${report.current}`;
          } finally {
            await target.close();
          }
        },
      });
    } else {
      lines.push({ group: GROUP, name: "schema", status: "ok", detail: `migrated to ${latest}` });
    }

    const [ext] = await db.query<{ installed: boolean; available: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available`,
    );
    const [tsv] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'messages' AND data_type = 'tsvector'`,
    );
    if (ext?.installed && (tsv?.n ?? 0) > 0) {
      lines.push({
        group: GROUP,
        name: "full-text search",
        status: "ok",
        detail: "tsvector column and pg_trgm present",
      });
    } else {
      const gaps = [
        ...(ext?.installed
          ? []
          : [ext?.available ? "pg_trgm not created" : "pg_trgm not installed on the server"]),
        ...((tsv?.n ?? 0) > 0 ? [] : ["messages has no tsvector column"]),
      ];
      lines.push({
        group: GROUP,
        name: "full-text search",
        status: "fail",
        detail: gaps.join("; "),
        fix: ext?.available
          ? "Migrate the schema (hermes doctor --fix); creating pg_trgm needs a role allowed to CREATE EXTENSION."
          : "Install PostgreSQL's contrib extensions on the server (Debian: the postgresql package ships them), then hermes doctor --fix.",
      });
    }

    const instances = await listPgInstances(db).catch(() => []);
    lines.push({
      group: GROUP,
      name: "instances",
      status: "ok",
      detail:
        instances.length === 0
          ? "no live instance"
          : `${instances.length} live: ${instances.map((i) => `${i.id}${i.draining ? " (draining)" : ""}`).join(", ")}`,
    });
    return lines;
  } finally {
    await db.close().catch(() => {});
  }
}
