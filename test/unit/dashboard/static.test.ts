/**
 * The dashboard serves its built page outside `/api/`: from memory, with a strict CSP, only GET and
 * HEAD, no path beyond the files it read, and behind basic auth when basic auth is configured.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DashboardAuth } from "../../../src/dashboard/security.js";
import { hashPassword } from "../../../src/dashboard/security.js";
import { type DashboardServer, startDashboardServer } from "../../../src/dashboard/server.js";
import { loadWebAssets, PAGE_CSP, webAssetsDir } from "../../../src/dashboard/static.js";

function built(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-web-"));
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>page</title>");
  writeFileSync(join(dir, "app.js"), "console.log(1)");
  writeFileSync(join(dir, "app.css"), "body{}");
  writeFileSync(join(dir, "secret.env"), "KEY=1");
  mkdirSync(join(dir, "nested"));
  return dir;
}

function get(
  port: number,
  path: string,
  method = "GET",
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

let server: DashboardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(auth: DashboardAuth, dir: string | undefined): Promise<number> {
  server = await startDashboardServer({
    host: "127.0.0.1",
    port: 0,
    auth,
    routes: [],
    csrf: "c".repeat(43),
    assets: loadWebAssets(dir),
  });
  return server.port;
}

describe("the dashboard's page files", () => {
  it("serves index.html at / and the assets with types, the CSP and an ETag, and nothing else", async () => {
    const port = await serve({ kind: "token", token: "t".repeat(43), source: "per-start" }, built());
    const page = await get(port, "/?token=whatever");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(PAGE_CSP).not.toMatch(/unsafe|\*/);
    const js = await get(port, "/assets/app.js");
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const again = await get(port, "/assets/app.js", "GET", { "if-none-match": String(js.headers["etag"]) });
    expect(again.status).toBe(304);
    for (const path of [
      "/assets/secret.env",
      "/assets/../index.html",
      "/assets/%2e%2e/app.js",
      "/assets/nested",
      "/app.js",
      "/etc/passwd",
    ]) {
      expect((await get(port, path)).status, path).toBe(404);
    }
    expect((await get(port, "/", "POST")).status).toBe(405);
    expect((await get(port, "/", "HEAD")).body).toBe("");
  });

  it("needs basic auth for the page too when basic auth is configured (the browser asks once)", async () => {
    const auth: DashboardAuth = {
      kind: "basic",
      username: "ada",
      passwordHash: hashPassword("correct horse"),
    };
    const port = await serve(auth, built());
    const refused = await get(port, "/");
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toMatch(/^Basic /);
    const ok = await get(port, "/", "GET", {
      authorization: `Basic ${Buffer.from("ada:correct horse").toString("base64")}`,
    });
    expect(ok.status).toBe(200);
  });

  it("answers a page that says how to build it when the page was never built", async () => {
    const port = await serve({ kind: "token", token: "t".repeat(43), source: "per-start" }, undefined);
    const page = await get(port, "/");
    expect(page.status).toBe(200);
    expect(page.body).toContain("npm run build");
    expect((await get(port, "/assets/app.js")).status).toBe(404);
  });

  it("finds the built page from HERMES_DASHBOARD_ASSETS or the package's dist/dashboard", () => {
    const dir = built();
    expect(webAssetsDir({ HERMES_DASHBOARD_ASSETS: dir })).toBe(dir);
    expect(webAssetsDir({ HERMES_DASHBOARD_ASSETS: join(dir, "nested") })).toBeUndefined();
  });
});
