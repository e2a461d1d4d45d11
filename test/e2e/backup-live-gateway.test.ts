/**
 * `hermes backup` of a home whose gateway is answering requests (the API server, one new session
 * per request) while the backup runs, then `hermes import` into a fresh home and `import -f` over
 * a configured one: the restored state.db is a consistent snapshot (integrity ok, each session a
 * whole prefix of its turn) and the sessions list of the restored home works.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { startGatewayProcess } from "../support/gateway-process.js";

const llm = useFakeLlm();
const KEY = "backup-live-key-0123456789abcdef";

describe("hermes backup while the gateway writes", () => {
  it("restores a consistent state.db with whole turns, into a fresh home and over a configured one", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    llm.respondWith(() => reply().text("answered"));
    const gateway = await startGatewayProcess(h, {
      API_SERVER_ENABLED: "true",
      API_SERVER_KEY: KEY,
      API_SERVER_PORT: "0",
    });
    const url = /api_server (http:\/\/[^\s,]+)/.exec(gateway.line)?.[1] ?? "";
    const zip = join(mkdtempSync(join(tmpdir(), "hermes-live-backup-")), "live.zip");
    let stop = false;
    let sent = 0;
    const load = (async () => {
      while (!stop) {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
          body: JSON.stringify({ model: "hermes-agent", messages: [{ role: "user", content: `m${sent}` }] }),
        });
        expect(res.status).toBe(200);
        await res.json();
        sent++;
      }
    })();
    try {
      while (sent < 3) await new Promise((resolve) => setTimeout(resolve, 20));
      const backup = await runHermes(["backup", "-o", zip, "-l", "live"], h);
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toContain("Backup complete");
    } finally {
      stop = true;
      await load;
      await gateway.stop();
    }
    expect(sent).toBeGreaterThan(3);

    const fresh = tempHome();
    const restored = await runHermes(["import", zip], fresh);
    expect(restored.code, restored.stderr).toBe(0);
    const db = new Database(join(fresh.home, "state.db"), { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      const sessions = (db.prepare("select count(*) as n from sessions").get() as { n: number }).n;
      expect(sessions).toBeGreaterThanOrEqual(3);
      // Each session is a prefix of its turn: the question alone (the answer was still on its way;
      // every message is on disk before the next step) or the question and its answer, never an
      // answer without its question nor a message cut short.
      const roles = db
        .prepare(
          "select session_id as id, group_concat(role, ',') as roles from (select session_id, role from messages order by id) group by session_id",
        )
        .all() as Array<{ roles: string }>;
      expect(roles).toHaveLength(sessions);
      for (const row of roles) expect(["user", "user,assistant"]).toContain(row.roles);
      expect(roles.some((r) => r.roles === "user,assistant")).toBe(true);
    } finally {
      db.close();
    }
    const list = await runHermes(["sessions", "list"], fresh);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain("api_server");

    // Over a configured home: refused without -f (nothing touched), replaced with it.
    writeFileSync(join(fresh.home, "config.yaml"), "model:\n  default: mine\n");
    const refused = await runHermes(["import", zip], fresh);
    expect(refused.code).toBe(1);
    expect(readFileSync(join(fresh.home, "config.yaml"), "utf8")).toContain("mine");
    const forced = await runHermes(["import", "-f", zip], fresh);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(fresh.home, "config.yaml"), "utf8")).toContain(llm.url);
  }, 90_000);
});
