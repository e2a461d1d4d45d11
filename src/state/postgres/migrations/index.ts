/**
 * Every PostgreSQL migration, by area. Each area owns a version range so areas can grow without
 * renumbering each other:
 *
 * | range | area |
 * |---|---|
 * | 100–199 | sessions and messages (session-store) |
 * | 200–299 | full-text search, insights, maintenance |
 * | 300–399 | gateway stores: chat index, pairing, allowlists, Responses, webhooks |
 * | 400–499 | cron jobs and runs, memory, skills and their usage |
 * | 500–599 | coordination: instances, leases, cron slots |
 */
import type { Migration } from "../migrate.js";
import { APPROVAL_MIGRATIONS } from "./approvals.js";
import { CHAT_FENCE_MIGRATIONS } from "./chat-fence.js";
import { COORDINATION_MIGRATIONS } from "./coordination.js";
import { FEED_DELIVERY_MIGRATIONS } from "./feed-delivery.js";
import { GATEWAY_MIGRATIONS } from "./gateway.js";
import { HOME_EXTRA_MIGRATIONS } from "./home-extras.js";
import { KNOWLEDGE_MIGRATIONS } from "./knowledge.js";
import { SEARCH_MIGRATIONS } from "./search.js";
import { SESSION_MIGRATIONS } from "./sessions.js";
import { SKILL_USAGE_MIGRATIONS } from "./skill-usage.js";
import { SKILL_WRITE_MIGRATIONS } from "./skill-writes.js";

export const MIGRATIONS: readonly Migration[] = [
  ...SESSION_MIGRATIONS,
  ...SEARCH_MIGRATIONS,
  ...GATEWAY_MIGRATIONS,
  ...KNOWLEDGE_MIGRATIONS,
  ...SKILL_USAGE_MIGRATIONS,
  ...SKILL_WRITE_MIGRATIONS,
  ...COORDINATION_MIGRATIONS,
  ...APPROVAL_MIGRATIONS,
  ...HOME_EXTRA_MIGRATIONS,
  ...CHAT_FENCE_MIGRATIONS,
  ...FEED_DELIVERY_MIGRATIONS,
];
