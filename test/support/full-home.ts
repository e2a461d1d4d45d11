/**
 * A file home with something in every part `hermes state migrate` moves, written through the
 * file stores a running Hermes uses (so the files are in their real formats): a Python-written
 * state.db, MEMORY.md and USER.md, a user skill with an executable script, a bundled skill (never
 * copied: every instance seeds its own), usage records, a cron job with a saved output, an
 * approved pairing and a pending one, a chat index entry, a webhook subscription, stored
 * Responses and a command allowlist entry.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ResponseStore } from "../../src/gateway/api-server/response-store.js";
import { CronStore } from "../../src/knowledge/cron/store.js";
import { MemoryStore } from "../../src/knowledge/memory/store.js";
import { recordSkillUsage } from "../../src/knowledge/skills/provenance.js";
import { configCommandAllowlist } from "../../src/state/gateway/command-allowlist.js";
import { PairingStore } from "../../src/state/gateway/pairing.js";
import { SessionIndex } from "../../src/state/gateway/session-index.js";
import { WebhookSubscriptionStore } from "../../src/state/gateway/webhook-subscriptions.js";
import { createPythonStateDb } from "./python-state-db.js";

export const SKILL_MD = `---
name: deploy-check
description: Checks a deploy before it goes out.
---

# Deploy check

Run scripts/check.sh before every deploy.
`;
export const SKILL_SCRIPT = "#!/bin/sh\necho deploy looks fine\n";
export const MEMORY_ENTRIES = ["The user deploys on Fridays.", "Staging lives at staging.example.test."];
export const USER_ENTRIES = ["Prefers short answers."];
export const CRON_OUTPUT = "# Nightly report\n\nAll green.\n";

export interface FullHome {
  sessionIds: string[];
  cronJobId: string;
  /** The pending pairing code (for tests that check it never shows). */
  pendingCode: string;
}

export async function createFullHome(home: string): Promise<FullHome> {
  const { sessionIds } = createPythonStateDb(join(home, "state.db"));

  const memory = MemoryStore.forHome(home);
  for (const e of MEMORY_ENTRIES) await memory.add("memory", e);
  for (const e of USER_ENTRIES) await memory.add("user", e);

  const skill = join(home, "skills", "devops", "deploy-check");
  mkdirSync(join(skill, "scripts"), { recursive: true });
  writeFileSync(join(skill, "SKILL.md"), SKILL_MD);
  writeFileSync(join(skill, "scripts", "check.sh"), SKILL_SCRIPT);
  chmodSync(join(skill, "scripts", "check.sh"), 0o755);
  mkdirSync(join(home, "skills", "seeded-helper"), { recursive: true });
  writeFileSync(
    join(home, "skills", "seeded-helper", "SKILL.md"),
    "---\nname: seeded-helper\ndescription: A bundled skill.\n---\n\nBundled.\n",
  );
  writeFileSync(join(home, "skills", ".bundled_manifest"), "seeded-helper:0123abcd\n");
  await recordSkillUsage(home, "deploy-check", "create");
  await recordSkillUsage(home, "deploy-check", "use");

  const cron = new CronStore({ home, timezone: "UTC" });
  const job = await cron.create({ prompt: "Summarise the night", schedule: "every 1d", name: "nightly" });
  await cron.saveOutput(job.id, CRON_OUTPUT, Date.parse("2026-11-26T06:00:00Z"));

  const pairing = new PairingStore({ home });
  const approved = await pairing.requestCode("telegram", { id: "7", name: "alice" });
  if (approved.status !== "created") throw new Error(approved.status);
  await pairing.approve("telegram", approved.code);
  const pending = await pairing.requestCode("telegram", { id: "8", name: "bob" });
  if (pending.status !== "created") throw new Error(pending.status);

  new SessionIndex(home).set(
    "agent:main:telegram:dm:7",
    sessionIds[2] as string,
    { platform: "telegram", chatType: "dm", chatId: "7", userId: "7" },
    new Date("2026-11-26T07:00:00Z"),
  );
  await new WebhookSubscriptionStore({ home }).save("github-push", {
    secret: "whsec-do-not-print",
    prompt: "A push: {ref}",
  });
  const responses = new ResponseStore(home, 100);
  responses.put("resp_1", {
    sessionId: sessionIds[0] as string,
    response: { id: "resp_1" },
    conversationHistory: [],
    instructions: null,
  });
  responses.setConversation("main", "resp_1");
  responses.close();
  await configCommandAllowlist(home).add("recursive_delete");
  return { sessionIds, cronJobId: job.id, pendingCode: pending.code };
}
