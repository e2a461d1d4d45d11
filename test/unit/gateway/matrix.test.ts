/**
 * The Matrix adapter's pure parts: who and what reaches the router (mention gating, notices,
 * edits, our own echoes, ghost users, allowed rooms, threads), the markdown it sends, relations,
 * route parsing, settings, and the attachment cipher (a tampered file is refused).
 */
import { describe, expect, it } from "vitest";
import { matrixLoginProblem, matrixSettings } from "../../../src/gateway/platforms/matrix-config.js";
import {
  editContent,
  matrixRoute,
  matrixTextContent,
  relationFor,
} from "../../../src/gateway/platforms/matrix-format.js";
import {
  findMention,
  matrixInbound,
  stripReplyFallback,
} from "../../../src/gateway/platforms/matrix-inbound.js";
import {
  decryptAttachment,
  encryptAttachment,
  parseMxc,
} from "../../../src/gateway/platforms/matrix-media.js";

const BOT = "@hermes:example.org";
const bot = { userId: BOT, displayName: "Hermes", threads: new Set<string>(["$ours"]) };
const settings = matrixSettings({ MATRIX_HOMESERVER: "https://m.example.org" }, {});
const event = (
  content: Record<string, unknown>,
  extra: Partial<{ sender: string; roomId: string; type: string }> = {},
) => ({
  eventId: "$e1",
  roomId: extra.roomId ?? "!room:example.org",
  sender: extra.sender ?? "@alice:example.org",
  type: extra.type ?? "m.room.message",
  content,
});
const group = { name: "Team", direct: false };
const dm = { direct: true };

