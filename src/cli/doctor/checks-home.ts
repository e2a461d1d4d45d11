/**
 * Doctor checks of the home itself: config.yaml (parses, types, unknown keys and words), the
 * permissions of `.env` and `auth.json`, the folders Hermes writes into, SQLite with FTS5, and
 * state.db (integrity, schema). Repairs offered here are the safe ones: chmod 600, mkdir, and the
 * store's own in-place schema/FTS repair.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../config/errors.js";
import { authPath, configPath, envPath, logsDir, memoriesDir, skillsDir } from "../../config/home.js";
import { loadConfig } from "../../config/load.js";
import { configTextProblems } from "../../config/validate.js";
import { loadDriver } from "../../state/connection.js";
import { openSessionStore, sessionStorePath } from "../../state/sqlite-store.js";
import { SessionStoreError } from "../../state/types.js";
import type { DoctorLine } from "./types.js";

type Env = Readonly<Record<string, string | undefined>>;

/** config.yaml: parse and type errors (✗, as a run would refuse it), then unknown keys and words (✗). */
export function configChecks(home: string, env: Env): DoctorLine[] {
  const group = "Config";
  const file = configPath(home);
  if (!existsSync(file)) {
    return [
      { group, name: "config.yaml", status: "ok", detail: `none at ${file}; the built-in defaults apply` },
    ];
  }
  try {
    loadConfig({ home, env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [
      {
        group,
        name: "config.yaml",
        status: "fail",
        detail: error.message,
        fix: "Correct that line (hermes config edit); Hermes refuses to start until it reads.",
      },
    ];
  }
  const problems = configTextProblems(readFileSync(file, "utf8"), file);
  if (problems.length === 0) return [{ group, name: "config.yaml", status: "ok", detail: `valid (${file})` }];
  return problems.map((problem) => ({
    group,
    name: `config.yaml${problem.line === undefined ? "" : ` line ${problem.line}`}`,
    status: "fail" as const,
    detail: problem.message,
    fix:
      problem.suggestion === undefined
        ? `Remove or correct ${problem.key} (hermes config edit); Hermes ignores what it does not know.`
        : problem.kind === "unknown_key"
          ? `Rename ${problem.key} to ${problem.suggestion} (hermes config edit).`
          : `hermes config set ${problem.key} ${problem.suggestion}`,
  }));
}

/** `.env` and `auth.json` hold secrets: readable by the owner only. */
export function permissionChecks(home: string): DoctorLine[] {
  if (process.platform === "win32") return [];
  const lines: DoctorLine[] = [];
  for (const [name, path] of [
    [".env", envPath(home)],
    ["auth.json", authPath(home)],
  ] as const) {
    let mode: number;
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) {
        // chmod would change the link's target, which may be any file: the user decides.
        lines.push({
          group: "Home",
          name: `${name} permissions`,
          status: "warn",
          detail: `${path} is a symbolic link to ${readlinkSync(path)}`,
          fix: "Make sure the file it points to is readable by you only (chmod 600 on it).",
        });
        continue;
      }
      mode = info.mode & 0o777;
    } catch {
      lines.push({ group: "Home", name: `${name} permissions`, status: "ok", detail: "no file" });
      continue;
    }
    if ((mode & 0o077) === 0) {
      lines.push({ group: "Home", name: `${name} permissions`, status: "ok", detail: `mode ${octal(mode)}` });
      continue;
    }
    lines.push({
      group: "Home",
      name: `${name} permissions`,
      status: "fail",
      detail: `${path} is mode ${octal(mode)}: other users can read the secrets in it`,
      fix: `chmod 600 ${path}`,
      repair: () => {
        chmodSync(path, 0o600);
        return `${path} is now mode 600`;
      },
    });
  }
  return lines;
}

function octal(mode: number): string {
  return mode.toString(8).padStart(3, "0");
}

