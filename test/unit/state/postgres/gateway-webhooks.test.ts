/**
 * Webhook subscriptions (`webhook_subscriptions.json` vs PostgreSQL) and delivery dedupe (the
 * webhook server's memory vs PostgreSQL): the same cases against both, several instances on one
 * storage, and hostile names, ids and payloads.
 */
import { describe, expect, it } from "vitest";
import {
  memoryWebhookDeliveries,
  type WebhookDeliveries,
} from "../../../../src/state/gateway/webhook-deliveries.js";
import {
  WebhookSubscriptionStore,
  type WebhookSubscriptions,
  WebhookSubscriptionsError,
  webhookSubscriptions,
} from "../../../../src/state/gateway/webhook-subscriptions.js";
import {
  PgStoreInputError,
  pgWebhookDeliveries,
  pgWebhookSubscriptions,
} from "../../../../src/state/postgres/gateway-stores.js";
import { BACKENDS, type Storage, useStorages } from "./gateway-harness.js";

const storage = useStorages();

async function subs(s: Storage): Promise<WebhookSubscriptions> {
  return s.kind === "file"
    ? webhookSubscriptions(new WebhookSubscriptionStore({ home: s.home }))
    : pgWebhookSubscriptions(await s.pool());
}

describe.each(BACKENDS)("webhook subscriptions (%s)", (kind) => {
  it("saves, merges, lists in the file's order and removes routes", async () => {
    const s = await storage(kind);
    const store = await subs(s);
    expect((await store.list()).size).toBe(0);
    expect(await store.get("gh")).toBeUndefined();
    expect(await store.save("gh", { prompt: "{action}", secret: "s3", toolsets: ["web"] })).toEqual({
      created: true,
      route: { prompt: "{action}", secret: "s3", toolsets: ["web"] },
    });
    const updated = await store.save("gh", { prompt: "new", description: undefined, deliver: "log" });
    expect(updated).toEqual({
      created: false,
      route: { prompt: "new", secret: "s3", toolsets: ["web"], deliver: "log" },
    });
    for (const name of ["10", "zeta", "2"]) await store.save(name, { secret: name });
    await store.save("gh", { secret: "s4" });
    expect([...(await store.list()).keys()]).toEqual(["2", "10", "gh", "zeta"]);
    expect(await (await subs(s)).get("gh")).toMatchObject({ secret: "s4", prompt: "new" });
    expect(await store.remove("gh")).toBe(true);
    expect(await store.remove("gh")).toBe(false);
    expect([...(await store.list()).keys()]).toEqual(["2", "10", "zeta"]);
  });

  it("another instance sees saves, and concurrent saves from two instances all land merged", async () => {
    const s = await storage(kind);
    const [a, b] = [await subs(s), await subs(s)];
    await a.save("shared", { secret: "x" });
    expect(await b.get("shared")).toEqual({ secret: "x" });
    await Promise.all([
      a.save("shared", { prompt: "from a" }),
      b.save("shared", { deliver: "telegram" }),
      ...Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).save(`r${i}`, { secret: `k${i}` })),
    ]);
    expect(await a.get("shared")).toEqual({ secret: "x", prompt: "from a", deliver: "telegram" });
    expect((await b.list()).size).toBe(13);
  });

  it("keeps big and hostile payloads whole: 1 MB prompt, NUL and quotes inside values, object-like names", async () => {
    const store = await subs(await storage(kind));
    const route = {
      prompt: `${"p".repeat(1_000_000)}\u0000'"\\`,
      secret: "'; DROP TABLE gateway_webhook_subscriptions; --",
      events: ["push", "🚀"],
      deliver_extra: { chat_id: "{x.y}", nested: { deep: [1, null, true] } },
    };
    await store.save("big", route);
    expect(await store.get("big")).toEqual(route);
    await store.save("__proto__", { secret: "p" });
    await store.save("constructor", { secret: "c" });
    expect(await store.get("__proto__")).toEqual({ secret: "p" });
    expect([...(await store.list()).keys()]).toEqual(["big", "__proto__", "constructor"]);
    expect(await store.get("toString")).toBeUndefined();
  });
});

