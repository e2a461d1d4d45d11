/**
 * Doctor checks of a PostgreSQL state backend (`state.backend: postgres`): the database answers,
 * its schema is at this build's version (`--fix` applies the missing migrations), full-text search
 * is in place (the `pg_trgm` and `unaccent` extensions, the accent-folding `hermes_words`
 * configuration and the messages' `tsvector` column; what to install when the server lacks an
 * extension), and which instances share it. A
 * SQLite home gets no lines here (its state.db has its own checks), and loads nothing of `pg`.
 */
import type { HermesConfig } from "../../config/defaults.js";
import { StateBackendConfigError, stateBackendChoice } from "../../state/backend-config.js";
import type { DoctorLine } from "./types.js";

const GROUP = "Database";

/** The extensions search needs: substring and CJK matching, and accent folding. */
export const SEARCH_EXTENSIONS = ["pg_trgm", "unaccent"];

export interface ExtensionState {
  name: string;
  installed: boolean;
  available: boolean;
}

/** The doctor line for full-text search, from what the database reported. */
export function searchLine(
  extensions: readonly ExtensionState[],
  tsvector: boolean,
  config: boolean,
): DoctorLine {
  const missing = extensions.filter((e) => !e.installed);
  const absent = missing.filter((e) => !e.available).map((e) => e.name);
  const uncreated = missing.filter((e) => e.available).map((e) => e.name);
  if (missing.length === 0 && tsvector && config)
    return {
      group: GROUP,
      name: "full-text search",
      status: "ok",
      detail: `tsvector column, accent folding and ${extensions.map((e) => e.name).join(", ")} present`,
    };
  const gaps = [
    ...absent.map((name) => `${name} not installed on the server`),
    ...uncreated.map((name) => `${name} not created`),
    ...(tsvector ? [] : ["messages has no tsvector column"]),
    ...(config || absent.includes("unaccent") || uncreated.includes("unaccent")
      ? []
      : ["no accent-folding configuration (hermes_words)"]),
  ];
  const fix =
    absent.length > 0
      ? `Install PostgreSQL's contrib extensions (${absent.join(", ")}) on the database server: Debian and Ubuntu ship them in the postgresql package (postgresql-contrib on releases before PostgreSQL 10), RHEL and Fedora in postgresql-contrib, Homebrew and the official Docker image include them; then run hermes doctor --fix.`
      : uncreated.length > 0
        ? `Run hermes doctor --fix (${uncreated.map((n) => `CREATE EXTENSION ${n}`).join(", ")} needs the database's owner or a superuser; both are trusted extensions from PostgreSQL 13).`
        : "Run hermes doctor --fix (or start the gateway: it migrates at start).";
  return { group: GROUP, name: "full-text search", status: "fail", detail: gaps.join("; "), fix };
}

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

    const extensions = await db.query<ExtensionState>(
      `SELECT n.name,
              EXISTS (SELECT 1 FROM pg_extension e WHERE e.extname = n.name) AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions a WHERE a.name = n.name) AS available
       FROM unnest($1::text[]) AS n(name)`,
      [SEARCH_EXTENSIONS],
    );
    const [tsv] = await db.query<{ n: number; config: boolean }>(
      `SELECT count(*)::int AS n,
              EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'hermes_words') AS config
       FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'messages' AND data_type = 'tsvector'`,
    );
    const search = searchLine(extensions, (tsv?.n ?? 0) > 0, tsv?.config === true);
    // Search objects lost after the migrations ran (an extension dropped with CASCADE): --fix puts
    // them back when the server has the extensions; after the schema's own repair, which runs first.
    const installable = extensions.every((e) => e.installed || e.available);
    if (search.status === "fail" && installable && applied.includes(210))
      search.repair = async () => {
        const { SEARCH_REPAIR_SQL } = await import("../../state/postgres/migrations/search.js");
        const target = await openPgDatabase(url, { max: 1 });
        try {
          await target.query(SEARCH_REPAIR_SQL);
          return "re-created what full-text search needs";
        } finally {
          await target.close();
        }
      };
    lines.push(search);

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
