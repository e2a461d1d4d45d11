/**
 * A real PostgreSQL server (Debian's `postgresql` package) for one test file: `initdb` into a temp
 * directory, `postgres` on a free loopback port with its socket in that directory, trust auth for
 * loopback only, stopped and removed by `dispose()`. initdb refuses to run as root, so as root the
 * cluster belongs to the `postgres` system user (`runuser`). fsync is off: a killed server
 * keeps every commit (they reach the OS), only a power cut would not, which no test makes.
 *
 * `createDatabase()` gives each test its own database on the shared server, so tests in a file
 * stay independent without paying for a server each. `kill()` sends SIGKILL to the postmaster
 * (a crash), `start()` brings it back on the same port with the same data.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

function findBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

export const PG_BIN = findBin();
/** Why the PostgreSQL tests skip here, or undefined when they can run. */
export const postgresSkipReason = PG_BIN
  ? undefined
  : "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres): apt-get install postgresql";

export interface PostgresFixture {
  host: "127.0.0.1";
  port: number;
  dir: string;
  /** URL of the `postgres` maintenance database (superuser `postgres`, no password). */
  adminUrl: string;
  /** A new, empty database on this server; answers its URL. */
  createDatabase(name?: string): Promise<string>;
  /** SIGKILL to the server: every connection drops as in a crash. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data (after `kill`). */
  start(): Promise<void>;
  /** Stops the server for good and removes its directory. */
  dispose(): Promise<void>;
  /** The server's log so far. */
  log(): string;
}

const asRoot = process.getuid?.() === 0;

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/** argv run as the cluster's owner: `postgres` through runuser when we are root, else ourselves. */
function asOwner(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

let databases = 0;

export async function startPostgres(): Promise<PostgresFixture> {
  if (!PG_BIN) throw new Error(postgresSkipReason);
  const dir = mkdtempSync(join(tmpdir(), "hermes-pg-"));
  const data = join(dir, "data");
  const logFile = join(dir, "postgres.log");
  if (asRoot) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o755);
  const [initCmd, initArgs] = asOwner(join(PG_BIN, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--encoding=UTF8",
    "--locale=C.UTF-8",
    "--no-sync",
  ]);
  execFileSync(initCmd, initArgs, { stdio: "pipe" });
  const port = await freePort();
  let server: ChildProcess | undefined;

  const start = async () => {
    const [cmd, args] = asOwner(join(PG_BIN, "postgres"), [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=300",
      "-c",
      `log_directory=${dir}`,
      "-c",
      "logging_collector=off",
    ]);
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"], detached: false });
    let log = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    server = child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        execFileSync(join(PG_BIN!, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"], {
          stdio: "ignore",
        });
        return;
      } catch {
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`PostgreSQL did not start on port ${port}: ${log.slice(-2000)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const postmasterPid = (): number | undefined => {
    try {
      return Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]) || undefined;
    } catch {
      return undefined;
    }
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stopServer = async (signal: NodeJS.Signals) => {
    const child = server;
    server = undefined;
    // Signal the postmaster itself: as root the child is runuser, which does not pass SIGKILL on.
    const pid = postmasterPid();
    if (pid && alive(pid)) process.kill(pid, signal);
    else child?.kill(signal);
    const deadline = Date.now() + 15_000;
    while (pid && alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (signal === "SIGKILL") {
      // The backends of a killed postmaster exit when they notice; wait until none answers.
      while (Date.now() < deadline) {
        const answers = await new Promise<boolean>((resolve) => {
          const probe = createConnection({ host: "127.0.0.1", port }, () => {
            probe.destroy();
            resolve(true);
          });
          probe.once("error", () => resolve(false));
        });
        if (!answers) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    if (child && child.exitCode === null) {
      await Promise.race([
        new Promise((resolve) => child.once("exit", resolve)),
        new Promise((r) => setTimeout(r, 5_000)),
      ]);
    }
  };
  await start();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    host: "127.0.0.1",
    port,
    dir,
    adminUrl,
    async createDatabase(name) {
      const db = name ?? `hermes_test_${process.pid}_${++databases}`;
      const pg = (await import("pg")).default;
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${db.replace(/"/g, "")}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${db}`;
    },
    async kill() {
      await stopServer("SIGKILL");
    },
    start,
    async dispose() {
      await stopServer("SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
  };
}