async function deliveries(s: Storage, ttlMs = 60_000): Promise<WebhookDeliveries> {
  return s.kind === "file"
    ? memoryWebhookDeliveries({ ttlMs })
    : pgWebhookDeliveries(await s.pool(), { ttlMs });
}

const T = 1_800_000_000_000;

describe.each(BACKENDS)("webhook delivery dedupe (%s)", (kind) => {
  it("a retry within the TTL is a duplicate; after it, or once released, it is served", async () => {
    const d = await deliveries(await storage(kind));
    expect(await d.claim("gh", "abc", T)).toBe(true);
    expect(await d.claim("gh", "abc", T + 59_999)).toBe(false);
    expect(await d.claim("other", "abc", T + 1)).toBe(true);
    expect(await d.claim("gh", "abc", T + 60_000)).toBe(true);
    expect(await d.claim("gh", "abc", T + 60_001)).toBe(false);
    await d.release("gh", "abc");
    expect(await d.claim("gh", "abc", T + 60_002)).toBe(true);
    await d.release("gh", "never-seen");
  });

  it("takes long and odd ids as plain ids", async () => {
    const d = await deliveries(await storage(kind));
    const ids = ["x".repeat(10_000), "'; DELETE FROM gateway_webhook_deliveries; --", "a\u0001b", "🚀"];
    for (const id of ids) expect(await d.claim("gh", id, T)).toBe(true);
    for (const id of ids) expect(await d.claim("gh", id, T + 1)).toBe(false);
    // The route and the id are kept apart: ("a", "b:c") is not ("a:b", "c").
    expect(await d.claim("a", "b:c", T)).toBe(true);
    expect(await d.claim("a:b", "c", T)).toBe(true);
  });
});

describe.skipIf(!BACKENDS.includes("postgres"))("webhook delivery dedupe across instances (postgres)", () => {
  it("a retry reaching another instance is a duplicate; of many racing claims exactly one wins", async () => {
    const s = await storage("postgres");
    const [a, b] = [await deliveries(s), await deliveries(s)];
    expect(await a.claim("gh", "d1", T)).toBe(true);
    expect(await b.claim("gh", "d1", T + 10)).toBe(false);
    const racing = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claim("gh", "d2", T)),
    );
    expect(racing.filter(Boolean)).toHaveLength(1);
  });

  it("deletes ids past the TTL and refuses a NUL in an id", async () => {
    const s = await storage("postgres");
    const db = await s.pool();
    const d = pgWebhookDeliveries(db, { ttlMs: 60_000 });
    await d.claim("gh", "old", T);
    await d.claim("gh", "new", T + 30_000);
    expect(await d.prune(T + 60_000)).toBe(1);
    expect(
      (await db.query("SELECT delivery_id FROM gateway_webhook_deliveries")).map((r) => r["delivery_id"]),
    ).toEqual(["new"]);
    // Claims prune by themselves now and then (at most once a minute).
    await d.claim("gh", "later", T + 200_000);
    expect(
      (await db.query("SELECT delivery_id FROM gateway_webhook_deliveries")).map((r) => r["delivery_id"]),
    ).toEqual(["later"]);
    await expect(d.claim("gh", "a\u0000b", T)).rejects.toThrow(PgStoreInputError);
  });

  it("refuses a NUL in a route name with the subscriptions' own error", async () => {
    const store = await subs(await storage("postgres"));
    await expect(store.save("a\u0000b", { secret: "x" })).rejects.toThrow(WebhookSubscriptionsError);
    expect((await store.list()).size).toBe(0);
  });

  it("skips a damaged subscription row in listings, and a save replaces it", async () => {
    const s = await storage("postgres");
    const store = await subs(s);
    await store.save("gh", { secret: "a" });
    await store.save("ok", { secret: "b" });
    const db = await s.pool();
    await db.query("UPDATE gateway_webhook_subscriptions SET route = 'not json' WHERE name = 'gh'");
    expect([...(await store.list()).keys()]).toEqual(["ok"]);
    expect(await store.get("gh")).toBeUndefined();
    expect(await store.save("gh", { secret: "c" })).toEqual({ created: true, route: { secret: "c" } });
    expect([...(await store.list()).keys()]).toEqual(["gh", "ok"]);
  });
});
