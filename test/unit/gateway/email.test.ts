/**
 * The email adapter against a real Dovecot (IMAP IDLE) and a real SMTP listener: what arrives in
 * the mailbox reaches the handlers once, automated mail never does, answers go out threaded, and a
 * dropped IMAP connection loses and repeats nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../../src/gateway/platforms/types.js";
import { dovecotSkipReason } from "../../support/dovecot.js";
import { EMAIL_BOT, emailRig } from "../../support/email-rig.js";

const BOT = EMAIL_BOT;
const rig = emailRig("hermes-email-unit-");

/** Delivers a message composed from `options` to the bot's mailbox. */
const deliver = async (options: ConstructorParameters<typeof MailComposer>[0]) =>
  rig.dovecot.deliver(BOT, await compose(options));

function compose(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer({ to: BOT.user, date: new Date(), ...options }).compile().build();
}

class Inbox {
  readonly messages: InboundMessage[] = [];
  readonly errors: string[] = [];
  private waiters: (() => void)[] = [];
  readonly handlers = {
    onMessage: (m: InboundMessage) => {
      this.messages.push(m);
      for (const w of this.waiters.splice(0)) w();
    },
    onAction: () => undefined,
    onError: (e: string) => {
      this.errors.push(e);
      for (const w of this.waiters.splice(0)) w();
    },
  };
  async until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; errors: ${this.errors.join(" | ")}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

const adapter = rig.adapter;

describe.skipIf(dovecotSkipReason)("email adapter (real Dovecot + SMTP)", () => {
  it("skips mail already in the box, then hands on new mail once, with subject, sender and attachment", async () => {
    await deliver({ from: "old@people.test", subject: "old", text: "before start" });
    const inbox = new Inbox();
    const a = adapter();
    await a.connect(inbox.handlers);
    await deliver({
      from: "Alice Example <Alice@People.test>",
      subject: "Quarterly numbers",
      messageId: "<q1@people.test>",
      html: "<p>Hello <b>agent</b>,</p><p>please read the file.</p>",
      attachments: [{ filename: "../../evil/report.csv", content: "a,b\n1,2\n", contentType: "text/csv" }],
    });
    await inbox.until(() => inbox.messages.length >= 1, "the new message");
    const [m] = inbox.messages;
    expect(m?.source).toMatchObject({
      platform: "email",
      chatType: "dm",
      chatId: "alice@people.test",
      userName: "Alice Example",
    });
    expect(m?.text).toMatch(/^\[Subject: Quarterly numbers\]\n\nHello \*?\*?agent/i);
    expect(m?.text).toContain("please read the file.");
    expect(m?.messageId).toBe("<q1@people.test>");
    expect(m?.media).toHaveLength(1);
    const file = m?.media?.[0];
    expect(file?.path.startsWith(join(rig.dir, "media"))).toBe(true);
    expect(file?.path).not.toContain("..");
    expect(readFileSync(file?.path ?? "", "utf8")).toBe("a,b\n1,2\n");
    // The handled message is marked read on the server; the old one is untouched.
    const flags = await rig.dovecot.flags(BOT);
    expect([...flags.values()].filter((f) => f.includes("\\Seen"))).toHaveLength(1);
    expect(inbox.messages.filter((x) => x.text.includes("before start"))).toHaveLength(0);
  }, 30_000);

  it("drops auto-replies, bounces, list mail, noreply senders and its own mail", async () => {
    const inbox = new Inbox();
    const a = adapter();
    await a.connect(inbox.handlers);
    const automated = [
      {
        from: "bob@people.test",
        subject: "Out of office",
        text: "away",
        headers: { "Auto-Submitted": "auto-replied" },
      },
      { from: "MAILER-DAEMON@mx.people.test", subject: "Undelivered Mail", text: "bounce" },
      {
        from: "list@lists.test",
        subject: "digest",
        text: "news",
        headers: { "List-Id": "<news.lists.test>" },
      },
      { from: "carol@people.test", subject: "promo", text: "sale", headers: { Precedence: "bulk" } },
      { from: "no-reply@shop.test", subject: "receipt", text: "thanks" },
      { from: BOT.user, subject: "myself", text: "loop" },
    ];
    for (const mail of automated) await deliver(mail);
    await deliver({ from: "dave@people.test", subject: "real", text: "a person" });
    await inbox.until(() => inbox.messages.length >= 1, "the person's message");
    expect(inbox.messages.map((m) => m.source.userId)).toEqual(["dave@people.test"]);
    expect(inbox.errors.filter((e) => e.includes("ignored"))).toHaveLength(automated.length);
  }, 30_000);

  it("answers in the sender's thread with text and HTML, and sends files as attachments", async () => {
    const inbox = new Inbox();
    const a = adapter();
    await a.connect(inbox.handlers);
    await deliver({
      from: "erin@people.test",
      subject: "Re: Plans",
      messageId: "<e2@people.test>",
      inReplyTo: "<hermes-aa@agent.test>",
      references: ["<e1@people.test>", "<hermes-aa@agent.test>"],
      // Answers go to the sender, never to a Reply-To a message names (no mail to third parties).
      replyTo: "victim@elsewhere.test",
      text: "Sounds good, go ahead.\n\nOn Mon, 2 Mar 2026 at 10:00, Hermes <hermes@agent.test> wrote:\n> Shall I book it?\n",
    });
    await inbox.until(() => inbox.messages.length >= 1, "the reply");
    // The user id is the real address, never the display name, whatever it claims.
    await deliver({ from: '"erin@people.test" <mallory@evil.test>', subject: "x", text: "hi" });
    await inbox.until(() => inbox.messages.length >= 2, "the spoofed message");
    expect(inbox.messages[1]?.source).toMatchObject({
      userId: "mallory@evil.test",
      chatId: "mallory@evil.test",
    });
    expect(inbox.messages[0]?.text).toBe("Sounds good, go ahead.");
    const sent = await a.send(
      { chatId: "erin@people.test" },
      "Booked **both** rooms. <img src=x onerror=alert(1)>",
    );
    const mail = await rig.smtp.waitFor((m) => m.parsed.messageId === sent.messageId);
    expect(mail.rcptTo).toEqual(["erin@people.test"]);
    expect(mail.user).toBe(BOT.user);
    expect(mail.parsed.subject).toBe("Re: Plans");
    expect(mail.parsed.inReplyTo).toBe("<e2@people.test>");
    expect(mail.parsed.references).toEqual([
      "<e1@people.test>",
      "<hermes-aa@agent.test>",
      "<e2@people.test>",
    ]);
    expect(mail.parsed.text?.trim()).toBe("Booked **both** rooms. <img src=x onerror=alert(1)>");
    expect(mail.parsed.html).toContain("<strong>both</strong>");
    expect(mail.parsed.html).not.toContain("<img");
    expect(mail.header("auto-submitted")).toBe("auto-replied");

    const file = join(rig.dir, "chart.png");
    writeFileSync(file, Buffer.from("89504e470d0a1a0a", "hex"));
    const media = await a.sendMedia(
      { chatId: "erin@people.test" },
      { kind: "photo", path: file, caption: "The chart" },
    );
    const withFile = await rig.smtp.waitFor((m) => m.parsed.messageId === media.messageId);
    expect(withFile.parsed.attachments.map((x) => x.filename)).toEqual(["chart.png"]);
    expect(withFile.parsed.text?.trim()).toBe("The chart");
    expect(withFile.parsed.subject).toBe("Re: Plans");
  }, 30_000);

  it("reconnects after the server drops, without losing or repeating a message", async () => {
    const inbox = new Inbox();
    const a = adapter();
    await a.connect(inbox.handlers);
    await deliver({ from: "frank@people.test", subject: "one", text: "first" });
    await inbox.until(() => inbox.messages.length >= 1, "the first message");
    await rig.dovecot.stop();
    await inbox.until(
      () => inbox.errors.some((e) => e.includes("connection lost")),
      "the drop to be noticed",
    );
    await rig.dovecot.start();
    // Delivered as soon as the server is back, racing the adapter's reconnect.
    await deliver({ from: "frank@people.test", subject: "two", text: "second" });
    await deliver({ from: "frank@people.test", subject: "three", text: "third" });
    await inbox.until(() => inbox.messages.length >= 3, "both messages after the reconnect");
    // Another message after that must arrive through IDLE on the new connection.
    await deliver({ from: "frank@people.test", subject: "four", text: "fourth" });
    await inbox.until(() => inbox.messages.length >= 4, "a message on the new connection");
    expect(inbox.messages.map((m) => m.text.split("\n").pop())).toEqual([
      "first",
      "second",
      "third",
      "fourth",
    ]);
  }, 60_000);

  it("sends without touching IMAP when only asked to send (hermes send, cron delivery)", async () => {
    const a = adapter({ EMAIL_IMAP_PORT: "1" });
    await a.connect(new Inbox().handlers, { receive: false });
    const sent = await a.send({ chatId: "gina@people.test" }, "Your report is ready.");
    const mail = await rig.smtp.waitFor((m) => m.parsed.messageId === sent.messageId);
    expect(mail.parsed.subject).toBe("Hermes Agent");
    expect(mail.parsed.inReplyTo).toBeUndefined();
    await expect(a.send({ chatId: "gina@people.test, other@people.test" }, "x")).rejects.toThrow(
      "is not a single email address",
    );
  }, 30_000);

  it("refuses to start with a wrong password or missing settings, naming what to fix", async () => {
    await expect(adapter({ EMAIL_PASSWORD: "wrong" }).connect(new Inbox().handlers)).rejects.toThrow(
      /SMTP 127\.0\.0\.1:\d+ \(plain\) refused hermes@agent\.test.*EMAIL_PASSWORD/,
    );
    await expect(adapter({ EMAIL_IMAP_HOST: "" }).connect(new Inbox().handlers)).rejects.toThrow(
      /Email needs EMAIL_IMAP_HOST/,
    );
  }, 30_000);
});
