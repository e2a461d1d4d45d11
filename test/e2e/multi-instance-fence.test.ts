/**
 * Fenced chat claims between two real `hermes gateway run` processes on one PostgreSQL (issue 27,
 * "one chat, one turn"): the instance running a chat's turn is frozen with SIGSTOP for longer than
 * the instance TTL, the other instance takes the chat over and answers a new message, then the
 * first is woken with SIGCONT. Its turn must stop there: nothing more in the chat, nothing more in
 * the session, no further model call, and its running tool killed.
 *
 * Two attacks on the fence:
 * - a tool that keeps running across the stall (the frozen process's child is not frozen): it is
 *   killed as soon as the woken instance learns it lost the chat, before it finishes;
 * - a model answer that arrives while the instance is frozen, so the first callback at wake-up is
 *   the stream itself, ahead of any timer: its text is neither sent nor stored.
 *
 * WhatsApp Cloud is webhook-style, so the test plays the load balancer and picks the instance each
 * message goes to.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../src/state/postgres/database.js";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeWhatsAppCloud, startFakeWhatsAppCloud } from "../support/fake-whatsapp-cloud.js";
import { type GatewayCluster, startCluster, waitUntil } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

let pg: PostgresFixture;
let llm: FakeLlm;
let wa: FakeWhatsAppCloud;
let cluster: GatewayCluster;
let db: PgDatabase;
const webhooks: string[] = [];
const work = mkdtempSync(join(tmpdir(), "hermes-fence-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

type Wire = { role: string; content?: unknown; tool_calls?: unknown };
const messagesOf = (request: RecordedRequest) => (request.body as { messages?: Wire[] }).messages ?? [];
const textOf = (m: Wire) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""));

/** The slow tool of the first attack: marks its start, then writes `late-<tag>` unless killed first. */
const slowCommand = (tag: string) =>
  `echo started > ${join(work, `started-${tag}`)}; ${sleeper(tag)}; echo late > ${join(work, `late-${tag}`)}`;
/** A sleep of about 25 s whose command line is unique to `tag` (found with ps). */
const sleeper = (tag: string) => `sleep 25.${[...tag].map((c) => c.charCodeAt(0) % 10).join("")}`;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  wa = await startFakeWhatsAppCloud();
  llm.respondWith((request) => {
    const messages = messagesOf(request);
    const users = messages.filter((m) => m.role === "user").map(textOf);
    const newest = users.at(-1) ?? "";
    const last = messages.at(-1);
    // The newest tag: a user message merged with an earlier one (two in a row) names both.
    const tag = [...newest.matchAll(/(job|slow|next|hello)-([a-z0-9]+)/g)].at(-1);
    if (!tag) return reply().text("ok");
    const [word, name] = [tag[1]!, tag[2]!];
    // The first attack: a slow tool, then (if the fenced turn went on) a final answer.
    if (word === "job" && last?.role === "tool") return reply().text(`answer job-${name} after the tool`);
    if (word === "job") return reply().toolCall("terminal", { command: slowCommand(name) });
    // The second attack: the answer comes while its instance is frozen.
    if (word === "slow") return reply().text(`answer slow-${name}`).delay(3_000);
    return reply().text(`answer ${word}-${name}`);
  });
  const ports: number[] = [];
  const databaseUrl = await pg.createDatabase();
  cluster = await startCluster(
    {
      databaseUrl,
      llmUrl: llm.url,
      apiServer: false,
      config: 'display:\n  tool_progress: "off"\n  busy_input_mode: queue\napprovals:\n  mode: "off"\n',
      env: {
        WHATSAPP_CLOUD_ACCESS_TOKEN: wa.accessToken,
        WHATSAPP_CLOUD_PHONE_NUMBER_ID: wa.phoneNumberId,
        WHATSAPP_CLOUD_APP_SECRET: wa.appSecret,
        WHATSAPP_CLOUD_VERIFY_TOKEN: "verify-fence",
        WHATSAPP_CLOUD_GRAPH_URL: wa.url,
        WHATSAPP_CLOUD_ALLOW_ALL_USERS: "true",
      },
      perInstance: async (index) => {
        ports[index] = await freePort();
        return { WHATSAPP_CLOUD_WEBHOOK_PORT: String(ports[index]) };
      },
      ready: /^Gateway running.*whatsapp_cloud/,
    },
    2,
  );
  for (const port of ports) webhooks.push(`http://127.0.0.1:${port}/whatsapp/webhook`);
  db = await openPgDatabase(databaseUrl, { max: 2 });
}, 120_000);

afterAll(async () => {
  for (const i of cluster?.instances ?? []) if (i.alive()) process.kill(i.pid, "SIGCONT");
  await cluster?.close();
  await db?.close().catch(() => undefined);
  await wa?.stop();
  await llm?.close();
  await pg?.dispose();
  rmSync(work, { recursive: true, force: true });
}, 60_000);

