/**
 * Side bundles (scripts/side-bundles.mjs, loaded by scripts/side-loader.cjs): the CLI is built
 * into a throw-away package (bin/ and dist/cli/ as npm installs them, node_modules linked) and run
 * as a user runs it. Each rarely used surface loads from its own file only when used; a missing,
 * foreign or stale side file fails with a message that names the file and the fix; and no module
 * is in two bundles, so the main bundle's registries, redactor and caches exist once.
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuiltSideBundle,
  buildCliBundles,
  bundleOverlaps,
  outputModules,
  SIDE_BUNDLES,
  STATELESS_SHARED,
  seamOf,
} from "../../../scripts/side-bundles.mjs";
import { reply, startFakeLlm } from "../../support/fake-llm.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const scratch = mkdtempSync(join(tmpdir(), "hermes-side-bundles-"));
const built = join(scratch, "built");
let bundles: Awaited<ReturnType<typeof buildCliBundles>>;

/** A package of the built CLI (only the .cjs files), with `change` applied to its dist/cli. */
function packageCopy(name: string, change: (dist: string) => void = () => {}): string {
  const root = join(scratch, name);
  mkdirSync(join(root, "bin"), { recursive: true });
  mkdirSync(join(root, "dist", "cli"), { recursive: true });
  for (const file of ["bin/hermes", "bin/package.json", "package.json"])
    copyFileSync(join(ROOT, file), join(root, file));
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  for (const file of readdirSync(join(built, "dist", "cli")).filter((f) => f.endsWith(".cjs"))) {
    copyFileSync(join(built, "dist", "cli", file), join(root, "dist", "cli", file));
  }
  change(join(root, "dist", "cli"));
  return root;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the package's `hermes` in a fresh home (its own cache directory) unless one is given. */
function hermes(
  pkg: string,
  args: string[],
  options: { home?: string; env?: Record<string, string>; entry?: string } = {},
) {
  const home = options.home ?? mkdtempSync(join(scratch, "home-"));
  return new Promise<Run & { home: string }>((done) => {
    execFile(
      process.execPath,
      [options.entry ?? join(pkg, "bin", "hermes"), ...args],
      {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: home,
          HERMES_HOME: home,
          NO_COLOR: "1",
          ...options.env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        done({ code, stdout, stderr, home });
      },
    );
  });
}

/** The side bundles whose code cache a run left in its home's cache directory. */
function sideCaches(home: string): string[] {
  try {
    return readdirSync(join(home, ".cache", "hermes-ts", "side"))
      .filter((f) => f.endsWith(".v8"))
      .map((f) => f.split("-")[0] ?? "")
      .sort();
  } catch {
    return [];
  }
}

function postgresHome(): string {
  const home = mkdtempSync(join(scratch, "home-pg-"));
  // A closed port: the driver is loaded and refused, so nothing else is needed for the seam.
  writeFileSync(
    join(home, "config.yaml"),
    "state:\n  backend: postgres\n  url: postgres://hermes@127.0.0.1:1/hermes\n",
  );
  return home;
}

const side = (name: string): BuiltSideBundle => {
  const found = bundles.sides.find((s) => s.name === name);
  if (!found) throw new Error(`no side bundle ${name}`);
  return found;
};

beforeAll(async () => {
  bundles = await buildCliBundles({ outdir: join(built, "dist", "cli") });
  packageCopy("cli");
}, 180_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("side bundles: one copy of every module", () => {
  it("no module is in two bundles, and each side bundle takes its shared modules from the main one", () => {
    const main = outputModules(bundles.main.result.metafile, bundles.main.outfile);
    const all: Record<string, Set<string>> = { main };
    for (const s of bundles.sides) {
      const modules = outputModules(s.result.metafile, s.outfile);
      all[s.name] = modules;
      expect(modules.size).toBeGreaterThan(0);
      for (const path of modules) if (!STATELESS_SHARED.includes(path)) expect(main.has(path)).toBe(false);
      // What it needs from the main bundle is there, and the main bundle's host table lends it.
      for (const path of s.hostModules) expect(main.has(path)).toBe(true);
    }
    expect(bundleOverlaps(all)).toEqual([]);
    expect(bundles.sides.map((s) => s.name).sort()).toEqual(SIDE_BUNDLES.map((s) => s.name).sort());
  });

  it("process-wide state the PostgreSQL backend uses is the main bundle's instance", () => {
    const main = outputModules(bundles.main.result.metafile, bundles.main.outfile);
    const postgres = side("postgres");
    const modules = outputModules(postgres.result.metafile, postgres.outfile);
    // The redactor, the session store contracts and the pool module (imported statically by the
    // backend settings, so it stays in the main bundle) are lent, never copied.
    for (const shared of [
      "src/util/redact.ts",
      "src/state/postgres/database.ts",
      "src/knowledge/stores.ts",
    ]) {
      expect(postgres.hostModules).toContain(shared);
      expect(modules.has(shared)).toBe(false);
    }
    expect(postgres.seams).toContain("src/knowledge/postgres-backend.ts");
    expect(modules.has("src/knowledge/postgres-backend.ts")).toBe(true);
    expect(modules.has("src/state/postgres/migrate.ts")).toBe(true);
    expect(side("dashboard").seams).toEqual(["src/cli/commands/dashboard.ts"]);
    // The chat platforms' adapters, but Signal's: `hermes setup` reads a constant from signal.ts.
    const platforms = outputModules(side("platforms").result.metafile, side("platforms").outfile);
    expect(platforms.has("src/gateway/platforms/telegram.ts")).toBe(true);
    expect(platforms.has("src/gateway/platforms/discord.ts")).toBe(true);
    expect(main.has("src/gateway/platforms/telegram.ts")).toBe(false);
    expect(main.has("src/gateway/platforms/registry.ts")).toBe(true);
    expect(main.has("src/gateway/platforms/signal.ts")).toBe(true);
    expect(
      outputModules(side("dashboard").result.metafile, side("dashboard").outfile).has("src/dashboard/app.ts"),
    ).toBe(true);
  });

  it("names every module two bundles hold, unless it is listed as stateless", () => {
    const overlaps = bundleOverlaps(
      {
        main: ["src/util/redact.ts", "src/util/pure.ts", "node_modules/yaml/dist/index.js"],
        postgres: ["src/state/postgres/migrate.ts", "src/util/redact.ts", "src/util/pure.ts"],
        dashboard: [
          "src/dashboard/app.ts",
          "node_modules/yaml/dist/index.js",
          "src/state/postgres/migrate.ts",
        ],
      },
      ["src/util/pure.ts"],
    );
    expect(overlaps).toEqual([
      { path: "src/util/redact.ts", bundles: ["main", "postgres"] },
      { path: "node_modules/yaml/dist/index.js", bundles: ["main", "dashboard"] },
      { path: "src/state/postgres/migrate.ts", bundles: ["postgres", "dashboard"] },
    ]);
    expect(bundleOverlaps({ main: ["a.ts"], rl: ["b.ts"] })).toEqual([]);
  });

  it("moves a module two side bundles would each hold into the main bundle, lent to both", async () => {
    // `hermes logs` and the dashboard both read logs through util/log-tail.ts and log-filter.ts,
    // which nothing else in the main bundle uses: cut both, and each would carry its own copy.
    const logs = { name: "logs", what: "`hermes logs`", seams: [/^src\/cli\/commands\/logs\.ts$/] };
    const dashboard = SIDE_BUNDLES.find((s) => s.name === "dashboard");
    if (!dashboard) throw new Error("no dashboard side bundle");
    const result = await buildCliBundles({ write: false, sides: [dashboard, logs] });
    expect(result.hoisted).toEqual(
      expect.arrayContaining(["src/util/log-filter.ts", "src/util/log-tail.ts"]),
    );
    const main = outputModules(result.main.result.metafile, result.main.outfile);
    const all: Record<string, Set<string>> = { main };
    for (const s of result.sides) {
      all[s.name] = outputModules(s.result.metafile, s.outfile);
      expect(s.hostModules).toContain("src/util/log-tail.ts");
    }
    expect(main.has("src/util/log-tail.ts")).toBe(true);
    expect(bundleOverlaps(all)).toEqual([]);
  }, 180_000);

  it("cuts only at a side bundle's seams", () => {
    expect(seamOf("src/state/postgres/migrate.ts")?.name).toBe("postgres");
    expect(seamOf("src/knowledge/postgres/skill-library.ts")?.name).toBe("postgres");
    expect(seamOf("src/cli/commands/dashboard.ts")?.name).toBe("dashboard");
    // Look-alikes stay in the main bundle.
    expect(seamOf("src/state/postgresql-notes.ts")).toBeUndefined();
    expect(seamOf("src/cli/commands/dashboard-extra.ts")).toBeUndefined();
    expect(seamOf("test/src/state/postgres/migrate.ts")).toBeUndefined();
    expect(seamOf("src/dashboard/app.ts")).toBeUndefined();
  });
});

describe("side bundles from the built CLI", () => {
  it("loads each surface's side bundle when it is used, and none for other commands", async () => {
    const pkg = join(scratch, "cli");
    const plain = await hermes(pkg, ["sessions", "list"]);
    expect(plain.code).toBe(0);
    expect(sideCaches(plain.home)).toEqual([]);
    // A one-shot with a tool call loads none either.
    const llm = await startFakeLlm();
    try {
      const home = mkdtempSync(join(scratch, "home-z-"));
      writeFileSync(
        join(home, "config.yaml"),
        `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n`,
      );
      llm.enqueue(reply().toolCall("terminal", { command: "echo side" }), reply().text("done"));
      const shot = await hermes(pkg, ["-z", "run echo"], { home });
      expect(shot.stdout.trim()).toBe("done");
      expect(sideCaches(home)).toEqual([]);
    } finally {
      await llm.close();
    }

    const dashboard = await hermes(pkg, ["dashboard", "--status"]);
    expect(dashboard.stdout).toContain("Dashboard: not running");
    expect(sideCaches(dashboard.home)).toEqual(["dashboard"]);

    // `hermes send` builds its platform's adapter from the platforms side bundle (a closed port:
    // the adapter itself reports the failure).
    const sendHome = mkdtempSync(join(scratch, "home-send-"));
    writeFileSync(join(sendHome, ".env"), "MATTERMOST_TOKEN=t\nMATTERMOST_URL=http://127.0.0.1:1\n");
    const send = await hermes(pkg, ["send", "-t", "mattermost:C1", "hi"], { home: sendHome });
    expect(send.code).toBe(1);
    expect(send.stderr).toContain("Mattermost at http://127.0.0.1:1 did not answer");
    expect(sideCaches(sendHome)).toEqual(["platforms"]);

    const rl = await hermes(pkg, ["rl", "list"]);
    expect(rl.code).toBe(0);
    expect(rl.stdout).toContain("terminal-tasks");
    expect(sideCaches(rl.home)).toEqual(["rl"]);

    const batch = await hermes(pkg, ["batch", "--help"]);
    expect(batch.code).toBe(0);
    expect(batch.stdout).toContain("Usage: hermes batch");
    expect(sideCaches(batch.home)).toEqual(["batch"]);

    for (const [name, args] of [
      ["skills", ["skills", "list"]],
      ["mcp", ["mcp", "list"]],
      ["profile", ["profile", "list"]],
    ] as const) {
      const run = await hermes(pkg, [...args]);
      expect(run.stderr).not.toContain("side-");
      expect(run.code).toBe(0);
      expect(sideCaches(run.home)).toEqual([name]);
    }

    // The backend loads from its side bundle and the driver from node_modules: refused, not missing.
    const pg = await hermes(pkg, ["sessions", "list"], { home: postgresHome() });
    expect(pg.code).not.toBe(0);
    expect(pg.stderr).toContain("cannot be reached");
    expect(pg.stderr).not.toContain("is missing");
    expect(sideCaches(pg.home)).toEqual(["postgres"]);
  }, 120_000);

  it("keeps a side bundle's code cache across runs, and writes none with HERMES_NO_COMPILE_CACHE=1", async () => {
    const pkg = join(scratch, "cli");
    const first = await hermes(pkg, ["rl", "list"]);
    const dir = join(first.home, ".cache", "hermes-ts", "side");
    const [cache] = readdirSync(dir);
    expect(cache).toMatch(/^rl-[0-9a-f]{32}-/);
    const written = statSync(join(dir, cache ?? "")).mtimeMs;
    const second = await hermes(pkg, ["rl", "list"], { home: first.home });
    expect(second.stdout).toContain("terminal-tasks");
    // Accepted as it was: not rewritten.
    expect(readdirSync(dir)).toEqual([cache]);
    expect(statSync(join(dir, cache ?? "")).mtimeMs).toBe(written);

    const bypass = await hermes(pkg, ["rl", "list"], { env: { HERMES_NO_COMPILE_CACHE: "1" } });
    expect(bypass.stdout).toContain("terminal-tasks");
    expect(sideCaches(bypass.home)).toEqual([]);
  }, 60_000);

  it("a missing side bundle fails its command with the file and the fix; the rest of the CLI works", async () => {
    const pkg = packageCopy("no-postgres", (dist) => rmSync(join(dist, "side-postgres.cjs")));
    const pg = await hermes(pkg, ["sessions", "list"], { home: postgresHome() });
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain(`${join(pkg, "dist", "cli", "side-postgres.cjs")} is missing`);
    expect(pg.stderr).toContain("the PostgreSQL state backend");
    expect(pg.stderr).toContain("run `npm run build`");
    const plain = await hermes(pkg, ["sessions", "list"]);
    expect(plain.code).toBe(0);
    const rl = await hermes(pkg, ["rl", "list"]);
    expect(rl.stdout).toContain("terminal-tasks");

    const noDashboard = packageCopy("no-dashboard", (dist) => rmSync(join(dist, "side-dashboard.cjs")));
    const dashboard = await hermes(noDashboard, ["dashboard", "--status"]);
    expect(dashboard.code).toBe(1);
    expect(dashboard.stderr).toMatch(/side-dashboard\.cjs is missing: it holds the web dashboard's server/);
  }, 60_000);

  it("run with `node dist/cli/hermes.cjs` the CLI works and loads its side bundles; a side file alone refuses", async () => {
    const pkg = join(scratch, "cli");
    const direct = { entry: join(pkg, "dist", "cli", "hermes.cjs") };
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(await hermes(pkg, ["--version"], direct)).toMatchObject({
      code: 0,
      stdout: `hermes ${version}\n`,
    });
    const viaBin = await hermes(pkg, ["dashboard", "--status"]);
    const home = mkdtempSync(join(scratch, "home-"));
    const dashboard = await hermes(pkg, ["dashboard", "--status"], { ...direct, home });
    expect(dashboard).toMatchObject({ code: viaBin.code, stdout: viaBin.stdout, stderr: "" });
    expect(dashboard.stdout).toContain("Dashboard: not running");
    // The dashboard's side bundle was loaded (its loader keeps a code cache however hermes started).
    expect(sideCaches(home)).toEqual(["dashboard"]);
    const side = await hermes(pkg, [], { entry: join(pkg, "dist", "cli", "side-postgres.cjs") });
    expect(side.code).toBe(2);
    expect(side.stdout).toBe("");
    expect(side.stderr).toContain(
      "side-postgres.cjs is a part of the hermes CLI loaded on demand, not a program",
    );
    expect(side.stderr).toContain("start hermes with bin/hermes");
  }, 60_000);

  it("loads one side bundle from another: `hermes mcp serve` reads a PostgreSQL home's approvals", async () => {
    // The mcp side bundle imports the backend's approvals module from the postgres side bundle.
    const listApprovals = async (pkg: string) => {
      const home = postgresHome();
      const client = new Client({ name: "side-bundles-test", version: "1" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [join(pkg, "bin", "hermes"), "mcp", "serve"],
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home, NO_COLOR: "1" },
          stderr: "pipe",
        }),
      );
      try {
        const result = (await client.callTool({ name: "permissions_list_open", arguments: {} })) as {
          isError?: boolean;
          content: { type: string; text?: string }[];
        };
        return { isError: result.isError, text: result.content.map((c) => c.text ?? "").join("") };
      } finally {
        await client.close();
      }
    };
    const found = await listApprovals(join(scratch, "cli"));
    expect(found.isError).toBe(true);
    expect(found.text).toContain("ECONNREFUSED");
    expect(found.text).not.toContain("side-");

    const pkg = packageCopy("mcp-without-postgres", (dist) => rmSync(join(dist, "side-postgres.cjs")));
    const missing = await listApprovals(pkg);
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain(`${join(pkg, "dist", "cli", "side-postgres.cjs")} is missing`);
    expect(missing.text).toContain("the PostgreSQL state backend");
  }, 60_000);

  it("refuses a side file that is not a side bundle, or one from another build", async () => {
    const foreign = packageCopy("foreign", (dist) =>
      writeFileSync(
        join(dist, "side-rl.cjs"),
        'module.exports = { "src/cli/commands/rl.ts": () => ({}) };\n',
      ),
    );
    const a = await hermes(foreign, ["rl", "list"]);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/side-rl\.cjs is not a side bundle of this build; run `npm run build`/);

    const wrapper = "(function (exports, require, module, __filename, __dirname, __hermesHost) {";
    const other = packageCopy("other-build", (dist) =>
      writeFileSync(
        join(dist, "side-rl.cjs"),
        `${wrapper}module.exports = { "src/rl/other.ts": () => ({}) };\n})`,
      ),
    );
    const b = await hermes(other, ["rl", "list"]);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/side-rl\.cjs has no src\/cli\/commands\/rl\.ts: it is from another build/);

    const asks = packageCopy("asks-more", (dist) =>
      writeFileSync(
        join(dist, "side-rl.cjs"),
        `${wrapper}module.exports = { "src/cli/commands/rl.ts": () => __hermesHost.module("src/util/not-in-main.ts") };\n})`,
      ),
    );
    const c = await hermes(asks, ["rl", "list"]);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(
      /needs src\/util\/not-in-main\.ts, which this build's main bundle does not provide/,
    );
    expect(c.stdout).toBe("");
  }, 60_000);
});