describe("matrixInbound", () => {
  it("passes a DM on without a mention, with the full id as userName", () => {
    const r = matrixInbound(event({ msgtype: "m.text", body: "hello" }), dm, bot, settings);
    expect(r.deliver && r.message).toMatchObject({
      text: "hello",
      source: { chatType: "dm", userId: "@alice:example.org", userName: "@alice:example.org" },
    });
  });

  it("drops room messages without a mention, and never trusts a display name look-alike elsewhere", () => {
    for (const body of [
      "hello all",
      "hermes is a god",
      "talk to @hermes:evil.org",
      "email hermes@example.org",
    ]) {
      expect(matrixInbound(event({ msgtype: "m.text", body }), group, bot, settings).deliver, body).toBe(
        false,
      );
    }
  });

  it("takes a mention by id, pill, m.mentions or the display-name prefix, and cuts it out", () => {
    const cases: Array<Record<string, unknown>> = [
      { msgtype: "m.text", body: `${BOT} status?` },
      { msgtype: "m.text", body: "@hermes status?" },
      { msgtype: "m.text", body: "Hermes: status?" },
      { msgtype: "m.text", body: "status?", "m.mentions": { user_ids: [BOT] } },
      {
        msgtype: "m.text",
        body: "status?",
        formatted_body: `<a href="https://matrix.to/#/${BOT}">Hermes</a> status?`,
      },
    ];
    for (const content of cases) {
      const r = matrixInbound(event(content), group, bot, settings);
      expect(r.deliver && r.message.text, JSON.stringify(content)).toBe("status?");
      expect(r.deliver && r.message.source.threadId).toBe("$e1"); // auto-thread rooted at the message
    }
  });

  it("follows its own threads without mentions, and free-response rooms", () => {
    const inThread = {
      msgtype: "m.text",
      body: "more",
      "m.relates_to": { rel_type: "m.thread", event_id: "$ours" },
    };
    const r = matrixInbound(event(inThread), group, bot, settings);
    expect(r.deliver && r.message.source.threadId).toBe("$ours");
    const other = { ...inThread, "m.relates_to": { rel_type: "m.thread", event_id: "$theirs" } };
    expect(matrixInbound(event(other), group, bot, settings).deliver).toBe(false);
    const free = matrixSettings(
      { MATRIX_HOMESERVER: "https://x", MATRIX_FREE_RESPONSE_ROOMS: "!room:example.org" },
      {},
    );
    expect(matrixInbound(event({ msgtype: "m.text", body: "hi" }), group, bot, free).deliver).toBe(true);
  });

  it("ignores its own messages, notices, edits, ghost users, other event types and rooms outside the list", () => {
    expect(
      matrixInbound(event({ msgtype: "m.text", body: "x" }, { sender: BOT }), dm, bot, settings).deliver,
    ).toBe(false);
    expect(matrixInbound(event({ msgtype: "m.notice", body: "x" }), dm, bot, settings).deliver).toBe(false);
    const edit = {
      msgtype: "m.text",
      body: "* x",
      "m.relates_to": { rel_type: "m.replace", event_id: "$a" },
    };
    expect(matrixInbound(event(edit), dm, bot, settings).deliver).toBe(false);
    const ghosts = matrixSettings(
      { MATRIX_HOMESERVER: "https://x", MATRIX_IGNORE_USER_PATTERNS: "^@telegram_" },
      {},
    );
    expect(
      matrixInbound(event({ msgtype: "m.text", body: "x" }, { sender: "@telegram_1:x" }), dm, bot, ghosts)
        .deliver,
    ).toBe(false);
    expect(matrixInbound(event({ body: "x" }, { type: "m.reaction" }), dm, bot, settings).deliver).toBe(
      false,
    );
    const only = matrixSettings({ MATRIX_HOMESERVER: "https://x", MATRIX_ALLOWED_ROOMS: "!other:x" }, {});
    expect(matrixInbound(event({ msgtype: "m.text", body: `${BOT} hi` }), group, bot, only).deliver).toBe(
      false,
    );
    expect(matrixInbound(event({ msgtype: "m.text", body: "hi" }), dm, bot, only).deliver).toBe(true);
  });

  it("describes files (plain or encrypted) and keeps a caption but not a bare file name", () => {
    const plain = matrixInbound(
      event({
        msgtype: "m.image",
        body: "dot.png",
        url: "mxc://x/abc",
        info: { mimetype: "image/png", size: 3 },
      }),
      dm,
      bot,
      settings,
    );
    expect(plain.deliver && plain.message.text).toBe("");
    expect(plain.deliver && plain.media[0]).toMatchObject({
      kind: "photo",
      url: "mxc://x/abc",
      mimeType: "image/png",
      size: 3,
    });
    const file = { url: "mxc://x/enc", key: { k: "a" }, iv: "b", hashes: { sha256: "c" } };
    const enc = matrixInbound(
      event({ msgtype: "m.file", body: "see this", filename: "a.pdf", file }),
      dm,
      bot,
      settings,
    );
    expect(enc.deliver && enc.message.text).toBe("see this");
    expect(enc.deliver && enc.media[0]?.file?.url).toBe("mxc://x/enc");
    const broken = matrixInbound(event({ msgtype: "m.image", body: "x.png" }), dm, bot, settings);
    expect(broken).toMatchObject({ deliver: false, report: expect.stringContaining("no file URL") });
  });

  it("strips reply fallbacks", () => {
    expect(stripReplyFallback("> <@a:x> old\n> more\n\nnew text")).toBe("new text");
    expect(stripReplyFallback("plain")).toBe("plain");
    expect(findMention({}, "no mention here", bot).mentioned).toBe(false);
  });
});