/** The stored messages of the session holding `marker` (a user's token), in order. */
async function sessionWith(marker: string): Promise<Array<{ role: string; content: string | null }>> {
  const rows = await db.query<{ session_id: string }>(
    "SELECT session_id FROM messages WHERE content LIKE $1 ORDER BY id LIMIT 1",
    [`%${marker}%`],
  );
  if (!rows[0]) return [];
  return db.query<{ role: string; content: string | null }>(
    "SELECT role, content FROM messages WHERE session_id = $1 ORDER BY id",
    [rows[0].session_id],
  );
}

const to = (phone: string) => wa.sent.filter((m) => m.to === phone && m.type === "text");

function pidsRunning(needle: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(needle) && !line.includes("ps -eo"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe.skipIf(postgresSkipReason)("a chat's holder frozen past the TTL, then woken", () => {
  it("kills the tool that ran across the stall, and sends, stores and asks nothing more", async () => {
    const [a] = cluster.instances;
    const phone = "15550000101";
    const name = Math.random().toString(36).slice(2, 8);
    expect(
      (await wa.deliver(webhooks[0]!, phone, { type: "text", text: { body: `job-${name}` } })).status,
    ).toBe(200);
    await waitUntil(() => existsSync(join(work, `started-${name}`)), "the slow tool to start on a", 30_000);
    expect(pidsRunning(sleeper(name)).length).toBeGreaterThan(0);
    process.kill(a!.pid, "SIGSTOP");
    const next = Math.random().toString(36).slice(2, 8);
    await wa.deliver(webhooks[1]!, phone, { type: "text", text: { body: `hello-${next}` } });
    await waitUntil(
      () => to(phone).some((m) => m.text.includes(`answer hello-${next}`)),
      "the other instance to take the chat over and answer",
      60_000,
    );
    const sentBefore = to(phone).length;
    const callsBefore = llm.chatRequests.length;
    process.kill(a!.pid, "SIGCONT");
    // The tool's process group goes as soon as a learns it lost the chat (the tool had 20 s left).
    const wokeAt = Date.now();
    await waitUntil(() => pidsRunning(sleeper(name)).length === 0, "the slow tool to be killed", 10_000);
    expect(Date.now() - wokeAt).toBeLessThan(8_000);
    await sleep(4_000);
    expect(existsSync(join(work, `late-${name}`))).toBe(false);
    expect(to(phone).length).toBe(sentBefore);
    expect(to(phone).some((m) => m.text.includes(`answer job-${name}`))).toBe(false);
    expect(llm.chatRequests.length).toBe(callsBefore);
    expect(a!.alive()).toBe(true);
    // History: the take-over's answer is the last word, and nothing of a's after the stall.
    const history = await sessionWith(`hello-${next}`);
    expect(history.at(-1)).toMatchObject({ role: "assistant", content: `answer hello-${next}` });
    expect(history.some((m) => m.content?.includes("after the tool"))).toBe(false);
    expect(history.some((m) => m.role === "tool" && m.content?.includes("late"))).toBe(false);
    expect(a!.process.stderr()).toMatch(/chat .*15550000101 was taken over by another instance/);
  }, 150_000);

  it("drops a model answer that arrived while its instance was frozen", async () => {
    const [a] = cluster.instances;
    const phone = "15550000202";
    const name = Math.random().toString(36).slice(2, 8);
    const asked = llm.chatRequests.length;
    await wa.deliver(webhooks[0]!, phone, { type: "text", text: { body: `slow-${name}` } });
    await waitUntil(
      () =>
        llm.chatRequests
          .slice(asked)
          .some((r) => messagesOf(r).some((m) => textOf(m).includes(`slow-${name}`))),
      "the model call of the slow answer",
      30_000,
    );
    await sleep(500);
    process.kill(a!.pid, "SIGSTOP");
    const next = Math.random().toString(36).slice(2, 8);
    await wa.deliver(webhooks[1]!, phone, { type: "text", text: { body: `next-${next}` } });
    await waitUntil(
      () => to(phone).some((m) => m.text.includes(`answer next-${next}`)),
      "the other instance to take the chat over and answer",
      60_000,
    );
    const callsBefore = llm.chatRequests.length;
    process.kill(a!.pid, "SIGCONT");
    await sleep(5_000);
    expect(to(phone).some((m) => m.text.includes(`answer slow-${name}`))).toBe(false);
    expect(llm.chatRequests.length).toBe(callsBefore);
    const history = await sessionWith(`next-${next}`);
    expect(history.some((m) => m.content?.includes(`answer slow-${name}`))).toBe(false);
    expect(history.at(-1)).toMatchObject({ role: "assistant", content: `answer next-${next}` });
    // The user's first message is kept (it was written before the stall), once.
    expect(history.filter((m) => m.role === "user" && m.content?.includes(`slow-${name}`))).toHaveLength(1);
  }, 150_000);
});
