import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { processStartTime } from "../../src/gateway/pid-file.js";
import { openSqliteStore, sessionStorePath } from "../../src/state/sqlite-store.js";
import { readZipEntries, ZipWriter } from "../../src/util/zip.js";
import { runHermes } from "../support/cli.js";

/** A fake user home whose ~/.hermes is the root home: HERMES_HOME unset, as for a real user. */
function userHome(): { home: string; cwd: string; root: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "hermes-profiles-"));
  const cwd = join(dir, "work");
  mkdirSync(cwd);
  mkdirSync(join(dir, ".hermes"));
  return { home: dir, cwd, root: join(dir, ".hermes"), env: { HERMES_HOME: "" } };
}

const hermes = (args: string[], at: ReturnType<typeof userHome>, env: Record<string, string> = {}) =>
  runHermes(args, { home: at.home, cwd: at.cwd, env: { ...at.env, ...env } });

function seedSession(home: string, title: string): string {
  const store = openSqliteStore(sessionStorePath(home), { now: () => Date.now() / 1000 });
  try {
    const session = store.createSession({
      source: "cli",
      model: "test/model",
      title,
      startedAt: Date.now() / 1000,
    });
    store.appendMessages(session.id, [
      { role: "user", content: `question about ${title}` },
      { role: "assistant", content: "answer" },
    ]);
    return session.id;
  } finally {
    store.close();
  }
}

