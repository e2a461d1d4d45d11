/**
 * The sessions routes over a real SQLite store: search pages within the store's best 100 hits
 * (`more` says when there is another page), the facets answer (totals, sources, models) is reused
 * for 30 s but renewed at once after a rename or delete, and bad paging input is a 400.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionRoutes } from "../../../src/dashboard/api-sessions.js";
import { ApiError, type ApiRequest, type Route } from "../../../src/dashboard/http.js";
import { openSessionStore, type SqliteSessionStore } from "../../../src/state/sqlite-store.js";

let dir: string;
let store: SqliteSessionStore;
let clock: number;
let routes: Route[];

function call(method: Route["method"], path: string, init: Partial<ApiRequest> = {}) {
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  return Promise.resolve(
    route.handler({ method, params: {}, query: new URLSearchParams(), body: {}, ...init }),
  ).then((r) => ("json" in r ? (r.json as Record<string, unknown>) : {}));
}

const list = (query: string) => call("GET", "/api/sessions", { query: new URLSearchParams(query) });
const facets = () => call("GET", "/api/sessions/facets");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hermes-api-sessions-"));
  store = openSessionStore(join(dir, "state.db"), { durability: "normal" });
  clock = 1_000_000;
  routes = sessionRoutes(store, () => clock);
  for (let i = 0; i < 30; i++) {
    const s = store.engine.createSession({
      source: i % 3 === 0 ? "telegram" : "cli",
      model: i % 2 ? "m/odd" : "m/even",
    });
    store.engine.appendMessages(s.id, [
      { role: "user", content: `Count heron number ${i} on the quay` },
      { role: "assistant", content: "Counted." },
    ]);
  }
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /api/sessions with q", () => {
  it("pages through the hits with offset and says when more follow", async () => {
    const first = await list("q=heron&limit=12");
    expect((first["hits"] as unknown[]).length).toBe(12);
    expect(first["more"]).toBe(true);
    const last = await list("q=heron&limit=12&offset=24");
    expect((last["hits"] as unknown[]).length).toBe(6);
    expect(last["more"]).toBe(false);
    const all = new Set(
      [
        ...((await list("q=heron&limit=12"))["hits"] as Array<{ messageId: number }>),
        ...((await list("q=heron&limit=12&offset=12"))["hits"] as Array<{ messageId: number }>),
        ...(last["hits"] as Array<{ messageId: number }>),
      ].map((h) => h.messageId),
    );
    expect(all.size).toBe(30);
    const beyond = await list("q=heron&offset=500");
    expect(beyond["hits"]).toEqual([]);
    expect(beyond["more"]).toBe(false);
  });

  it("narrows hits by model after the search and still pages them", async () => {
    const odd = await list("q=heron&model=m/odd&limit=10");
    const hits = odd["hits"] as Array<{ model: string }>;
    expect(hits.length).toBe(10);
    expect(hits.every((h) => h.model === "m/odd")).toBe(true);
    expect(odd["more"]).toBe(true);
    const rest = await list("q=heron&model=m/odd&limit=10&offset=10");
    expect((rest["hits"] as unknown[]).length).toBe(5);
    expect(rest["more"]).toBe(false);
  });

  it("refuses paging that is not a non-negative integer", async () => {
    await expect(list("q=heron&offset=-1")).rejects.toThrow(ApiError);
    await expect(list("limit=ten")).rejects.toThrow(/non-negative integer/);
  });
});

describe("GET /api/sessions with the before/skip cursor", () => {
  it("walks every session once, in the order offset paging gives, ties on startedAt included", async () => {
    for (let i = 0; i < 5; i++) store.engine.createSession({ source: "cli", startedAt: 1_000_000_000 });
    const byOffset: string[] = [];
    for (let offset = 0; ; offset += 2) {
      const page = await list(`limit=2&offset=${offset}`);
      byOffset.push(...(page["sessions"] as Array<{ id: string }>).map((r) => r.id));
      if (!page["more"]) break;
    }
    const byCursor: string[] = [];
    let cursor = "";
    let skip = 0;
    for (let guard = 0; guard < 40; guard++) {
      const page = await list(`limit=2${cursor ? `&before=${cursor}&skip=${skip}` : ""}`);
      const rows = page["sessions"] as Array<{ id: string; startedAt: number }>;
      byCursor.push(...rows.map((r) => r.id));
      if (!page["more"]) break;
      const at = String(rows[rows.length - 1]?.startedAt);
      const same = rows.filter((r) => String(r.startedAt) === at).length;
      skip = (cursor === at ? skip : 0) + same;
      cursor = at;
    }
    expect(byCursor).toHaveLength(35);
    expect(new Set(byCursor).size).toBe(35);
    expect(byCursor).toEqual(byOffset);
  });

  it("refuses a cursor that is not a time", async () => {
    await expect(list("before=yesterday")).rejects.toThrow(/"before" must be/);
    await expect(list("before=-5")).rejects.toThrow(ApiError);
  });
});

describe("GET /api/sessions/facets", () => {
  it("gives totals, sessions per source and the models in use", async () => {
    const f = await facets();
    expect(f["sessions"]).toBe(30);
    expect(f["messages"]).toBe(60);
    expect(f["bySource"]).toEqual({ cli: 20, telegram: 10 });
    expect(f["models"]).toEqual(["m/even", "m/odd"]);
  });

  it("reuses its answer for 30 s, and renews it at once after a rename or a delete", async () => {
    expect((await facets())["sessions"]).toBe(30);
    const extra = store.engine.createSession({ source: "discord", model: "m/new" });
    expect((await facets())["sessions"]).toBe(30);
    clock += 31_000;
    const renewed = await facets();
    expect(renewed["sessions"]).toBe(31);
    expect(renewed["models"]).toContain("m/new");

    await call("DELETE", "/api/sessions/:id", { params: { id: extra.id } });
    const afterDelete = await facets();
    expect(afterDelete["sessions"]).toBe(30);
    expect(afterDelete["bySource"]).not.toHaveProperty("discord");

    store.engine.createSession({ source: "discord" });
    const someone = (store.engine.listSessions({ limit: 1, offset: 5 })[0]?.id ?? "") as string;
    await call("PATCH", "/api/sessions/:id", { params: { id: someone }, body: { title: "Herons" } });
    expect((await facets())["sessions"]).toBe(31);
  });
});
