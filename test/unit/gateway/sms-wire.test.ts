import twilio from "twilio";
import { describe, expect, it } from "vitest";
import {
  markdownToSms,
  parseSmsWebhook,
  redactPhone,
  twilioSignature,
  verifyTwilioSignature,
} from "../../../src/gateway/platforms/sms-wire.js";

const TOKEN = "12345678901234567890123456789012";
const URL_ = "https://hermes.example.com/webhooks/twilio";
const params = { From: "+15551112222", To: "+15550009999", Body: "hello & goodbye=1", MessageSid: "SM1" };

describe("Twilio webhook signatures", () => {
  it("matches the official twilio package's signature", () => {
    const ours = twilioSignature(TOKEN, URL_, new URLSearchParams(params));
    expect(ours).toBe(twilio.getExpectedTwilioSignature(TOKEN, URL_, params));
    expect(verifyTwilioSignature(TOKEN, URL_, new URLSearchParams(params), ours)).toBe(true);
  });

  it("accepts the URL with or without the default port, as Twilio's validators do", () => {
    const withPort = twilio.getExpectedTwilioSignature(
      TOKEN,
      "https://hermes.example.com:443/webhooks/twilio",
      params,
    );
    expect(verifyTwilioSignature(TOKEN, URL_, new URLSearchParams(params), withPort)).toBe(true);
  });

  it.each([
    ["a missing signature", undefined],
    ["an empty signature", ""],
    ["a signature of another token", twilio.getExpectedTwilioSignature("x".repeat(32), URL_, params)],
    [
      "a signature for another URL",
      twilio.getExpectedTwilioSignature(TOKEN, "https://evil.example.com/webhooks/twilio", params),
    ],
    [
      "a signature with a changed body",
      twilio.getExpectedTwilioSignature(TOKEN, URL_, { ...params, Body: "hello" }),
    ],
    [
      "a signature with an added parameter",
      twilio.getExpectedTwilioSignature(TOKEN, URL_, { ...params, NumMedia: "0" }),
    ],
    ["a truncated signature", twilio.getExpectedTwilioSignature(TOKEN, URL_, params).slice(0, 10)],
  ])("refuses %s", (_what, signature) => {
    expect(verifyTwilioSignature(TOKEN, URL_, new URLSearchParams(params), signature)).toBe(false);
  });

  it("refuses everything when no auth token is configured", () => {
    const sig = twilioSignature("", URL_, new URLSearchParams(params));
    expect(verifyTwilioSignature("", URL_, new URLSearchParams(params), sig)).toBe(false);
  });

  it("signs repeated parameters in the order sent", () => {
    const p = new URLSearchParams([
      ["A", "2"],
      ["A", "1"],
      ["B", "x"],
    ]);
    expect(twilioSignature(TOKEN, URL_, p)).not.toBe(
      twilioSignature(
        TOKEN,
        URL_,
        new URLSearchParams([
          ["A", "1"],
          ["A", "2"],
          ["B", "x"],
        ]),
      ),
    );
  });
});

describe("parseSmsWebhook", () => {
  it("reads sender, text, sid and MMS media (at most ten)", () => {
    const p = new URLSearchParams({
      ...params,
      NumMedia: "2",
      MediaUrl0: "https://m/0",
      MediaContentType0: "image/jpeg",
      MediaUrl1: "https://m/1",
    });
    expect(parseSmsWebhook(p)).toEqual({
      from: "+15551112222",
      to: "+15550009999",
      body: "hello & goodbye=1",
      messageSid: "SM1",
      media: [
        { url: "https://m/0", contentType: "image/jpeg" },
        { url: "https://m/1", contentType: undefined },
      ],
    });
    expect(parseSmsWebhook(new URLSearchParams({ ...params, NumMedia: "999" }))?.media).toEqual([]);
    expect(parseSmsWebhook(new URLSearchParams({ ...params, NumMedia: "-3" }))?.media).toEqual([]);
    expect(parseSmsWebhook(new URLSearchParams({ MessageStatus: "delivered" }))).toBeUndefined();
  });
});

describe("markdownToSms", () => {
  it.each([
    ["**bold** _it_ ~~x~~ `code`", "bold it x code"],
    ["# Head\n- a\n- b", "Head\n• a\n• b"],
    ["[docs](https://d.io) and [https://a.b](https://a.b)", "docs (https://d.io) and https://a.b"],
    ["```py\nprint(1 ** 2)\n```", "print(1 ** 2)"],
    ["snake_case and 2*3*4", "snake_case and 2*3*4"],
  ])("%j", (md, sms) => expect(markdownToSms(md)).toBe(sms));

  it("redacts phone numbers for logs", () => {
    expect(redactPhone("+15551234567")).toBe("+1555***4567");
    expect(redactPhone("+123")).toBe("****");
  });
});
