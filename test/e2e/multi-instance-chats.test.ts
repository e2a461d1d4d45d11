/**
 * 200 chats at once over two real `hermes gateway run` processes sharing one PostgreSQL (issue
 * 27, "one chat, one turn"). WhatsApp Cloud is a webhook-style platform every instance serves
 * behind a load balancer, so the test plays the balancer: each chat sends two messages at the
 * same moment, the first to one instance's webhook and the second to the other's. Whichever
 * instance claims the chat runs its turns; the other forwards its message there, where it waits
 * in the queue (`busy_input_mode: queue`) as on one instance.
 *
 * Checked from outside, as a user and the model provider see it:
 * - none lost: every message's token comes back in an answer to its own chat;
 * - none crossed: no chat receives an answer naming another chat's token;
 * - none interleaved: the fake model never has two requests of one chat in flight (each model
 *   call takes DELAY_MS, so a chat's next call must arrive at least that long after the one
 *   before), and a chat's last call carries both of its messages (one session, not two).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeWhatsAppCloud, startFakeWhatsAppCloud } from "../support/fake-whatsapp-cloud.js";
import { type GatewayCluster, startCluster, waitUntil } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { whatsappClusterSetup } from "../support/whatsapp-cluster.js";

const CHATS = 200;
const DELAY_MS = 250;

let pg: PostgresFixture;
let llm: FakeLlm;
let wa: FakeWhatsAppCloud;
let cluster: GatewayCluster;
let webhooks: string[] = [];

/** Model calls per chat: when each arrived and the tokens its user messages carried. */
const calls = new Map<number, Array<{ at: number; tokens: string[] }>>();

const TOKEN = /chat(\d+)-m\d-[0-9a-z]+/g;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  wa = await startFakeWhatsAppCloud();
  llm.respondWith((request) => {
    const messages =
      (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const users = messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    const all = users.join(" ").match(TOKEN) ?? [];
    const chat = Number(/chat(\d+)/.exec(all[0] ?? "")?.[1] ?? -1);
    if (chat >= 0) {
      const list = calls.get(chat) ?? [];
      list.push({ at: Date.now(), tokens: all });
      calls.set(chat, list);
    }
    // The answer names the tokens of the newest user message (a batched turn may hold two).
    const newest = users.at(-1)?.match(TOKEN) ?? [];
    return reply()
      .text(`answer ${newest.join(" ")}`)
      .usage({ prompt: 20, completion: 4 })
      .delay(DELAY_MS);
  });
  const cloud = whatsappClusterSetup(wa, {
    databaseUrl: await pg.createDatabase(),
    llmUrl: llm.url,
    config: 'display:\n  tool_progress: "off"\n  busy_input_mode: queue\n',
  });
  webhooks = cloud.webhooks;
  cluster = await startCluster(cloud.setup, 2);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await wa?.stop();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const phone = (chat: number) => `1555${String(chat).padStart(7, "0")}`;

describe.skipIf(postgresSkipReason)("200 concurrent chats over two instances", () => {
  it("loses, crosses and interleaves none of them", async () => {
    const tokens = Array.from({ length: CHATS }, (_, chat) =>
      [1, 2].map((m) => `chat${chat}-m${m}-${Math.random().toString(36).slice(2, 8)}`),
    );
    const delivered = await Promise.all(
      tokens.flatMap((pair, chat) =>
        pair.map((token, m) =>
          wa.deliver(webhooks[(chat + m) % 2]!, phone(chat), {
            type: "text",
            text: { body: `note ${token}` },
          }),
        ),
      ),
    );
    expect(delivered.every((d) => d.status === 200)).toBe(true);

    const answered = (chat: number, token: string) =>
      wa.sent.some((m) => m.to === phone(chat) && m.text.includes(token));
    await waitUntil(
      () => tokens.every((pair, chat) => pair.every((token) => answered(chat, token))),
      "an answer for every message",
      150_000,
    );

    // None lost: both tokens of every chat came back to that chat.
    const lost = tokens.flatMap((pair, chat) => pair.filter((token) => !answered(chat, token)));
    expect(lost).toEqual([]);
    // None crossed: every token in an answer belongs to the chat it was sent to.
    const crossed = wa.sent.filter((m) =>
      [...m.text.matchAll(/chat(\d+)-m\d/g)].some((hit) => phone(Number(hit[1])) !== m.to),
    );
    expect(crossed).toEqual([]);
    // None interleaved: one chat's model calls never overlap, and its last call holds both messages.
    const overlapping: string[] = [];
    const split: number[] = [];
    for (let chat = 0; chat < CHATS; chat++) {
      const list = [...(calls.get(chat) ?? [])].sort((x, y) => x.at - y.at);
      for (let i = 1; i < list.length; i++)
        if (list[i]!.at - list[i - 1]!.at < DELAY_MS - 5) overlapping.push(`chat${chat} call ${i}`);
      const last = list.at(-1)?.tokens ?? [];
      if (!tokens[chat]!.every((token) => last.includes(token))) split.push(chat);
      expect(list.length).toBeGreaterThanOrEqual(1);
      expect(list.length).toBeLessThanOrEqual(2);
    }
    expect(overlapping).toEqual([]);
    expect(split).toEqual([]);
    // No model call mixed two chats.
    for (const list of calls.values())
      for (const call of list) expect(new Set(call.tokens.map((t) => t.split("-")[0])).size).toBe(1);
  }, 200_000);
});
