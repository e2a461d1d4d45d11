/**
 * IMAP across gateway instances (real Dovecot): with the shared feed ledger a taking-over
 * instance resumes after the last UID any instance took, so mail that arrived while the dead
 * holder was gone is handed on, and mail the holder took is not handed on again; two holders
 * overlapping at a hand-over hand each message on once.
 */
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { describe, expect, it } from "vitest";
import type { FeedLedger, InboundMessage } from "../../../src/gateway/platforms/types.js";
import { dovecotSkipReason } from "../../support/dovecot.js";
import { EMAIL_BOT, emailRig } from "../../support/email-rig.js";

const BOT = EMAIL_BOT;
const rig = emailRig("hermes-email-failover-");
const adapter = () => rig.adapter();

/** The ledger's semantics in memory (the PostgreSQL one is tested with Telegram's poller). */
function memoryLedger(): FeedLedger & { seen: Set<number> } {
  let next: number | undefined;
  const seen = new Set<number>();
  return {
    seen,
    async resumeAt() {
      return next;
    },
    async take(ids, position) {
      next = Math.max(next ?? 0, position ?? 0);
      const fresh = ids.filter((id) => !seen.has(id));
      for (const id of fresh) seen.add(id);
      return fresh;
    },
  };
}

/**
 * The at-least-once half in memory, one view per instance over shared rows: an id taken with a
 * payload stays undone until `done`; `reclaim` hands the undone ones of instances in `dead` to the
 * caller (the PostgreSQL ledger's own tests cover its races).
 */
function trackingLedger(
  rows: Map<number, { by: string; payload: unknown; done: boolean }>,
  me: string,
  dead: Set<string>,
) {
  const feed: FeedLedger = {
    async resumeAt() {
      const ids = [...rows.keys()];
      return ids.length ? Math.max(...ids) + 1 : undefined;
    },
    async take(ids, _next, payloads) {
      const fresh = ids.filter((id) => !rows.has(id));
      for (const id of fresh) rows.set(id, { by: me, payload: payloads?.get(id), done: !payloads?.has(id) });
      return fresh;
    },
    async done(ids) {
      for (const id of ids) {
        const row = rows.get(id);
        if (row) row.done = true;
      }
    },
    async release() {},
    async reclaim() {
      const back = [...rows.entries()].filter(([, r]) => !r.done && dead.has(r.by));
      for (const [, r] of back) r.by = me;
      return back.map(([id, r]) => ({ id, payload: r.payload, takenAt: new Date(), attempts: 2 }));
    },
  };
  return feed;
}

const mail = async (subject: string) =>
  rig.dovecot.deliver(
    BOT,
    await new MailComposer({
      from: "erin@people.test",
      to: BOT.user,
      date: new Date(),
      subject,
      text: subject,
    })
      .compile()
      .build(),
  );

function collector() {
  const got: string[] = [];
  const messages: InboundMessage[] = [];
  const handlers = {
    onMessage: (m: InboundMessage) => {
      messages.push(m);
      got.push(/\[Subject: ([^\]]+)\]/.exec(m.text)?.[1] ?? m.text);
    },
    onAction: () => undefined,
    onError: () => undefined,
  };
  return { got, messages, handlers };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(dovecotSkipReason)("email across instances (real Dovecot)", () => {
  it("a taking-over instance hands on the mail that came while none held the mailbox, and none twice", async () => {
    const feed = memoryLedger();
    const first = collector();
    const a = adapter();
    await a.connect(first.handlers, { feed });
    await mail("one");
    await until(() => first.got.includes("one"), "instance A hands on the first mail");
    await a.disconnect(); // A dies
    await mail("two");
    await mail("three");
    const second = collector();
    const b = adapter();
    await b.connect(second.handlers, { feed });
    await until(() => second.got.length >= 2, "instance B catches up");
    await mail("four");
    await until(() => second.got.includes("four"), "instance B receives");
    await new Promise((r) => setTimeout(r, 300));
    expect(first.got).toEqual(["one"]);
    expect(second.got).toEqual(["two", "three", "four"]);
  }, 60_000);

  it("mail taken by an instance that died before the router was done is fetched again by UID and handed on once", async () => {
    const rows = new Map<number, { by: string; payload: unknown; done: boolean }>();
    const dead = new Set<string>();
    const first = collector();
    const a = adapter();
    await a.connect(first.handlers, { feed: trackingLedger(rows, "a", dead) });
    await mail("answered");
    await mail("in flight");
    await until(() => first.got.length === 2, "instance A hands both on");
    expect(first.messages.every((m) => m.receipt && !m.receipt.redelivered)).toBe(true);
    await first.messages[0]!.receipt!.done();
    await a.disconnect(); // A dies with the second turn running
    dead.add("a");
    const second = collector();
    const b = adapter();
    await b.connect(second.handlers, { feed: trackingLedger(rows, "b", dead) });
    await until(() => second.got.includes("in flight"), "instance B hands the unfinished mail on again");
    await mail("after");
    await until(() => second.got.includes("after"), "instance B receives");
    await new Promise((r) => setTimeout(r, 500));
    expect(second.got).toEqual(["in flight", "after"]);
    expect(second.messages[0]?.receipt?.redelivered?.attempts).toBe(2);
    expect(second.messages[0]?.text).toContain("in flight");
  }, 60_000);

  it("two instances holding the mailbox at once (a hand-over's overlap) hand each mail on once", async () => {
    const feed = memoryLedger();
    const x = collector();
    const y = collector();
    await adapter().connect(x.handlers, { feed });
    await adapter().connect(y.handlers, { feed });
    for (const subject of ["p", "q", "r"]) await mail(subject);
    await until(() => x.got.length + y.got.length >= 3, "three mails handed on");
    await new Promise((r) => setTimeout(r, 500));
    expect([...x.got, ...y.got].sort()).toEqual(["p", "q", "r"]);
  }, 60_000);
});
