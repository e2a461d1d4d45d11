/**
 * IMAP across gateway instances (real Dovecot): with the shared feed ledger a taking-over
 * instance resumes after the last UID any instance took, so mail that arrived while the dead
 * holder was gone is handed on, and mail the holder took is not handed on again; two holders
 * overlapping at a hand-over hand each message on once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEmailAdapter } from "../../../src/gateway/platforms/email.js";
import type { FeedLedger, InboundMessage, PlatformAdapter } from "../../../src/gateway/platforms/types.js";
import { type DovecotFixture, dovecotSkipReason, startDovecot } from "../../support/dovecot.js";
import { type SmtpListener, startSmtpListener } from "../../support/smtp-listener.js";

const BOT = { user: "hermes@agent.test", password: "bot-password" };
let dovecot: DovecotFixture;
let smtp: SmtpListener;
let dir: string;
let open: PlatformAdapter[] = [];

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

const mail = async (subject: string) =>
  dovecot.deliver(
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

function adapter(): PlatformAdapter {
  const a = createEmailAdapter(
    {
      home: dir,
      env: {
        EMAIL_ADDRESS: BOT.user,
        EMAIL_PASSWORD: BOT.password,
        EMAIL_IMAP_HOST: "127.0.0.1",
        EMAIL_IMAP_PORT: String(dovecot.port),
        EMAIL_IMAP_SECURITY: "plain",
        EMAIL_SMTP_HOST: "127.0.0.1",
        EMAIL_SMTP_PORT: String(smtp.port),
        EMAIL_SMTP_SECURITY: "plain",
      },
      settings: {},
      mediaDir: join(dir, "media"),
      maxInboundMediaBytes: 1_000_000,
    },
    { backoffMs: [100, 200, 400] },
  );
  open.push(a);
  return a;
}

function collector() {
  const got: string[] = [];
  const handlers = {
    onMessage: (m: InboundMessage) => void got.push(/\[Subject: ([^\]]+)\]/.exec(m.text)?.[1] ?? m.text),
    onAction: () => undefined,
    onError: () => undefined,
  };
  return { got, handlers };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  if (dovecotSkipReason) return;
  dovecot = await startDovecot([BOT]);
  smtp = await startSmtpListener(BOT);
  dir = mkdtempSync(join(tmpdir(), "hermes-email-failover-"));
}, 30_000);
afterEach(async () => {
  await Promise.all(open.map((a) => a.disconnect()));
  open = [];
});
afterAll(async () => {
  await smtp?.close();
  await dovecot?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

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