/** The folders Hermes writes into; a missing one is created by `--fix` (and by first use). */
export function folderChecks(home: string): DoctorLine[] {
  const folders = [
    home,
    logsDir(home),
    memoriesDir(home),
    skillsDir(home),
    join(home, "sessions"),
    join(home, "cron"),
  ];
  const missing = folders.filter((dir) => !existsSync(dir));
  const notDirs = folders.filter((dir) => existsSync(dir) && !statSync(dir).isDirectory());
  const lines: DoctorLine[] = [];
  for (const path of notDirs) {
    lines.push({
      group: "Home",
      name: "folders",
      status: "fail",
      detail: `${path} is a file, not a folder`,
      fix: `Move ${path} aside; Hermes keeps a folder there.`,
    });
  }
  if (missing.length === 0) {
    if (notDirs.length === 0) lines.push({ group: "Home", name: "folders", status: "ok", detail: home });
    return lines;
  }
  lines.push({
    group: "Home",
    name: "folders",
    status: "warn",
    detail: `missing: ${missing.join(", ")}`,
    fix: "hermes doctor --fix creates them (Hermes also creates each on first use).",
    repair: () => {
      for (const dir of missing) mkdirSync(dir, { recursive: true, mode: 0o700 });
      return `created ${missing.join(", ")}`;
    },
  });
  return lines;
}

/** The SQLite driver loads, and its SQLite has FTS5 (session search needs it). */
export function sqliteChecks(): DoctorLine[] {
  const group = "System";
  let Database: ReturnType<typeof loadDriver>;
  try {
    Database = loadDriver();
  } catch (error) {
    return [
      {
        group,
        name: "SQLite",
        status: "fail",
        detail: `the better-sqlite3 driver did not load: ${error instanceof Error ? error.message : String(error)}`,
        fix: "Reinstall Hermes so its native module is built for this Node (npm rebuild better-sqlite3).",
      },
    ];
  }
  const db = new Database(":memory:");
  try {
    const version = String(db.prepare("SELECT sqlite_version() AS v").pluck().get());
    const lines: DoctorLine[] = [{ group, name: "SQLite", status: "ok", detail: version }];
    try {
      db.exec("CREATE VIRTUAL TABLE doctor_probe USING fts5(body)");
      lines.push({ group, name: "FTS5", status: "ok", detail: "available" });
    } catch (error) {
      lines.push({
        group,
        name: "FTS5",
        status: "fail",
        detail: `not available: ${error instanceof Error ? error.message : String(error)}`,
        fix: "Session search needs SQLite built with FTS5; reinstall better-sqlite3 from npm (it bundles one).",
      });
    }
    return lines;
  } finally {
    db.close();
  }
}

/** state.db: opens, passes integrity_check, has every table, column, index and FTS table. */
export async function stateDbChecks(home: string): Promise<DoctorLine[]> {
  const group = "Home";
  const path = sessionStorePath(home);
  if (!existsSync(path)) {
    return [{ group, name: "state.db", status: "ok", detail: "none yet (created with the first session)" }];
  }
  let report: { integrity: boolean; problems: string[] };
  try {
    const store = openSessionStore(path, { readonly: true, retryBudgetMs: 3000 });
    try {
      report = await store.check();
    } finally {
      await store.close();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const corrupt = error instanceof SessionStoreError && error.code === "corrupt";
    return [
      {
        group,
        name: "state.db",
        status: "fail",
        detail: message,
        fix: corrupt
          ? `Move it aside and recover what can be read: mv ${path} ${path}.bad && hermes sessions repair --from ${path}.bad`
          : "Close other Hermes processes using it and run hermes doctor again.",
      },
    ];
  }
  if (!report.integrity) {
    return [
      {
        group,
        name: "state.db",
        status: "fail",
        detail: `integrity check failed: ${report.problems[0] ?? "damaged pages"}`,
        fix: `Recover into a fresh file: mv ${path} ${path}.bad && hermes sessions repair --from ${path}.bad`,
      },
    ];
  }
  if (report.problems.length === 0) {
    return [{ group, name: "state.db", status: "ok", detail: "integrity ok, schema complete" }];
  }
  return [
    {
      group,
      name: "state.db",
      status: "fail",
      detail: `${report.problems.length} schema problem${report.problems.length === 1 ? "" : "s"}: ${report.problems.slice(0, 3).join("; ")}`,
      fix: "hermes doctor --fix (or hermes sessions repair) adds what is missing and rebuilds the search index.",
      repair: async () => {
        const store = openSessionStore(path, { retryBudgetMs: 10_000 });
        try {
          const repaired = await store.repair();
          if (repaired.problems.length > 0) throw new Error(repaired.problems.join("; "));
          return repaired.fixed.length > 0 ? repaired.fixed.join("; ") : "schema brought up to date";
        } finally {
          await store.close();
        }
      },
    },
  ];
}
