/**
 * Webhook delivery dedupe: senders retry a delivery they think failed (GitHub, Svix, GitLab send
 * the same delivery id again), and a retry must not start a second agent run. The webhook server
 * remembers each `(route, delivery id)` it accepted for a while (default 1 h); a second claim
 * within that time is a duplicate. A delivery that failed before anything was done is released,
 * so the sender's retry is served.
 *
 * `memoryWebhookDeliveries` is what one process has always kept (a map, trimmed past 10 000 ids);
 * with several instances behind a load balancer the retry may reach another instance, so the
 * PostgreSQL backend keeps the ids in the database (`pgWebhookDeliveries`).
 */

/** Remembers accepted webhook deliveries (asynchronous: a database may stand behind it). */
export interface WebhookDeliveries {
  /** Records the delivery; false when it was claimed within the TTL before (a retry). `atMs` is the time in ms. */
  claim(route: string, deliveryId: string, atMs: number): Promise<boolean>;
  /** Forgets the delivery, so a retry of it is served again. */
  release(route: string, deliveryId: string): Promise<void>;
}

/** How long a delivery id is remembered by default (1 h). */
export const DEFAULT_DELIVERY_TTL_MS = 3_600_000;

export interface WebhookDeliveriesOptions {
  /** How long a delivery id is remembered (default 1 h). */
  ttlMs?: number;
  /** Ids kept in memory at most before the oldest are dropped (default 10 000). */
  maxEntries?: number;
}

/** The dedupe key of a delivery: route and id joined by NUL (neither holds one). */
export const deliveryKey = (route: string, deliveryId: string): string => `${route}\u0000${deliveryId}`;

/** Delivery ids kept in this process's memory, as the webhook server has kept them. */
export function memoryWebhookDeliveries(options: WebhookDeliveriesOptions = {}): WebhookDeliveries {
  const ttl = options.ttlMs ?? DEFAULT_DELIVERY_TTL_MS;
  const max = options.maxEntries ?? 10_000;
  const seen = new Map<string, number>();
  return {
    async claim(route, deliveryId, at) {
      const key = deliveryKey(route, deliveryId);
      const before = seen.get(key);
      if (before !== undefined && at - before < ttl) return false;
      seen.delete(key);
      seen.set(key, at);
      if (seen.size > max) {
        // Oldest first (insertion order): drop expired ids, and live ones down to half the cap.
        for (const [k, t] of seen) {
          if (seen.size <= max / 2 && t >= at - ttl) break;
          seen.delete(k);
        }
      }
      return true;
    },
    async release(route, deliveryId) {
      seen.delete(deliveryKey(route, deliveryId));
    },
  };
}
