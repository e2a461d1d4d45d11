/**
 * Single-consumer feeds lose nothing at a hand-over (issue 27): two real `hermes gateway run`
 * processes over one PostgreSQL, Telegram (the Bot API emulator) and Signal (the signal-cli fake)
 * on both. A message is taken by the lease holder, its turn is in flight (the fake model hangs on
 * that request), and the holder is killed with SIGKILL: the other instance takes the feed over,
 * hands the unfinished message on again, and the user gets exactly one answer to it. The session
 * shows the message once; no other message is lost or answered twice.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { type FakeLlm, hang, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSignalCli, type RpcCall, startFakeSignalCli } from "../support/fake-signal-cli.js";
import { type GatewayCluster, startCluster, waitUntil } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 4242;
const SIGNAL_OWNER = "+15550001111";
/** Lease TTL (10 s), the dead holder's stale heartbeat, a re-run turn, and a loaded test machine. */
const HANDOVER_MS = 40_000;

let db: PostgresFixture;
let databaseUrl: string;
let llm: FakeLlm;
let tg: TelegramEmulator;
let signal: FakeSignalCli;
let cluster: GatewayCluster;
/** Words whose first model request hangs (the turn in flight when its instance is killed). */
const hangOnce = new Set<string>();

beforeAll(async () => {
  if (postgresSkipReason) return;
  db = await startPostgres();
  databaseUrl = await db.createDatabase();
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_feed_bot" });
  signal = await startFakeSignalCli();
  llm.respondWith((request) => {
    const messages =
      (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const last = JSON.stringify(messages.filter((m) => m.role === "user").at(-1)?.content ?? "");
    const word = [...last.matchAll(/say (\w+)/g)].at(-1)?.[1] ?? "nothing";
    if (hangOnce.delete(word)) return hang();
    return reply().text(`You said ${word}.`).usage({ prompt: 10, completion: 3 });
  });
  cluster = await startCluster(
    {
      databaseUrl,
      llmUrl: llm.url,
      apiServer: false,
      // A message arriving while a turn runs waits for it (the default, `interrupt`, would stop the
      // re-delivered turn in favour of the newer message, as on one instance).
      config: 'display:\n  tool_progress: "off"\n  busy_input_mode: queue\n',
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        TELEGRAM_ALLOWED_USERS: String(OWNER),
        SIGNAL_HTTP_URL: signal.url,
        SIGNAL_ACCOUNT: signal.account,
        SIGNAL_ALLOWED_USERS: SIGNAL_OWNER,
        SIGNAL_REACTIONS: "false",
      },
    },
    2,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await signal?.stop();
  await tg?.stop();
  await llm?.close();
  await db?.dispose();
}, 60_000);

/** Turns' model requests answering "please say `word`" (the last message is that user message). */
const requestsFor = (word: string) =>
  llm.chatRequests.filter((r) => {
    const last = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages?.at(-1);
    return last?.role === "user" && last.content === `please say ${word}`;
  }).length;

/** User messages in every stored session that carry `text`: shown (active) or taken back by an undo. */
async function storedUserMessages(text: string, active = 1): Promise<number> {
  const store = await openPgDatabase(databaseUrl, { max: 1 });
  try {
    const rows = await store.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM messages WHERE role = 'user' AND active = $2 AND content LIKE $1",
      [`%${text}%`, active],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await store.close();
  }
}

const tgAnswers = (word: string) => tg.botMessages(OWNER).filter((m) => m.text === `You said ${word}.`);
const signalAnswers = (word: string) =>
  signal.calls.filter(
    (c: RpcCall) =>
      c.method === "send" &&
      (c.params["recipient"] as string[] | undefined)?.includes(SIGNAL_OWNER) &&
      c.params["message"] === `You said ${word}.`,
  );

describe.skipIf(postgresSkipReason)("feed messages taken by an instance killed mid-turn", () => {
  it("Telegram: the next poller hands the message on again and it is answered exactly once", async () => {
    const holder = await waitUntil(
      () => cluster.holderOf("telegram"),
      "a holder of the telegram lease",
      30_000,
    );
    const survivor = cluster.instances.find((i) => i !== holder)!;
    const owner = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
    const first = tg.nextBotMessage(OWNER);
    await owner.sendText("please say alpha");
    expect((await first(20_000)).text).toBe("You said alpha.");

    hangOnce.add("delta");
    await owner.sendText("please say delta");
    await waitUntil(() => requestsFor("delta") === 1, "the delta turn in flight on the holder", 20_000);
    // The message is stored in the session and its turn waits on the model: a crash now.
    await holder.kill9();
    await owner.sendText("please say echo");

    await waitUntil(() => tgAnswers("delta").length === 1, "the delta message answered", HANDOVER_MS);
    await waitUntil(() => tgAnswers("echo").length === 1, "the echo message answered", HANDOVER_MS);
    expect((await cluster.holderOf("telegram"))?.pid).toBe(survivor.pid);
    // Nothing answered twice, nothing twice in the history.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(tgAnswers("alpha")).toHaveLength(1);
    expect(tgAnswers("delta")).toHaveLength(1);
    expect(tgAnswers("echo")).toHaveLength(1);
    expect(requestsFor("delta")).toBe(2);
    expect(await storedUserMessages("please say delta")).toBe(1);
    // The killed instance had stored it with its unfinished turn: that copy was taken back.
    expect(await storedUserMessages("please say delta", 0)).toBe(1);
    expect(await storedUserMessages("please say echo")).toBe(1);
  }, 120_000);

  it("Signal: the event taken by the killed holder is handed on once by the next one", async () => {
    await cluster.add();
    const holder = await waitUntil(() => cluster.holderOf("signal"), "a holder of the signal lease", 30_000);
    signal.dm(SIGNAL_OWNER, "please say foxtrot");
    await waitUntil(() => signalAnswers("foxtrot").length === 1, "foxtrot answered", 20_000);

    hangOnce.add("golf");
    signal.dm(SIGNAL_OWNER, "please say golf");
    await waitUntil(() => requestsFor("golf") === 1, "the golf turn in flight on the holder", 20_000);
    await holder.kill9();
    signal.dm(SIGNAL_OWNER, "please say hotel");

    try {
      await waitUntil(() => signalAnswers("golf").length === 1, "golf answered", HANDOVER_MS);
      await waitUntil(() => signalAnswers("hotel").length === 1, "hotel answered", HANDOVER_MS);
    } catch (error) {
      for (const i of cluster.instances) {
        const log = join(i.home, "logs", "gateway.log");
        const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-6000) : "(no gateway.log)";
        console.error(`instance ${i.index}:\n${i.process.stderr().slice(-3000)}\n${tail}`);
      }
      console.error(
        JSON.stringify(signal.calls.filter((c) => c.method === "send").map((c) => c.params["message"])),
      );
      throw error;
    }
    const next = await cluster.holderOf("signal");
    expect(next?.alive()).toBe(true);
    expect(next?.pid).not.toBe(holder.pid);
    // The new holder's event stream replays the daemon's buffer (it has no Last-Event-ID of its
    // own): every replayed event was taken already and is not answered again.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(signal.connections.length).toBeGreaterThanOrEqual(2);
    expect(signalAnswers("foxtrot")).toHaveLength(1);
    expect(signalAnswers("golf")).toHaveLength(1);
    expect(signalAnswers("hotel")).toHaveLength(1);
    expect(requestsFor("golf")).toBe(2);
    expect(await storedUserMessages("please say golf")).toBe(1);
    expect(await storedUserMessages("please say golf", 0)).toBe(1);
  }, 150_000);
});
