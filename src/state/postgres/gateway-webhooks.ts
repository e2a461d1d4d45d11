/**
 * Webhook subscriptions and delivery dedupe in PostgreSQL, shared by every instance.
 *
 * Subscriptions keep each route as the JSON object `webhook_subscriptions.json` holds under its
 * name (keys this code does not know survive a save); a save locks the name's row, so two
 * instances saving one route merge their fields one after the other. Listing order is the file's.
 *
 * Delivery ids: a claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE` that succeeds only for a
 * new id or one older than the TTL, so a sender's retry that reaches another instance is still a
 * duplicate. Ids past the TTL are deleted now and then (at most once a minute per store).
 */
import {
  DEFAULT_DELIVERY_TTL_MS,
  type WebhookDeliveries,
  type WebhookDeliveriesOptions,
} from "../gateway/webhook-deliveries.js";
import {
  type WebhookRoute,
  type WebhookSubscriptions,
  WebhookSubscriptionsError,
} from "../gateway/webhook-subscriptions.js";
import type { PgDatabase } from "./database.js";
import { keyDigest, objectKeyOrder, parseObject, storableText } from "./gateway-common.js";

function routeName(name: string): string {
  try {
    return storableText("The route name", name);
  } catch (error) {
    throw new WebhookSubscriptionsError((error as Error).message);
  }
}

/** Webhook subscriptions of every instance sharing `db` (migration 300). */
export function pgWebhookSubscriptions(db: PgDatabase): WebhookSubscriptions {
  return {
    async list() {
      const rows = await db.query<{ name: string; route: string }>(
        "SELECT name, route FROM gateway_webhook_subscriptions ORDER BY seq",
      );
      const routes = new Map<string, WebhookRoute>();
      for (const row of objectKeyOrder(rows, (r) => r.name)) {
        const route = parseObject(row.route);
        if (route) routes.set(row.name, route as WebhookRoute);
      }
      return routes;
    },
    async get(name) {
      const rows = await db.query<{ route: string }>(
        "SELECT route FROM gateway_webhook_subscriptions WHERE name_digest = $1",
        [keyDigest(name)],
      );
      return rows[0] ? (parseObject(rows[0].route) as WebhookRoute | undefined) : undefined;
    },
    async save(name: string, route: WebhookRoute) {
      const digest = keyDigest(routeName(name));
      return db.tx(async (c) => {
        // Create the row if absent (a concurrent creator waits here), then lock it and merge.
        await c.query(
          `INSERT INTO gateway_webhook_subscriptions (name_digest, name, route) VALUES ($1, $2, '')
           ON CONFLICT (name_digest) DO NOTHING`,
          [digest, name],
        );
        const [row] = await c.query<{ route: string }>(
          "SELECT route FROM gateway_webhook_subscriptions WHERE name_digest = $1 FOR UPDATE",
          [digest],
        );
        const existing = row && row.route !== "" ? parseObject(row.route) : undefined;
        const merged: WebhookRoute = { ...(existing ?? {}), ...route };
        for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
        const text = JSON.stringify(merged);
        await c.query("UPDATE gateway_webhook_subscriptions SET route = $2 WHERE name_digest = $1", [
          digest,
          text,
        ]);
        return { created: existing === undefined, route: JSON.parse(text) as WebhookRoute };
      });
    },
    async remove(name) {
      const rows = await db.query(
        "DELETE FROM gateway_webhook_subscriptions WHERE name_digest = $1 RETURNING 1 AS x",
        [keyDigest(name)],
      );
      return rows.length > 0;
    },
  };
}

/** Delivery dedupe across every instance sharing `db`, with `prune` for ids past the TTL. */
export function pgWebhookDeliveries(
  db: PgDatabase,
  options: Pick<WebhookDeliveriesOptions, "ttlMs"> = {},
): WebhookDeliveries & { prune(atMs: number): Promise<number> } {
  const ttl = options.ttlMs ?? DEFAULT_DELIVERY_TTL_MS;
  let lastPrune = Number.NEGATIVE_INFINITY;
  async function prune(at: number): Promise<number> {
    lastPrune = at;
    const rows = await db.query(
      "DELETE FROM gateway_webhook_deliveries WHERE seen_ms <= $1::float8 RETURNING 1 AS x",
      [at - ttl],
    );
    return rows.length;
  }
  return {
    prune,
    async claim(route, deliveryId, at) {
      storableText("The route name", route);
      storableText("The delivery id", deliveryId);
      if (!Number.isFinite(at)) throw new TypeError("A delivery claim needs a finite time in ms");
      if (at - lastPrune >= 60_000) await prune(at);
      const rows = await db.query(
        `INSERT INTO gateway_webhook_deliveries (key_digest, route, delivery_id, seen_ms)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_digest) DO UPDATE SET seen_ms = EXCLUDED.seen_ms
           WHERE gateway_webhook_deliveries.seen_ms <= EXCLUDED.seen_ms - $5::float8
         RETURNING 1 AS x`,
        [keyDigest(route, deliveryId), route, deliveryId, at, ttl],
      );
      return rows.length > 0;
    },
    async release(route, deliveryId) {
      await db.query("DELETE FROM gateway_webhook_deliveries WHERE key_digest = $1", [
        keyDigest(route, deliveryId),
      ]);
    },
  };
}
