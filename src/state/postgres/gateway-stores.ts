/**
 * The gateway's stores in PostgreSQL (migration 300, `migrations/gateway.ts`): each implements
 * the same asynchronous contract as its file store, shared by every instance on the database.
 * `postgres-backend.ts` assembles them; nothing here loads `pg` (the database handle does).
 */
export { pgCommandAllowlist } from "./gateway-allowlist.js";
export { pgChatSessionIndex } from "./gateway-chat-index.js";
export { PgStoreInputError } from "./gateway-common.js";
export { type PgPairingOptions, pgPairingRecords } from "./gateway-pairing.js";
export { type PgResponseOptions, pgResponseRecords } from "./gateway-responses.js";
export { pgWebhookDeliveries, pgWebhookSubscriptions } from "./gateway-webhooks.js";