describe("matrix-format", () => {
  it("renders HTML, escapes raw HTML and drops script links", () => {
    const c = matrixTextContent("**bold** <script>alert(1)</script> [x](javascript:alert(1))");
    expect(c.body).toContain("**bold**");
    expect(c.formatted_body).toContain("<strong>bold</strong>");
    expect(c.formatted_body).not.toContain("<script>");
    expect(c.formatted_body).not.toContain("javascript:");
    expect(matrixTextContent("just words")).toEqual({ msgtype: "m.text", body: "just words" });
    expect(matrixTextContent("**raw**", true)).toEqual({ msgtype: "m.text", body: "**raw**" });
  });

  it("builds thread, reply and edit relations", () => {
    expect(relationFor({ threadId: "$t" })).toEqual({
      rel_type: "m.thread",
      event_id: "$t",
      is_falling_back: true,
      "m.in_reply_to": { event_id: "$t" },
    });
    expect(relationFor({ threadId: "$t", replyTo: "$r" })).toMatchObject({
      is_falling_back: false,
      "m.in_reply_to": { event_id: "$r" },
    });
    expect(relationFor({ replyTo: "$r" })).toEqual({ "m.in_reply_to": { event_id: "$r" } });
    expect(relationFor({})).toBeUndefined();
    const edit = editContent("$m", matrixTextContent("new **text**"));
    expect(edit).toMatchObject({
      body: "* new **text**",
      "m.relates_to": { rel_type: "m.replace", event_id: "$m" },
    });
    expect((edit["m.new_content"] as { body: string }).body).toBe("new **text**");
  });

  it("puts a room id cut by `hermes send -t matrix:…` back together", () => {
    expect(matrixRoute("!abc", "example.org")).toEqual({ roomId: "!abc:example.org" });
    expect(matrixRoute("!abc:example.org", "$thread")).toEqual({
      roomId: "!abc:example.org",
      threadId: "$thread",
    });
    expect(matrixRoute("!abc:example.org", undefined)).toEqual({ roomId: "!abc:example.org" });
  });
});

describe("matrix settings and media", () => {
  it("reads upstream's variables and says what is missing", () => {
    expect(matrixSettings({ MATRIX_ENCRYPTION: "true" }, {}).e2ee).toBe("required");
    expect(matrixSettings({ MATRIX_ENCRYPTION: "true", MATRIX_E2EE_MODE: "optional" }, {}).e2ee).toBe(
      "optional",
    );
    expect(matrixSettings({}, { require_mention: false }).requireMention).toBe(false);
    expect(
      matrixSettings({ MATRIX_REQUIRE_MENTION: "true" }, { require_mention: false }).requireMention,
    ).toBe(true);
    expect(matrixLoginProblem(matrixSettings({}, {}))).toContain("MATRIX_HOMESERVER");
    expect(matrixLoginProblem(matrixSettings({ MATRIX_HOMESERVER: "matrix.org" }, {}))).toContain(
      "http(s) URL",
    );
    expect(matrixLoginProblem(matrixSettings({ MATRIX_HOMESERVER: "https://m" }, {}))).toContain(
      "MATRIX_ACCESS_TOKEN",
    );
    expect(
      matrixLoginProblem(matrixSettings({ MATRIX_HOMESERVER: "https://m", MATRIX_PASSWORD: "p" }, {})),
    ).toContain("MATRIX_USER_ID");
    expect(
      matrixLoginProblem(matrixSettings({ MATRIX_HOMESERVER: "https://m", MATRIX_ACCESS_TOKEN: "t" }, {})),
    ).toBeUndefined();
  });

  it("round-trips an encrypted attachment and refuses a tampered one", () => {
    const sealed = encryptAttachment(Buffer.from("secret bytes"));
    const file = { ...sealed.file, url: "mxc://x/y" };
    expect(sealed.data.toString()).not.toContain("secret");
    expect(decryptAttachment(sealed.data, file).toString()).toBe("secret bytes");
    const tampered = Buffer.from(sealed.data);
    tampered[0] = (tampered[0] ?? 0) ^ 1;
    expect(() => decryptAttachment(tampered, file)).toThrow(/hash does not match/);
    expect(() => decryptAttachment(sealed.data, { ...file, hashes: {} })).toThrow(/no SHA-256/);
  });

  it("accepts only mxc:// URLs for downloads", () => {
    expect(parseMxc("mxc://example.org/AbC_1-2")).toEqual({ server: "example.org", mediaId: "AbC_1-2" });
    for (const bad of ["https://evil/x", "mxc://example.org/../../etc", "mxc://a/b/c", "mxc:///x"])
      expect(parseMxc(bad), bad).toBeUndefined();
  });
});
