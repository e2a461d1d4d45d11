import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  interactivePayload,
  isMediaId,
  isOutsideWindow,
  metaSignature,
  parseCloudWebhook,
  parseGraphError,
  templatePayload,
  verifyHandshake,
  verifyMetaSignature,
} from "../../../src/gateway/platforms/whatsapp-cloud-wire.js";
import { markdownToWhatsApp } from "../../../src/gateway/platforms/whatsapp-format.js";

const SECRET = "app-secret-0001";
const body = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');

describe("Meta's webhook signature", () => {
  it("accepts Meta's own HMAC of the raw body, in either hex case", () => {
    const hex = createHmac("sha256", SECRET).update(body).digest("hex");
    expect(verifyMetaSignature(SECRET, body, `sha256=${hex}`)).toBe(true);
    expect(verifyMetaSignature(SECRET, body, `sha256=${hex.toUpperCase()}`)).toBe(true);
    expect(metaSignature(SECRET, body)).toBe(`sha256=${hex}`);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["no prefix", createHmac("sha256", SECRET).update(body).digest("hex")],
    ["sha1 prefix", `sha1=${createHmac("sha1", SECRET).update(body).digest("hex")}`],
    ["truncated", `sha256=${createHmac("sha256", SECRET).update(body).digest("hex").slice(0, 63)}`],
    ["another secret", `sha256=${createHmac("sha256", "other").update(body).digest("hex")}`],
    ["another body", `sha256=${createHmac("sha256", SECRET).update(`${body} `).digest("hex")}`],
    ["not hex", `sha256=${"z".repeat(64)}`],
    [
      "two signatures",
      `sha256=${"0".repeat(64)},sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
    ],
  ])("refuses a %s signature", (_name, header) => {
    expect(verifyMetaSignature(SECRET, body, header)).toBe(false);
  });

  it("refuses everything when no secret is configured", () => {
    expect(verifyMetaSignature("", body, metaSignature("", body))).toBe(false);
  });
});

describe("the subscription handshake", () => {
  const q = (s: string) => new URLSearchParams(s);
  it("echoes the challenge for the right token", () => {
    expect(verifyHandshake(q("hub.mode=subscribe&hub.verify_token=tok&hub.challenge=42"), "tok")).toEqual({
      ok: true,
      challenge: "42",
    });
  });
  it.each([
    ["no token configured", "hub.mode=subscribe&hub.verify_token=&hub.challenge=1", "", 503],
    ["a wrong token", "hub.mode=subscribe&hub.verify_token=tok2&hub.challenge=1", "tok", 403],
    ["a prefix of the token", "hub.mode=subscribe&hub.verify_token=to&hub.challenge=1", "tok", 403],
    ["another mode", "hub.mode=unsubscribe&hub.verify_token=tok&hub.challenge=1", "tok", 400],
    ["no challenge", "hub.mode=subscribe&hub.verify_token=tok", "tok", 400],
  ])("refuses %s", (_n, query, token, status) => {
    const r = verifyHandshake(q(query), token);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.status).toBe(status);
  });
});

const hook = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  object: "whatsapp_business_account",
  entry: [
    {
      id: "1",
      changes: [
        {
          field: "messages",
          value: { contacts: [{ wa_id: "155", profile: { name: "Ann" } }], messages, ...extra },
        },
      ],
    },
  ],
});

describe("parseCloudWebhook", () => {
  it("reads text, captions, media, button presses and replies", () => {
    const got = parseCloudWebhook(
      hook([
        { from: "155", id: "w1", timestamp: "1700000000", type: "text", text: { body: "hi" } },
        {
          from: "155",
          id: "w2",
          type: "image",
          image: { id: "m1", mime_type: "image/jpeg", caption: "look" },
          context: { id: "w0" },
        },
        {
          from: "155",
          id: "w3",
          type: "interactive",
          interactive: { type: "button_reply", button_reply: { id: "ap:1:once", title: "Approve" } },
        },
        {
          from: "155",
          id: "w4",
          type: "document",
          document: { id: "m2", filename: "a.pdf", mime_type: "application/pdf" },
        },
        { from: "155", id: "w5", type: "voice", voice: { id: "m3", mime_type: "audio/ogg; codecs=opus" } },
        { from: "155", id: "w6", type: "location", location: {} },
      ]),
    );
    expect(got.map((m) => m.id)).toEqual(["w1", "w2", "w3", "w4", "w5", "w6"]);
    expect(got[0]).toMatchObject({ from: "155", name: "Ann", text: "hi", timestamp: 1700000000 });
    expect(got[1]).toMatchObject({
      text: "look",
      replyTo: "w0",
      media: { type: "image", id: "m1", mimeType: "image/jpeg" },
    });
    expect(got[2]).toMatchObject({ text: "Approve", buttonId: "ap:1:once" });
    expect(got[3]?.media).toMatchObject({ type: "document", fileName: "a.pdf" });
    expect(got[4]?.media?.mimeType).toBe("audio/ogg");
    expect(got[5]?.unsupported).toBe("location");
  });

  it("skips statuses, other fields, other objects and malformed entries", () => {
    expect(parseCloudWebhook(hook([], { statuses: [{ id: "w1", status: "read" }] }))).toEqual([]);
    expect(parseCloudWebhook({ ...hook([{ from: "1", id: "x", type: "text" }]), object: "page" })).toEqual(
      [],
    );
    for (const junk of [
      null,
      7,
      "x",
      [],
      { entry: "no" },
      { object: "whatsapp_business_account", entry: [null, 3] },
    ])
      expect(parseCloudWebhook(junk)).toEqual([]);
    expect(
      parseCloudWebhook(hook([{ id: "no-sender", type: "text" }, { from: "1", type: "text" }, "x"])),
    ).toEqual([]);
  });

  it("marks group-shaped messages", () => {
    const [m] = parseCloudWebhook(
      hook([{ from: "155", id: "g", type: "text", text: { body: "x" }, group_id: "G" }]),
    );
    expect(m?.group).toBe(true);
  });
});

describe("outbound payloads", () => {
  it("uses reply buttons up to three and a list past that, with titles cut to Meta's limits", () => {
    const three = interactivePayload("1", "Pick", [
      [{ label: "A very long approve label here", data: "a" }],
      [{ label: "B", data: "b" }],
    ]);
    const inter = three["interactive"] as {
      type: string;
      action: { buttons: Array<{ reply: { title: string } }> };
    };
    expect(inter.type).toBe("button");
    expect(inter.action.buttons[0]?.reply.title.length).toBeLessThanOrEqual(20);
    const four = interactivePayload("1", "x".repeat(2000), [
      [
        { label: "1", data: "1" },
        { label: "2", data: "2" },
      ],
      [
        { label: "3", data: "3" },
        { label: "4", data: "4" },
      ],
    ]);
    const list = four["interactive"] as {
      type: string;
      body: { text: string };
      action: { sections: Array<{ rows: unknown[] }> };
    };
    expect(list.type).toBe("list");
    expect(list.body.text.length).toBe(1024);
    expect(list.action.sections[0]?.rows).toHaveLength(4);
  });

  it("folds a template parameter into what Meta accepts", () => {
    const p = templatePayload("1", "reply", "en_US", "Line one\n\n  Line\ttwo     spaced");
    const t = p["template"] as { components: Array<{ parameters: Array<{ text: string }> }> };
    expect(t.components[0]?.parameters[0]?.text).toBe("Line one · Line two spaced");
    expect(templatePayload("1", "reply", "en_US", undefined)["template"]).toEqual({
      name: "reply",
      language: { code: "en_US" },
    });
  });

  it("tells the re-engagement refusal and transient errors apart", () => {
    const window = parseGraphError(400, { error: { code: 131047, message: "Re-engagement message" } });
    expect(isOutsideWindow(window)).toBe(true);
    expect(window.transient).toBe(false);
    expect(parseGraphError(503, {}).transient).toBe(true);
    expect(parseGraphError(400, { error: { code: 2, is_transient: true } }).transient).toBe(true);
    expect(parseGraphError(400, "junk").message).toBe("HTTP 400");
  });

  it("accepts only plain media ids", () => {
    expect(isMediaId("1234567890")).toBe(true);
    for (const bad of ["../../etc/passwd", "a/b", "", "x".repeat(200), "a b", "%2e%2e"])
      expect(isMediaId(bad)).toBe(false);
  });
});

describe("markdownToWhatsApp", () => {
  it.each([
    ["**bold** and __bold__", "*bold* and *bold*"],
    ["*it* and _it_", "_it_ and _it_"],
    ["~~gone~~", "~gone~"],
    ["# Title", "*Title*"],
    ["## **Already bold**", "*Already bold*"],
    ["[docs](https://x.y) and [https://a.b](https://a.b)", "docs (https://x.y) and https://a.b"],
    ["* item\n+ other", "- item\n- other"],
    ["`**kept**` code", "`**kept**` code"],
    ["```ts\nconst a = **b**;\n```", "```\nconst a = **b**;\n```"],
    ["```\nunclosed", "```\nunclosed\n```"],
    ["snake_case_name and 2*3*4", "snake_case_name and 2*3*4"],
    ["a\u200bb\u00a0c", "ab c"],
    ["one\n\n\n\ntwo", "one\n\ntwo"],
  ])("%j → %j", (input, want) => {
    expect(markdownToWhatsApp(input)).toBe(want);
  });
});
