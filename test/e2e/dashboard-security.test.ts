/**
 * `hermes dashboard` under attack, through the built CLI and raw HTTP: no token, a wrong token, a
 * foreign Origin, a missing CSRF token, a DNS-rebinding Host header, path traversal in export
 * names, oversized bodies, and binds that need auth. Each refused change is checked on disk.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CronStore } from "../../src/knowledge/cron/store.js";
import { PairingStore } from "../../src/state/gateway/pairing.js";
import { runHermes, tempHome } from "../support/cli.js";
import { dashboardClient, http, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";

let h: { home: string; cwd: string };
let dash: RunningDashboard;
let api: ReturnType<typeof dashboardClient>;
let code: string;

const pairingApproved = () => new PairingStore({ home: h.home }).isApproved("telegram", "9001");
const jobCount = () => new CronStore({ home: h.home }).list().length;

beforeAll(async () => {
  h = tempHome("model:\n  default: fake-model\n");
  const asked = await new PairingStore({ home: h.home }).requestCode("telegram", { id: "9001", name: "eve" });
  if (asked.status !== "created") throw new Error("seeding failed");
  code = asked.code;
  dash = await startDashboardProcess(h);
  api = dashboardClient(dash, dash.token ?? "");
}, 30_000);

afterAll(async () => {
  await dash?.stop();
});

describe("dashboard authentication", () => {
  it("refuses every /api/ request without the token with 401, reads included, whatever the Origin", async () => {
    for (const path of ["/api/", "/api/sessions", "/api/config", "/api/csrf", "/api/logs"]) {
      const bare = await http(dash.port, "GET", path);
      expect(bare.status, path).toBe(401);
      const sameOrigin = await http(dash.port, "GET", path, {
        headers: { origin: `http://127.0.0.1:${dash.port}` },
      });
      expect(sameOrigin.status, path).toBe(401);
    }
    const post = await http(dash.port, "POST", "/api/pairing/approve", {
      body: JSON.stringify({ platform: "telegram", code }),
    });
    expect(post.status).toBe(401);
    expect(pairingApproved()).toBe(false);
  });

  it("refuses a wrong token, in the header or the query, and one of another length", async () => {
    const wrong = `${dash.token?.slice(0, -1)}${dash.token?.endsWith("A") ? "B" : "A"}`;
    expect(
      (await http(dash.port, "GET", "/api/sessions", { headers: { authorization: `Bearer ${wrong}` } }))
        .status,
    ).toBe(401);
    expect((await http(dash.port, "GET", `/api/sessions?token=${wrong}`)).status).toBe(401);
    expect((await http(dash.port, "GET", "/api/sessions?token=x")).status).toBe(401);
    expect(
      (
        await http(dash.port, "GET", "/api/sessions", {
          headers: { authorization: `Basic ${Buffer.from(`u:${dash.token}`).toString("base64")}` },
        })
      ).status,
    ).toBe(401);
    expect((await http(dash.port, "GET", `/api/sessions?token=${dash.token}`)).status).toBe(200);
  });

  it("serves only its page outside /api/ and refuses a Host that is not the dashboard (DNS rebinding)", async () => {
    const auth = { authorization: `Bearer ${dash.token}` };
    const page = await http(dash.port, "GET", "/");
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(page.text).not.toContain(dash.token ?? "no token");
    for (const path of ["/etc/passwd", "/assets/../config.yaml", "/.env", "/state.db"]) {
      expect((await http(dash.port, "GET", path, { headers: auth })).status, path).toBe(404);
    }
    const reboundPage = await http(dash.port, "GET", "/", { headers: { host: `evil.example:${dash.port}` } });
    expect(reboundPage.status).toBe(421);
    const rebound = await http(dash.port, "GET", "/api/config", {
      headers: { ...auth, host: `evil.example:${dash.port}` },
    });
    expect(rebound.status).toBe(421);
    expect(rebound.text).not.toContain("model");
    const otherPort = await http(dash.port, "GET", "/api/sessions", {
      headers: { ...auth, host: "127.0.0.1:1" },
    });
    expect(otherPort.status).toBe(421);
    const localhost = await http(dash.port, "GET", "/api/sessions", {
      headers: { ...auth, host: `localhost:${dash.port}` },
    });
    expect(localhost.status).toBe(200);
  });
});

describe("dashboard state changes", () => {
  it("a request without the CSRF token, or with a wrong one, changes nothing", async () => {
    const auth = { authorization: `Bearer ${dash.token}`, origin: `http://127.0.0.1:${dash.port}` };
    const body = JSON.stringify({ platform: "telegram", code });
    const missing = await http(dash.port, "POST", "/api/pairing/approve", { headers: auth, body });
    expect(missing.status).toBe(403);
    expect(missing.text).toContain("CSRF");
    const wrong = await http(dash.port, "POST", "/api/pairing/approve", {
      headers: { ...auth, "x-csrf-token": "nope" },
      body,
    });
    expect(wrong.status).toBe(403);
    const cron = await http(dash.port, "POST", "/api/cron", {
      headers: auth,
      body: JSON.stringify({ schedule: "every 1h", prompt: "hello" }),
    });
    expect(cron.status).toBe(403);
    expect(pairingApproved()).toBe(false);
    expect(jobCount()).toBe(0);
  });

  it("a request from a foreign Origin or a cross-site fetch changes nothing, even with token and CSRF", async () => {
    const csrf = await api.csrf();
    const headers = { authorization: `Bearer ${dash.token}`, "x-csrf-token": csrf };
    const body = JSON.stringify({ platform: "telegram", code });
    for (const origin of [
      "http://evil.example",
      `http://127.0.0.1:${dash.port + 1}`,
      "null",
      `https://127.0.0.1:${dash.port}`,
    ]) {
      const r = await http(dash.port, "POST", "/api/pairing/approve", {
        headers: { ...headers, origin },
        body,
      });
      expect(r.status, origin).toBe(403);
    }
    const crossSite = await http(dash.port, "POST", "/api/pairing/approve", {
      headers: { ...headers, "sec-fetch-site": "cross-site" },
      body,
    });
    expect(crossSite.status).toBe(403);
    const form = await http(dash.port, "POST", "/api/pairing/approve", {
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: `platform=telegram&code=${code}`,
    });
    expect(form.status).toBe(415);
    const put = await http(dash.port, "PUT", "/api/config", {
      headers: { ...headers, origin: "http://evil.example" },
      body: JSON.stringify({ key: "agent.max_turns", value: "1" }),
    });
    expect(put.status).toBe(403);
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).not.toContain("max_turns");
    expect(pairingApproved()).toBe(false);
    // The same request from the dashboard's own origin goes through.
    const ok = await api.send("POST", "/api/pairing/approve", { platform: "telegram", code });
    expect(ok.status, ok.text).toBe(200);
    expect(pairingApproved()).toBe(true);
  });

  it("refuses path traversal in session routes and export names", async () => {
    writeFileSync(join(h.home, "secret.txt"), "TOP-SECRET-CONTENT");
    for (const path of [
      "/api/sessions/..%2F..%2Fsecret.txt/export",
      "/api/sessions/%2e%2e/export",
      "/api/sessions/../secret.txt",
      "/api/sessions/..%5c..%5csecret.txt/export",
      "/api/sessions/%00/export",
      "/api/sessions/a%2Fb/export",
      "/api/sessions/%ZZ/export",
    ]) {
      const r = await api.get(path);
      expect([400, 404], path).toContain(r.status);
      expect(r.text, path).not.toContain("TOP-SECRET");
      expect(r.headers["content-disposition"], path).toBeUndefined();
    }
    const memory = await api.send("POST", "/api/memory/..%2F..%2Fsecret.txt", {
      action: "add",
      content: "x",
    });
    expect(memory.status).toBe(400);
    expect(readFileSync(join(h.home, "secret.txt"), "utf8")).toBe("TOP-SECRET-CONTENT");
  });

  it("answers 413 to bodies over 1 MiB, declared or streamed, and keeps serving", async () => {
    const csrf = await api.csrf();
    const headers = { authorization: `Bearer ${dash.token}`, "x-csrf-token": csrf };
    const huge = JSON.stringify({ action: "add", content: "x".repeat(2 * 1024 * 1024) });
    const declared = await http(dash.port, "POST", "/api/memory/memory", { headers, body: huge });
    expect(declared.status).toBe(413);
    const streamed = await http(dash.port, "POST", "/api/memory/memory", {
      headers: { ...headers, "content-type": "application/json", "transfer-encoding": "chunked" },
      chunks: Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x61)),
    });
    expect(streamed.status).toBe(413);
    const notJson = await http(dash.port, "POST", "/api/cron", { headers, body: "{not json" });
    expect(notJson.status).toBe(400);
    expect(jobCount()).toBe(0);
    expect((await api.get("/api/sessions")).status).toBe(200);
  });

  it("answers 405 to a wrong method and 404 to unknown routes", async () => {
    const csrf = await api.csrf();
    const r = await http(dash.port, "DELETE", "/api/config", {
      headers: { authorization: `Bearer ${dash.token}`, "x-csrf-token": csrf },
    });
    expect(r.status).toBe(405);
    expect((await api.get("/api/nope")).status).toBe(404);
  });
});

describe("dashboard binds", () => {
  it("refuses a non-loopback bind without dashboard.auth, and a weak token", async () => {
    const other = tempHome();
    const refused = await runHermes(["dashboard", "--no-open", "--host", "0.0.0.0", "--port", "0"], other);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("without dashboard.auth");
    expect(refused.stdout).toBe("");
    writeFileSync(join(other.home, "config.yaml"), "dashboard:\n  auth:\n    token: short\n");
    const weak = await runHermes(["dashboard", "--no-open", "--host", "0.0.0.0", "--port", "0"], other);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain("at least 16");
  });

  it("binds elsewhere with a configured token, never printing it", async () => {
    const other = tempHome("dashboard:\n  auth:\n    token: configured-token-0123456789\n");
    const d = await startDashboardProcess(other, ["--host", "0.0.0.0"]);
    try {
      expect(d.token).toBeNull();
      expect(d.proc.output().stdout).not.toContain("configured-token");
      const host = { host: `0.0.0.0:${d.port}` };
      expect((await http(d.port, "GET", "/api/sessions", { headers: host })).status).toBe(401);
      const ok = await http(d.port, "GET", "/api/config", {
        headers: { ...host, authorization: "Bearer configured-token-0123456789" },
      });
      expect(ok.status).toBe(200);
      expect(ok.text).not.toContain("configured-token-0123456789");
    } finally {
      await d.stop();
    }
  });

  it("takes basic auth with a scrypt hash from --hash-password", async () => {
    const other = tempHome();
    const hashed = await runHermes(["dashboard", "--hash-password"], {
      ...other,
      input: "correct horse battery\n",
    });
    expect(hashed.code, hashed.stderr).toBe(0);
    const hash = hashed.stdout.trim();
    expect(hash).toMatch(/^scrypt\$16384\$[0-9a-f]{32}\$[0-9a-f]{64}$/);
    writeFileSync(
      join(other.home, "config.yaml"),
      `dashboard:\n  auth:\n    username: ada\n    password_hash: "${hash}"\n`,
    );
    const d = await startDashboardProcess(other);
    try {
      const basic = (user: string, pw: string) => ({
        authorization: `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`,
      });
      const noAuth = await http(d.port, "GET", "/api/sessions");
      expect(noAuth.status).toBe(401);
      expect(noAuth.headers["www-authenticate"]).toContain("Basic");
      expect((await http(d.port, "GET", "/api/sessions", { headers: basic("ada", "wrong") })).status).toBe(
        401,
      );
      expect(
        (await http(d.port, "GET", "/api/sessions", { headers: basic("bob", "correct horse battery") }))
          .status,
      ).toBe(401);
      expect(
        (await http(d.port, "GET", "/api/sessions", { headers: basic("ada", "correct horse battery") }))
          .status,
      ).toBe(200);
      const config = await http(d.port, "GET", "/api/config", {
        headers: basic("ada", "correct horse battery"),
      });
      expect(config.text).not.toContain(hash.split("$")[3] ?? "unreachable");
      // A guesser: after 10 failures in a minute the address gets 429 without a hash being run,
      // while the browser that already signed in keeps working.
      const answers: number[] = [];
      for (let i = 0; i < 10; i++) {
        answers.push((await http(d.port, "GET", "/api/", { headers: basic("ada", `guess-${i}`) })).status);
      }
      expect(answers.slice(0, 8)).toEqual(Array(8).fill(401));
      expect(answers.slice(-1)).toEqual([429]);
      const throttled = await http(d.port, "GET", "/api/", { headers: basic("ada", "guess-more") });
      expect(throttled.status).toBe(429);
      expect(throttled.headers["retry-after"]).toBe("60");
      expect(
        (await http(d.port, "GET", "/api/sessions", { headers: basic("ada", "correct horse battery") }))
          .status,
      ).toBe(200);
    } finally {
      await d.stop();
    }
  });
});
