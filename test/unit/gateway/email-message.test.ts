import { describe, expect, it } from "vitest";
import { readEmailConfig } from "../../../src/gateway/platforms/email-config.js";
import { emailBodies, htmlToText } from "../../../src/gateway/platforms/email-format.js";
import {
  inboundText,
  messageIds,
  replySubject,
  safeAttachmentName,
  skipReason,
  stripQuotedReply,
  threadHeaders,
} from "../../../src/gateway/platforms/email-message.js";
import { authorize, unauthorizedDmBehavior } from "../../../src/state/gateway/allowlist.js";

const SELF = "hermes@agent.test";
const skip = (
  from: string,
  headers: Record<string, string> = {},
  extra: { contentType?: string; messageId?: string } = {},
) => skipReason({ from, self: SELF, headers: new Map(Object.entries(headers)), ...extra });

describe("skipReason: mail that is never answered", () => {
  it.each([
    ["MAILER-DAEMON@mx.example.com", {}, "mailer-daemon"],
    ["postmaster@example.com", {}, "postmaster"],
    ["no-reply@shop.example", {}, "no-reply"],
    ["noreply@github.com", {}, "noreply"],
    ["bounces+123@mail.example", {}, "bounce"],
    ["alice@example.com", { "auto-submitted": "auto-replied" }, "auto-submitted"],
    ["alice@example.com", { "auto-submitted": "auto-generated" }, "auto-submitted"],
    ["alice@example.com", { precedence: "bulk" }, "precedence"],
    ["alice@example.com", { precedence: "LIST" }, "precedence"],
    ["alice@example.com", { "list-unsubscribe": "<mailto:x@y>" }, "list-unsubscribe"],
    ["alice@example.com", { "list-id": "<dev.lists.example>" }, "list-id"],
    ["alice@example.com", { "x-auto-response-suppress": "All" }, "x-auto-response-suppress"],
    ["alice@example.com", { "x-autoreply": "yes" }, "x-autoreply"],
  ])("%s %j is skipped (%s)", (from, headers, why) => {
    expect(skip(from, headers)).toContain(why);
  });

  it("skips bounces by their report type, our own address in any case, and our own Message-IDs", () => {
    expect(
      skip("alice@example.com", {}, { contentType: "multipart/report; report-type=delivery-status" }),
    ).toBe("delivery report");
    expect(skip("Hermes@Agent.Test")).toBe("sent by this mailbox");
    expect(skip("alice@example.com", {}, { messageId: "<hermes-0a1b2c@agent.test>" })).toBe(
      "one of our own replies",
    );
    expect(skip("")).toBe("no sender address");
  });

  it("lets people through, including look-alikes of the automated patterns", () => {
    expect(skip("alice@example.com")).toBeUndefined();
    expect(skip("alice@example.com", { "auto-submitted": "no" })).toBeUndefined();
    expect(skip("alice@example.com", { precedence: "first-class" })).toBeUndefined();
    expect(skip("norah.replyall@example.com")).toBeUndefined();
    expect(skip("alice@example.com", {}, { messageId: "<hermes@example.com>" })).toBeUndefined();
  });
});