describe("hermes profile", { timeout: 120_000 }, () => {
  it("creates, makes sticky, and every command without -p then works in the sticky profile", async () => {
    const at = userHome();
    writeFileSync(join(at.root, "config.yaml"), "model:\n  default: root-model\n  provider: custom\n");
    expect((await hermes(["profile", "create", "work"], at)).code).toBe(0);
    // A fresh profile starts with the current model settings, so it can chat at once.
    expect(readFileSync(join(at.root, "profiles/work/config.yaml"), "utf8")).toContain("root-model");
    expect(statSync(join(at.root, "profiles/work/.env")).mode & 0o777).toBe(0o600);

    const used = await hermes(["profile", "use", "work"], at);
    expect(used.code).toBe(0);
    expect(readFileSync(join(at.root, "active_profile"), "utf8").trim()).toBe("work");

    expect((await hermes(["config", "set", "model.default", "work-model"], at)).code).toBe(0);
    expect(readFileSync(join(at.root, "profiles/work/config.yaml"), "utf8")).toContain("work-model");
    expect(readFileSync(join(at.root, "config.yaml"), "utf8")).not.toContain("work-model");
    seedSession(join(at.root, "profiles/work"), "Sticky session");
    const sessions = await hermes(["sessions", "list"], at);
    expect(sessions.stdout).toContain("Sticky session");

    // -p wins over the sticky profile, and so does an explicit HERMES_HOME.
    expect((await hermes(["-p", "default", "config", "get", "model.default"], at)).stdout.trim()).toBe(
      "root-model",
    );
    const other = join(at.home, "elsewhere");
    mkdirSync(other);
    expect((await hermes(["config", "path"], at, { HERMES_HOME: other })).stdout.trim()).toBe(
      join(other, "config.yaml"),
    );

    const list = await hermes(["profile", "list"], at);
    expect(list.stdout).toMatch(/\*\s+work\s+work-model \(custom\)/);
    expect(list.stdout).toMatch(/\n\s+default\s+root-model/);
  });

  it("says how to recover when the sticky profile is gone, and `profile use default` does", async () => {
    const at = userHome();
    writeFileSync(join(at.root, "active_profile"), "gone\n");
    const broken = await hermes(["config", "path"], at);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('the active profile "gone"');
    expect(broken.stderr).toContain("hermes profile use default");
    expect((await hermes(["profile", "use", "default"], at)).code).toBe(0);
    expect(existsSync(join(at.root, "active_profile"))).toBe(false);
    expect((await hermes(["config", "path"], at)).stdout.trim()).toBe(join(at.root, "config.yaml"));

    // A sticky file that tries to lead out of the profiles directory is refused, not followed.
    writeFileSync(join(at.root, "active_profile"), "../../etc\n");
    const evil = await hermes(["config", "path"], at);
    expect(evil.code).toBe(2);
    expect(evil.stderr).toContain("not a path");
  });

  it("clones without the source's bot tokens and refuses reserved, existing and default names", async () => {
    const at = userHome();
    writeFileSync(
      join(at.root, ".env"),
      "TELEGRAM_BOT_TOKEN=123456:ABCDEFGHIJKLMNOPQRST\nOPENAI_API_KEY=sk-test-key-1234567890\n",
    );
    writeFileSync(join(at.root, "config.yaml"), "model:\n  default: m\n");
    mkdirSync(join(at.root, "skills/notes/todo"), { recursive: true });
    writeFileSync(join(at.root, "skills/notes/todo/SKILL.md"), "---\nname: todo\n---\n");
    const cloned = await hermes(["profile", "create", "coder", "--clone"], at);
    expect(cloned.code).toBe(0);
    expect(cloned.stdout).toContain("TELEGRAM_BOT_TOKEN");
    const env = readFileSync(join(at.root, "profiles/coder/.env"), "utf8");
    expect(env).toContain("OPENAI_API_KEY");
    expect(env).not.toContain("TELEGRAM_BOT_TOKEN");
    expect(readFileSync(join(at.root, ".env"), "utf8")).toContain("TELEGRAM_BOT_TOKEN");
    expect(existsSync(join(at.root, "profiles/coder/skills/notes/todo/SKILL.md"))).toBe(true);

    for (const name of ["coder", "default", "hermes", "../x", "Work"]) {
      const refused = await hermes(["profile", "create", name], at);
      expect(refused.code, name).toBe(2);
    }
    // Delete needs a confirmation nobody can give from a pipe.
    expect((await hermes(["profile", "delete", "coder"], at)).code).toBe(2);
    expect(existsSync(join(at.root, "profiles/coder"))).toBe(true);
    expect((await hermes(["profile", "delete", "default", "-y"], at)).code).toBe(2);
    expect((await hermes(["profile", "delete", "coder", "-y"], at)).code).toBe(0);
    expect(existsSync(join(at.root, "profiles/coder"))).toBe(false);
  });

  it("hermes model --global writes the root home's config.yaml; without it, the sticky profile's", async () => {
    const at = userHome();
    const base = "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: root-model\n";
    writeFileSync(join(at.root, "config.yaml"), base);
    expect((await hermes(["profile", "create", "work", "--no-alias"], at)).code).toBe(0);
    expect((await hermes(["profile", "use", "work"], at)).code).toBe(0);
    const global = await hermes(["model", "custom:global-model", "--global"], at);
    expect(global.code, global.stderr).toBe(0);
    const local = await hermes(["model", "custom:profile-model"], at);
    expect(local.code, local.stderr).toBe(0);
    expect(readFileSync(join(at.root, "config.yaml"), "utf8")).toContain("default: global-model");
    const work = readFileSync(join(at.root, "profiles/work/config.yaml"), "utf8");
    expect(work).toContain("default: profile-model");
    expect(work).not.toContain("global-model");
  });

  it("--clone-all copies everything but history, cron jobs and runtime files; --clone-from names the source", async () => {
    const at = userHome();
    writeFileSync(join(at.root, "config.yaml"), "model:\n  default: root-model\n");
    writeFileSync(
      join(at.root, ".env"),
      "TELEGRAM_BOT_TOKEN=123456:ABCDEFGHIJKLMNOPQRST\nOPENAI_API_KEY=sk-k-1234567890\n",
    );
    writeFileSync(join(at.root, "SOUL.md"), "root soul\n");
    writeFileSync(join(at.root, "gateway.pid"), '{"pid": 1}');
    mkdirSync(join(at.root, "notes"));
    writeFileSync(join(at.root, "notes/plan.md"), "the plan\n");
    mkdirSync(join(at.root, "cron"));
    writeFileSync(join(at.root, "cron/jobs.json"), '{"jobs": []}');
    seedSession(at.root, "Root history");

    const all = await hermes(["profile", "create", "full", "--clone-all", "--no-alias"], at);
    expect(all.code, all.stderr).toBe(0);
    const full = join(at.root, "profiles/full");
    expect(readFileSync(join(full, "notes/plan.md"), "utf8")).toBe("the plan\n");
    expect(readFileSync(join(full, "SOUL.md"), "utf8")).toBe("root soul\n");
    expect(readFileSync(join(full, ".env"), "utf8")).not.toContain("TELEGRAM_BOT_TOKEN");
    for (const left of ["state.db", "gateway.pid", "cron/jobs.json", "profiles"]) {
      expect(existsSync(join(full, left)), left).toBe(false);
    }
    expect((await hermes(["-p", "full", "sessions", "list"], at)).stdout).not.toContain("Root history");

    writeFileSync(join(full, "SOUL.md"), "full soul\n");
    writeFileSync(join(full, "config.yaml"), "model:\n  default: full-model\n");
    const from = await hermes(["profile", "create", "twin", "--clone-from", "full", "--no-alias"], at);
    expect(from.code, from.stderr).toBe(0);
    const twin = join(at.root, "profiles/twin");
    expect(readFileSync(join(twin, "SOUL.md"), "utf8")).toBe("full soul\n");
    expect(readFileSync(join(twin, "config.yaml"), "utf8")).toContain("full-model");
    // --clone-from is a --clone: identity and settings, not the source's other files.
    expect(existsSync(join(twin, "notes/plan.md"))).toBe(false);

    const missing = await hermes(["profile", "create", "ghost", "--clone-from", "nosuch", "--no-alias"], at);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('profile "nosuch" does not exist');
    expect(existsSync(join(at.root, "profiles/ghost"))).toBe(false);
  });

  it("exports a profile without its keys, redacts secrets in text, and imports it under a new name", async () => {
    const at = userHome();
    expect((await hermes(["profile", "create", "work"], at)).code).toBe(0);
    const work = join(at.root, "profiles/work");
    writeFileSync(join(work, ".env"), "OPENAI_API_KEY=sk-proj-shapelessabcdefghijklmnop\n");
    writeFileSync(
      join(work, "memories/MEMORY.md"),
      "deploy key is sk-proj-shapelessabcdefghijklmnop\n§\nuser likes tea\n",
    );
    seedSession(work, "Exported session");
    // A skill whose folder shares a name with the profile's runtime folders is the user's, kept.
    mkdirSync(join(work, "skills/devops/backups/logs"), { recursive: true });
    writeFileSync(join(work, "skills/devops/backups/SKILL.md"), "---\nname: backups\n---\nkeep me\n");
    writeFileSync(join(work, "skills/devops/backups/logs/example.txt"), "sample\n");
    mkdirSync(join(work, "logs"), { recursive: true });
    writeFileSync(join(work, "logs/agent.log"), "runtime log\n");
    const archive = join(at.home, "work.tar.gz");
    expect((await hermes(["profile", "export", "work", "-o", archive], at)).code).toBe(0);

    const imported = await hermes(["profile", "import", archive, "--name", "copy"], at);
    expect(imported.code).toBe(0);
    const copy = join(at.root, "profiles/copy");
    expect(existsSync(join(copy, ".env"))).toBe(false);
    // As upstream, the imported profile gets its wrapper (in the fake HOME).
    expect(readFileSync(join(at.home, ".local/bin/copy"), "utf8")).toContain('-p copy "$@"');
    const memory = readFileSync(join(copy, "memories/MEMORY.md"), "utf8");
    expect(memory).toContain("user likes tea");
    expect(memory).not.toContain("sk-proj-shapelessabcdefghijklmnop");
    expect(readFileSync(join(copy, "skills/devops/backups/SKILL.md"), "utf8")).toContain("keep me");
    expect(existsSync(join(copy, "skills/devops/backups/logs/example.txt"))).toBe(true);
    expect(existsSync(join(copy, "logs/agent.log"))).toBe(false);
    expect((await hermes(["-p", "copy", "sessions", "list"], at)).stdout).toContain("Exported session");
    // The archive's own name is taken already.
    expect((await hermes(["profile", "import", archive], at)).code).toBe(2);
  });
});

