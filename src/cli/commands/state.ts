/**
 * `hermes state migrate --to postgres [URL]` and `hermes state export DIR`: moving a home's state
 * between the file backend (state.db and the home's files) and PostgreSQL. Both are idempotent and
 * resumable (what the target already has is skipped by key), print what each part copied, and end
 * with a verification; a part that does not verify makes the command fail (exit 1) with what is
 * missing. The database URL's password never appears in output.
 *
 * The parts and how each is copied live in `knowledge/state-transfer.ts` (state.db, the gateway
 * stores, memories, skills and their usage, cron jobs and outputs); this file parses, opens and
 * prints one row per counted item.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { HomeTransferReport } from "../../knowledge/state-transfer.js";
import { StateBackendConfigError, stateBackendChoice } from "../../state/backend-config.js";
import type { PgDatabase } from "../../state/postgres/database.js";
import { sessionStorePath } from "../../state/sqlite-store.js";
import { CliFailure, type ConfigContext, defineCommand, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";

/** Runs `hermes state <argv…>` (tests); returns the exit code. */
export function runStateCommand(argv: readonly string[], options: RunOptions = {}): Promise<number> {
  return stateCommand.run(argv, options);
}

export const stateCommand = defineCommand({
  name: "state",
  description: "move the home's state between state.db/files and PostgreSQL",
  needs: "config",
  parse: (root, run) => {
    root
      .command("migrate")
      .description(
        "copy this home's state (sessions, gateway stores, memories, skills, cron) into PostgreSQL and verify it",
      )
      .requiredOption("--to <backend>", "the backend to copy into: postgres")
      .argument("[url]", "postgres://user:password@host:5432/db (default: HERMES_DATABASE_URL or state.url)")
      .option("--batch <rows>", "rows per transaction", "500")
      .action(
        run((ctx, url: string | undefined, flags: { to: string; batch: string }) => migrate(ctx, url, flags)),
      );

    root
      .command("export")
      .description("write the PostgreSQL state back out as a normal file home in DIR")
      .argument("<dir>", "the home to write (created if missing; an earlier export there is completed)")
      .option("--from <url>", "the database to read (default: HERMES_DATABASE_URL or state.url)")
      .option("--batch <rows>", "rows per transaction", "500")
      .action(
        run((ctx, dir: string, flags: { from?: string; batch: string }) => exportHome(ctx, dir, flags)),
      );
  },
});

function batchOf(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw new CliFailure(`--batch expects a whole number from 1 to 10000, got "${raw}".`, 2);
  }
  return n;
}

function databaseUrl(
  ctx: ConfigContext,
  given: string | undefined,
): { url: string; label: string; poolSize: number } {
  try {
    const choice = stateBackendChoice(
      { ...ctx.config.state, backend: "postgres", ...(given ? { url: given } : {}) },
      given ? {} : ctx.env,
    );
    if (choice.kind !== "postgres") throw new CliFailure("no database named", 2);
    return choice;
  } catch (error) {
    if (error instanceof StateBackendConfigError) {
      throw new CliFailure(
        error.message.replace("state.backend is postgres but no database is named", "No database named"),
        2,
      );
    }
    throw error;
  }
}

async function openMigrated(url: string, label: string, poolSize: number): Promise<PgDatabase> {
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { migrate: migrateSchema } = await import("../../state/postgres/migrate.js");
  const { MIGRATIONS } = await import("../../state/postgres/migrations/index.js");
  const db = await openPgDatabase(url, { max: Math.min(poolSize, 4), applicationName: "hermes state" });
  try {
    await migrateSchema(db, MIGRATIONS);
  } catch (error) {
    await db.close();
    const code = (error as { code?: string }).code;
    const why = error instanceof Error ? error.message : String(error);
    throw new CliFailure(
      `could not prepare ${label}: ${code === "ECONNREFUSED" ? "nothing answers at that address" : why}`,
    );
  }
  return db;
}

function report(ctx: ConfigContext, result: HomeTransferReport): number {
  const rows = result.parts.flatMap((p) =>
    p.rows.map((r) => [
      `${p.part}: ${r.item}`,
      String(r.source),
      String(r.copied),
      String(r.present),
      String(r.skipped),
      r.verified ? "✓" : "✗",
    ]),
  );
  const columns = [
    { header: "part" },
    { header: "source", align: "right" as const },
    { header: "copied", align: "right" as const },
    { header: "already there", align: "right" as const },
    { header: "skipped", align: "right" as const },
    { header: "verified" },
  ];
  for (const line of renderTable(columns, rows)) ctx.io.out(line);
  for (const p of result.parts) for (const note of p.notes) ctx.io.err(`- ${p.part}: ${note}`);
  const problems = result.parts.flatMap((p) => p.problems.map((line) => `${p.part}: ${line}`));
  for (const p of problems) ctx.io.err(`✗ ${p}`);
  return problems.length > 0 || !result.verified ? 1 : 0;
}

function timezoneOf(ctx: ConfigContext): string | undefined {
  const zone = (ctx.config as { timezone?: unknown }).timezone;
  return typeof zone === "string" && zone !== "" ? zone : undefined;
}

async function migrate(
  ctx: ConfigContext,
  given: string | undefined,
  flags: { to: string; batch: string },
): Promise<number> {
  if (flags.to !== "postgres") {
    throw new CliFailure(`--to ${JSON.stringify(flags.to)}: the only backend to migrate to is postgres.`, 2);
  }
  const batch = batchOf(flags.batch);
  const { url, label, poolSize } = databaseUrl(ctx, given);
  const path = sessionStorePath(ctx.home);
  if (!existsSync(path)) throw new CliFailure(`${path} does not exist: there is nothing to migrate.`, 2);
  const { migrateHome } = await import("../../knowledge/state-transfer.js");
  const db = await openMigrated(url, label, poolSize);
  try {
    ctx.io.err(`Copying ${ctx.home} into ${label} …`);
    const result = await migrateHome({ home: ctx.home, db, batch, timezone: timezoneOf(ctx) });
    const code = report(ctx, result);
    if (code === 0) {
      ctx.io.out(
        `\nDone. To run this home on PostgreSQL: \`hermes config set state.backend postgres\` and put ` +
          `HERMES_DATABASE_URL=${label} (with its real password) in ${join(ctx.home, ".env")}.`,
      );
    }
    return code;
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(error instanceof Error ? error.message : String(error));
  } finally {
    await db.close();
  }
}

async function exportHome(
  ctx: ConfigContext,
  dir: string,
  flags: { from?: string; batch: string },
): Promise<number> {
  const batch = batchOf(flags.batch);
  const { url, label, poolSize } = databaseUrl(ctx, flags.from);
  const target = resolve(dir);
  if (target === resolve(ctx.home)) {
    throw new CliFailure(
      `${target} is this home: export into another directory and point HERMES_HOME at it.`,
      2,
    );
  }
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const { exportHome: writeHome } = await import("../../knowledge/state-transfer.js");
  const db = await openMigrated(url, label, poolSize);
  try {
    ctx.io.err(`Writing ${label} out to ${target} …`);
    const result = await writeHome({ home: target, db, batch, timezone: timezoneOf(ctx) });
    const code = report(ctx, result);
    if (code === 0) ctx.io.out(`\nDone. Use it with HERMES_HOME=${target} (state.backend: sqlite there).`);
    return code;
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(error instanceof Error ? error.message : String(error));
  } finally {
    await db.close();
  }
}