describe("stripQuotedReply", () => {
  it.each([
    ["Yes, do it.\n\nOn Tue, 3 Mar 2026 at 10:00, Hermes <h@a.test> wrote:\n> Shall I?\n> ok", "Yes, do it."],
    ["Yes.\n\nOn Tue, 3 Mar 2026 at 10:00, Hermes Agent\n<h@a.test> wrote:\n> Shall I?", "Yes."],
    ["Sure\r\n\r\n-----Original Message-----\r\nFrom: Hermes\r\nSent: today\r\n\r\nold", "Sure"],
    [
      "Fine\n\nFrom: Hermes <h@a.test>\nSent: Tuesday, March 3, 2026 10:00\nTo: me\nSubject: x\n\nold",
      "Fine",
    ],
    ["no\n\n> quoted at the end\n>\n> more", "no"],
    ["Thanks!\n-- \nAlice\nCEO, Example", "Thanks!"],
    ["Ja\n\nAm 03.03.2026 um 10:00 schrieb Hermes <h@a.test>:\n> Soll ich?", "Ja"],
  ])("%j → %j", (input, expected) => {
    expect(stripQuotedReply(input)).toBe(expected);
  });

  it("keeps inline answers between quotes and never returns nothing", () => {
    expect(stripQuotedReply("> Which room?\nThe big one.\n> When?\nAt noon.")).toBe(
      "> Which room?\nThe big one.\n> When?\nAt noon.",
    );
    expect(stripQuotedReply("> only a quote")).toBe("> only a quote");
    expect(stripQuotedReply("On the 3rd we wrote: the plan\nand more")).toBe(
      "On the 3rd we wrote: the plan\nand more",
    );
  });
});

describe("threading", () => {
  it("prefixes Re: once and continues References with the message answered", () => {
    expect(replySubject("Plans")).toBe("Re: Plans");
    expect(replySubject("Re: Plans")).toBe("Re: Plans");
    expect(replySubject("RE: Plans")).toBe("Re: Plans");
    expect(replySubject("AW: Pläne")).toBe("Re: Pläne");
    expect(replySubject("")).toBe("Re: Hermes Agent");
    expect(threadHeaders({ subject: "Plans", messageId: "<2@x>", references: ["<1@x>"] })).toEqual({
      subject: "Re: Plans",
      inReplyTo: "<2@x>",
      references: ["<1@x>", "<2@x>"],
    });
    expect(threadHeaders(undefined)).toEqual({ subject: "Hermes Agent" });
  });

  it("keeps the root and the latest ids of a very long thread", () => {
    const refs = Array.from({ length: 40 }, (_, i) => `<${i}@x>`);
    const h = threadHeaders({ subject: "s", messageId: "<40@x>", references: refs });
    expect(h.references).toHaveLength(20);
    expect(h.references?.[0]).toBe("<0@x>");
    expect(h.references?.at(-1)).toBe("<40@x>");
  });

  it("reads Message-IDs from header text and arrays", () => {
    expect(messageIds("<a@x> <b@y>\r\n <c@z>")).toEqual(["<a@x>", "<b@y>", "<c@z>"]);
    expect(messageIds(["<a@x>", "<b@y>"])).toEqual(["<a@x>", "<b@y>"]);
    expect(messageIds("a@x")).toEqual(["<a@x>"]);
    expect(messageIds(undefined)).toEqual([]);
  });

  it("heads a new conversation with its subject, not a reply", () => {
    expect(inboundText("Plans", "Book it", false)).toBe("[Subject: Plans]\n\nBook it");
    expect(inboundText("Re: Plans", "Book it", false)).toBe("Book it");
    expect(inboundText("Re: Plans", "", false)).toBe("(empty email)");
    expect(inboundText("Re: Plans", "", true)).toBe("");
  });
});

describe("attachment names", () => {
  it.each([
    ["../../etc/passwd", "passwd"],
    ["..\\..\\boot.ini", "boot.ini"],
    [".bashrc", "bashrc"],
    ["répört 2026.pdf", "r_p_rt 2026.pdf"],
    [undefined, "attachment-1"],
    ["..", "attachment-1"],
  ])("%j → %j", (name, expected) => {
    expect(safeAttachmentName(name, "attachment-1")).toBe(expected);
  });
});

describe("formatting", () => {
  it("renders markdown to HTML and shows raw HTML, scripts and remote images as text or links", () => {
    const { text, html } = emailBodies(
      "Hi **there**\n\n<script>alert(1)</script>\n\n![pixel](https://t.example/p.gif) [bad](javascript:alert(1))",
    );
    expect(text).toContain("**there**");
    expect(html).toContain("<strong>there</strong>");
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("javascript:");
    expect(html).toContain('<a href="https://t.example/p.gif">pixel</a>');
  });

  it("turns HTML mail into markdown text without markup or pixels", () => {
    const md = htmlToText(
      '<html><head><style>p{}</style></head><body><p>Hello <b>you</b></p><ul><li>one</li></ul><img src="https://t/p.gif"><a href="https://x.test">link</a></body></html>',
    );
    expect(md).toMatch(/^Hello \*\*you\*\*\n\n-\s+one\n\n\[link\]\(https:\/\/x\.test\)$/);
  });
});

