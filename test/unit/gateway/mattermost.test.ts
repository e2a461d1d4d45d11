/**
 * The Mattermost adapter in-process against the loopback fake server: what `hermes send` and the
 * streaming path use (send without receiving, edits, REST typing, long posts, uploads) and the
 * errors a user sees when the token or URL is wrong.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMattermostAdapter } from "../../../src/gateway/platforms/mattermost.js";
import { formatForMattermost } from "../../../src/gateway/platforms/mattermost-client.js";
import type { AdapterContext } from "../../../src/gateway/platforms/types.js";
import { type FakeMattermost, startFakeMattermost } from "../../support/fake-mattermost.js";

let mm: FakeMattermost;
const dir = mkdtempSync(join(tmpdir(), "hermes-mm-"));
const noop = { onMessage: () => undefined, onAction: () => undefined, onError: () => undefined };
const ctx = (env: Record<string, string>, settings: Record<string, unknown> = {}): AdapterContext => ({
  home: dir,
  env,
  settings,
  mediaDir: join(dir, "media"),
  maxInboundMediaBytes: 1024 * 1024,
});

beforeAll(async () => {
  mm = await startFakeMattermost();
  mm.addChannel("chan1", "O", "Town");
});
afterAll(async () => {
  await mm.stop();
});

describe("Mattermost adapter (send side)", () => {
  it("sends, edits, shows typing over REST and splits long posts without a socket", async () => {
    const adapter = createMattermostAdapter(
      ctx({ MATTERMOST_URL: `${mm.url}/`, MATTERMOST_TOKEN: mm.token }),
    );
    await adapter.connect(noop, { receive: false });
    expect(mm.connections).toEqual([]);
    const sent = await adapter.send({ chatId: "chan1" }, "draft ▉");
    await adapter.edit({ chatId: "chan1" }, sent.messageId, "final **answer**");
    expect(mm.posts.find((p) => p.id === sent.messageId)?.message).toBe("final **answer**");
    await adapter.typing({ chatId: "chan1" });
    expect(mm.typing.at(-1)).toEqual({ channel_id: "chan1", parent_id: "", via: "rest" });
    const long = `${"a".repeat(3000)}\n${"b".repeat(3000)}`;
    await adapter.send({ chatId: "chan1" }, long);
    const parts = mm.posts.slice(-2).map((p) => p.message);
    expect(parts).toEqual(["a".repeat(3000), "b".repeat(3000)]);
    await adapter.disconnect();
  });

  it("uploads a file and posts it in the thread asked for", async () => {
    const adapter = createMattermostAdapter(ctx({ MATTERMOST_TOKEN: mm.token }, { url: mm.url }));
    await adapter.connect(noop, { receive: false });
    const root = mm.post("someone", "chan1", "root");
    const path = join(dir, "notes.txt");
    writeFileSync(path, "file body");
    const sent = await adapter.sendMedia(
      { chatId: "chan1", threadId: root.id },
      { kind: "document", path, caption: "see *this*" },
    );
    const post = mm.posts.find((p) => p.id === sent.messageId);
    expect(post).toMatchObject({ root_id: root.id, message: "see *this*" });
    expect(mm.fileBytes(post?.file_ids[0] ?? "")?.toString()).toBe("file body");
    await expect(
      adapter.sendMedia({ chatId: "chan1" }, { kind: "document", path: join(dir, "missing") }),
    ).rejects.toThrow(/does not exist/);
    writeFileSync(join(dir, "empty.txt"), "");
    await expect(
      adapter.sendMedia({ chatId: "chan1" }, { kind: "document", path: join(dir, "empty.txt") }),
    ).rejects.toThrow(/empty/);
  });

  it("says what to do when the token is refused, the URL is missing or the channel is closed", async () => {
    const wrong = createMattermostAdapter(
      ctx({ MATTERMOST_URL: mm.url, MATTERMOST_TOKEN: "wrong-token-123456" }),
    );
    await expect(wrong.connect(noop)).rejects.toThrow(/refused MATTERMOST_TOKEN \(401\).*Bot Accounts/);
    const noUrl = createMattermostAdapter(ctx({ MATTERMOST_TOKEN: mm.token }));
    await expect(noUrl.connect(noop)).rejects.toThrow(/MATTERMOST_URL is not set/);
    const down = createMattermostAdapter(
      ctx({ MATTERMOST_URL: "http://127.0.0.1:9", MATTERMOST_TOKEN: mm.token }),
    );
    await expect(down.connect(noop)).rejects.toThrow(/did not answer/);
    const ok = createMattermostAdapter(ctx({ MATTERMOST_URL: mm.url, MATTERMOST_TOKEN: mm.token }));
    await expect(ok.send({ chatId: "not-a-member" }, "hi")).rejects.toThrow(
      /403 Forbidden.*add the bot to the channel/,
    );
    await expect(ok.send({ chatId: "chan1" }, "  ")).rejects.toThrow(/empty/);
  });

  it("formats images as bare links and leaves the rest of the markdown alone", () => {
    expect(formatForMattermost("see ![chart](https://x/c.png) and **bold** `code`")).toBe(
      "see https://x/c.png and **bold** `code`",
    );
  });
});