describe("hermes backup and hermes import", { timeout: 120_000 }, () => {
  it("backs up while another process writes state.db, and the import restores every profile", async () => {
    const at = userHome();
    writeFileSync(join(at.root, "config.yaml"), "model:\n  default: m\n");
    writeFileSync(join(at.root, ".env"), "OPENAI_API_KEY=sk-test-key-1234567890\n");
    writeFileSync(join(at.root, "gateway.pid"), '{"pid": 1}');
    seedSession(at.root, "Root session");
    expect((await hermes(["profile", "create", "work"], at)).code).toBe(0);
    seedSession(join(at.root, "profiles/work"), "Work session");
    // Earlier backups at a home's root stay out; a skill named like them is the user's and goes in.
    mkdirSync(join(at.root, "backups"), { recursive: true });
    writeFileSync(join(at.root, "backups/old.zip"), "old");
    mkdirSync(join(at.root, "profiles/work/skills/devops/backups"), { recursive: true });
    writeFileSync(join(at.root, "profiles/work/skills/devops/backups/SKILL.md"), "---\nname: backups\n---\n");

    // A writer that commits to state.db in a loop for the whole backup.
    const db = sessionStorePath(at.root);
    const writer = spawn(
      process.execPath,
      [
        "-e",
        `const D=require("better-sqlite3");const d=new D(${JSON.stringify(db)});d.pragma("busy_timeout=5000");
         d.exec("create table if not exists stress(x blob)");const ins=d.prepare("insert into stress values(randomblob(256))");
         let n=0;const tick=()=>{d.transaction(()=>{for(let i=0;i<5;i++)ins.run()})();if(++n===5)console.log("ready");setTimeout(tick,2)};tick();`,
      ],
      { cwd: join(import.meta.dirname, "../.."), stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve) =>
        createInterface({ input: writer.stdout }).once("line", () => resolve()),
      );
      const out = join(at.home, "out.zip");
      const backup = await hermes(["backup", "-o", out], at);
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toContain("Backup complete");
      const names = readZipEntries(out).map((e) => e.name);
      expect(names).toContain("state.db");
      expect(names).toContain("profiles/work/state.db");
      expect(names.some((n) => n.endsWith("-wal") || n.endsWith("-shm") || n === "gateway.pid")).toBe(false);
      expect(names).not.toContain("backups/old.zip");
      expect(names).toContain("profiles/work/skills/devops/backups/SKILL.md");
    } finally {
      writer.kill();
    }

    const fresh = userHome();
    const restored = await hermes(["import", join(at.home, "out.zip")], fresh);
    expect(restored.code, restored.stderr).toBe(0);
    expect(statSync(join(fresh.root, ".env")).mode & 0o777).toBe(0o600);
    const copy = new Database(join(fresh.root, "state.db"), { readonly: true });
    expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(
      (copy.prepare("select count(*) as n from stress").get() as { n: number }).n,
    ).toBeGreaterThanOrEqual(25);
    copy.close();
    expect((await hermes(["sessions", "list"], fresh)).stdout).toContain("Root session");
    expect((await hermes(["-p", "work", "sessions", "list"], fresh)).stdout).toContain("Work session");
    expect(existsSync(join(fresh.root, "profiles/work/skills/devops/backups/SKILL.md"))).toBe(true);

    // A configured home is overwritten only with -f when nobody can be asked.
    writeFileSync(join(fresh.root, "config.yaml"), "model:\n  default: changed\n");
    const refused = await hermes(["import", join(at.home, "out.zip")], fresh);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("-f");
    expect(readFileSync(join(fresh.root, "config.yaml"), "utf8")).toContain("changed");
    expect((await hermes(["import", "-f", join(at.home, "out.zip")], fresh)).code).toBe(0);
    expect(readFileSync(join(fresh.root, "config.yaml"), "utf8")).toContain("default: m");

    // Another process holding state.db open (an idle chat): refused with the fix, nothing replaced.
    const live = new Database(join(fresh.root, "state.db"));
    live.pragma("journal_mode = WAL");
    live.exec("create table if not exists mine (x)");
    live.prepare("insert into mine values (1)").run();
    try {
      const held = await hermes(["import", "-f", join(at.home, "out.zip")], fresh);
      expect(held.code).toBe(1);
      expect(held.stderr).toMatch(
        /state\.db is open in another Hermes process.*Close it, then run hermes import again/s,
      );
      // The live connection's table is still in the file it has open (no rename under it).
      expect((live.prepare("select count(*) as n from mine").get() as { n: number }).n).toBe(1);
    } finally {
      live.close();
    }
    const check = new Database(join(fresh.root, "state.db"), { readonly: true });
    expect(check.prepare("select name from sqlite_master where name = 'mine'").get()).toBeDefined();
    check.close();
    expect((await hermes(["import", "-f", join(at.home, "out.zip")], fresh)).code).toBe(0);
  });

  it("refuses to import over a home whose gateway is running, and not over a stale pid file", async () => {
    const at = userHome();
    seedSession(at.root, "Before");
    expect((await hermes(["backup", "-o", join(at.home, "b.zip")], at)).code).toBe(0);
    // This test process stands in for the gateway: alive, same start time, same home.
    const record = {
      pid: process.pid,
      kind: "hermes-gateway",
      hermes_home: at.root,
      start_time: processStartTime(process.pid),
      argv: ["hermes", "gateway", "run"],
      started_at: new Date().toISOString(),
    };
    writeFileSync(join(at.root, "gateway.pid"), JSON.stringify(record));
    const refused = await hermes(["import", "-f", join(at.home, "b.zip")], at);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the gateway is running on ${at.root} (pid ${process.pid})`);
    expect(refused.stderr).toContain("hermes gateway stop");
    // A pid file left by a gateway that is gone does not block the import.
    writeFileSync(join(at.root, "gateway.pid"), JSON.stringify({ ...record, start_time: -1 }));
    expect((await hermes(["import", "-f", join(at.home, "b.zip")], at)).code).toBe(0);
  });

  it("refuses archive members that would land outside the home, and keeps going with the rest", async () => {
    const at = userHome();
    const evil = join(at.home, "evil.zip");
    const zip = new ZipWriter(evil);
    const mtime = new Date();
    await zip.addBuffer("config.yaml", "model:\n  default: m\n", { mtime });
    await zip.addBuffer("../escaped.txt", "pwned", { mtime });
    await zip.addBuffer("/tmp/absolute.txt", "pwned", { mtime });
    await zip.addBuffer("memories/../../../escaped2.txt", "pwned", { mtime });
    await zip.addBuffer("state.db", "not a database at all", { mtime });
    zip.close();
    const target = userHome();
    const result = await hermes(["import", evil], target);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("path traversal");
    expect(result.stderr).toContain("absolute path");
    expect(existsSync(join(target.home, "escaped.txt"))).toBe(false);
    expect(existsSync(join(target.root, "..", "escaped2.txt"))).toBe(false);
    expect(readFileSync(join(target.root, "config.yaml"), "utf8")).toContain("default: m");
    // A member named state.db that is not SQLite never becomes the home's database.
    expect(existsSync(join(target.root, "state.db"))).toBe(false);

    const notZip = join(at.home, "notes.zip");
    writeFileSync(notZip, "hello");
    const bad = await hermes(["import", notZip], target);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("not a readable zip archive");
  });

  it("--quick snapshots the current home's state under state-snapshots with a manifest", async () => {
    const at = userHome();
    writeFileSync(join(at.root, "config.yaml"), "model:\n  default: m\n");
    seedSession(at.root, "Snap");
    const quick = await hermes(["backup", "--quick", "-l", "before update"], at);
    expect(quick.code, quick.stderr).toBe(0);
    const id = /Snapshot (\S+):/.exec(quick.stdout)?.[1] ?? "";
    expect(id).toMatch(/^\d{8}-\d{6}-before-update$/);
    const manifest = JSON.parse(readFileSync(join(at.root, "state-snapshots", id, "manifest.json"), "utf8"));
    expect(Object.keys(manifest.files).sort()).toEqual(["config.yaml", "state.db"]);
    expect(manifest.label).toBe("before-update");
    expect(statSync(join(at.root, "state-snapshots", id, "state.db")).mode & 0o777).toBe(0o600);
  });
});