describe("config", () => {
  const base = {
    EMAIL_ADDRESS: "hermes@agent.test",
    EMAIL_PASSWORD: "pw",
    EMAIL_IMAP_HOST: "imap.agent.test",
    EMAIL_SMTP_HOST: "smtp.agent.test",
  };
  it("uses upstream's ports and derives security from them", () => {
    const c = readEmailConfig(base);
    expect(c.imap).toEqual({ host: "imap.agent.test", port: 993, security: "tls" });
    expect(c.smtp).toEqual({ host: "smtp.agent.test", port: 587, security: "starttls" });
    expect(readEmailConfig({ ...base, EMAIL_SMTP_PORT: "465" }).smtp.security).toBe("tls");
    expect(readEmailConfig({ ...base, EMAIL_IMAP_SECURITY: "SSL" }).imap.security).toBe("tls");
    expect(readEmailConfig({ ...base, EMAIL_IMAP_SECURITY: "none" }).imap.security).toBe("plain");
    expect(c.pollIntervalSeconds).toBe(15);
    expect(readEmailConfig(base, { skip_attachments: true }).skipAttachments).toBe(true);
  });
  it("names every missing variable and the malformed value", () => {
    expect(() => readEmailConfig({ EMAIL_ADDRESS: "a@b.c" })).toThrow(
      "Email needs EMAIL_PASSWORD, EMAIL_IMAP_HOST, EMAIL_SMTP_HOST in .env",
    );
    expect(() => readEmailConfig({ ...base, EMAIL_IMAP_PORT: "99999" })).toThrow('EMAIL_IMAP_PORT="99999"');
    expect(() => readEmailConfig({ ...base, EMAIL_SMTP_SECURITY: "maybe" })).toThrow("tls, starttls, plain");
    expect(() => readEmailConfig({ ...base, EMAIL_ADDRESS: "not an address" })).toThrow(
      "not an email address",
    );
    expect(() => readEmailConfig({ ...base, EMAIL_POLL_INTERVAL: "0" })).toThrow("EMAIL_POLL_INTERVAL");
  });
});

describe("who may write", () => {
  it("ignores strangers on email by default, pairs elsewhere, and honours overrides", () => {
    expect(unauthorizedDmBehavior("email", {}, {})).toBe("ignore");
    expect(unauthorizedDmBehavior("telegram", {}, {})).toBe("pair");
    expect(
      unauthorizedDmBehavior("email", { platforms: { email: { unauthorized_dm_behavior: "pair" } } }, {}),
    ).toBe("pair");
    expect(unauthorizedDmBehavior("email", {}, { EMAIL_UNAUTHORIZED_DM_BEHAVIOR: "pair" })).toBe("pair");
    expect(unauthorizedDmBehavior("telegram", { unauthorized_dm_behavior: "ignore" }, {})).toBe("ignore");
  });

  it("matches allowlisted addresses without case, and nothing looser", () => {
    const env = { EMAIL_ALLOWED_USERS: "Alice@Example.com" };
    const who = (userId: string) =>
      authorize(
        { platform: "email", userId, isDm: true },
        { env, approved: new Set(), unauthorizedDm: "ignore" },
      );
    expect(who("alice@example.com")).toEqual({ allowed: true, via: "allowlist" });
    expect(who("alice@example.com.evil.test")).toEqual({ allowed: false, pairing: false });
    expect(who("mallory+alice@example.com")).toEqual({ allowed: false, pairing: false });
    expect(who("alice@example.co")).toEqual({ allowed: false, pairing: false });
  });
});
