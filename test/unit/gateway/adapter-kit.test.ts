/**
 * The pieces the platform adapters share: string settings, the upload check (missing, not a file,
 * empty, too large: each a `PlatformError` naming the file), typing that never fails a reply, the
 * hand-over that keeps a router failure out of the adapter's event loop, work queued per chat, opening a webhook listener
 * on a taken port, capping a webhook body, and closing a listener with a connection still open.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  chatQueue,
  closeListener,
  courtesy,
  handOver,
  listenWebhook,
  readWebhookBody,
  stringSetting,
  uploadSize,
  withAttachments,
} from "../../../src/gateway/platforms/adapter-kit.js";
import { type InboundMessage, PlatformError } from "../../../src/gateway/platforms/types.js";

describe("stringSetting", () => {
  it("takes trimmed non-empty strings only", () => {
    const settings = { url: "  https://chat.example  ", blank: "   ", port: 8080, list: ["a"] };
    expect(stringSetting(settings, "url")).toBe("https://chat.example");
    for (const key of ["blank", "port", "list", "missing"])
      expect(stringSetting(settings, key)).toBeUndefined();
  });
});

describe("uploadSize", () => {
  const dir = mkdtempSync(join(tmpdir(), "hermes-kit-"));
  const file = (name: string, bytes: number) => {
    const path = join(dir, name);
    writeFileSync(path, Buffer.alloc(bytes, 1));
    return path;
  };
  const rule = { to: "to Matrix", maxBytes: 10, limit: "Matrix uploads are limited to 10 bytes here" };

  it("gives the size of a file within the limit", async () => {
    expect(await uploadSize(file("ok.bin", 10), rule)).toBe(10);
  });

  it("refuses an empty file, a too large one, a folder and a missing path, naming each", async () => {
    const empty = file("empty.bin", 0);
    await expect(uploadSize(empty, rule)).rejects.toThrow(
      `cannot send ${empty} to Matrix: the file is empty`,
    );
    await expect(uploadSize(file("big.bin", 11), rule)).rejects.toThrow(
      "big.bin is 11 bytes; Matrix uploads are limited to 10 bytes here",
    );
    const folder = join(dir, "folder.bin");
    mkdirSync(folder);
    await expect(uploadSize(folder, rule)).rejects.toBeInstanceOf(PlatformError);
    await expect(uploadSize(join(dir, "nowhere.bin"), rule)).rejects.toThrow(/nowhere\.bin/);
  });

  it("a link to a large file is measured by what it points to", async () => {
    const link = join(dir, "small-looking.bin");
    symlinkSync(file("huge.bin", 50), link);
    await expect(uploadSize(link, rule)).rejects.toThrow(/is 50 bytes/);
  });

  it("with emptyIsOutOfRange an empty file gets the range message", async () => {
    await expect(
      uploadSize(file("e.bin", 0), {
        to: "by MMS",
        maxBytes: 5,
        limit: "MMS carries 1 byte to 5 MB",
        emptyIsOutOfRange: true,
      }),
    ).rejects.toThrow("e.bin is 0 bytes; MMS carries 1 byte to 5 MB");
  });
});

describe("courtesy, handOver, withAttachments", () => {
  it("courtesy swallows a failure and waits for success", async () => {
    await expect(
      courtesy(async () => Promise.reject(new Error("429 Too Many Requests"))),
    ).resolves.toBeUndefined();
    let ran = false;
    await courtesy(async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it("handOver reports a router failure instead of throwing into the event loop", () => {
    const lines: string[] = [];
    const message: InboundMessage = {
      source: { platform: "signal", chatType: "dm", chatId: "+1", userId: "+1" },
      text: "hi",
    };
    const handlers = {
      onMessage: () => {
        throw new Error("router broke");
      },
      onAction: () => undefined,
      onError: () => undefined,
    };
    expect(() => handOver(handlers, message, (l) => lines.push(l), "Signal message")).not.toThrow();
    expect(lines).toEqual(["the gateway failed to handle a Signal message: router broke"]);
    expect(() => handOver(undefined, message, (l) => lines.push(l), "Signal message")).not.toThrow();
  });

  it("withAttachments appends notes and media, and leaves media out when there is none", () => {
    const message: InboundMessage = {
      source: { platform: "matrix", chatType: "dm", chatId: "!r", userId: "@a" },
      text: "look",
    };
    expect(withAttachments(message, ["[a file could not be downloaded]"], [])).toEqual({
      ...message,
      text: "look\n\n[a file could not be downloaded]",
    });
    const media = [{ kind: "photo" as const, path: "/tmp/x.png" }];
    expect(withAttachments({ ...message, text: "" }, [], media)).toEqual({ ...message, text: "", media });
  });
});

describe("closeListener", () => {
  it("closes a listener with a connection still open", async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await closeListener(server);
    expect(server.listening).toBe(false);
    socket.destroy();
    await closeListener(undefined);
  });
});

describe("webhook listener", () => {
  const names = { listener: "SMS", portSetting: "SMS_WEBHOOK_PORT" };

  it("opens on a free port and refuses a taken one with the address and the setting to change", async () => {
    const first = createServer(() => undefined);
    await listenWebhook(first, "127.0.0.1", 0, names);
    const port = (first.address() as { port: number }).port;
    const second = createServer(() => undefined);
    const refused = await listenWebhook(second, "127.0.0.1", port, names).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PlatformError);
    expect(String((refused as Error).message)).toMatch(
      new RegExp(
        `^the SMS webhook listener could not open 127\\.0\\.0\\.1:${port} \\(.*EADDRINUSE.*\\): set SMS_WEBHOOK_PORT to a free port$`,
      ),
    );
    expect(second.listening).toBe(false);
    await closeListener(first);
  });

  it("hands on a body within the cap and answers 413 once for a larger one, never both", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) =>
      readWebhookBody(
        req,
        16,
        () => {
          seen.push("too large");
          res.writeHead(413).end();
        },
        (raw) => {
          seen.push(`body ${raw.toString("utf8")}`);
          res.writeHead(200).end();
        },
      ),
    );
    await listenWebhook(server, "127.0.0.1", 0, names);
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      expect((await fetch(url, { method: "POST", body: "sixteen bytes ok" })).status).toBe(200);
      const big = await fetch(url, { method: "POST", body: "x".repeat(100_000) }).then(
        (r) => r.status,
        () => "dropped",
      );
      // The answer may or may not arrive before the request is destroyed; the body never goes on.
      expect([413, "dropped"]).toContain(big);
      expect(seen).toEqual(["body sixteen bytes ok", "too large"]);
    } finally {
      await closeListener(server);
    }
  });
});

describe("chatQueue", () => {
  it("runs a chat's work in order, other chats alongside, and goes on after a failure", async () => {
    const log: string[] = [];
    const failures: string[] = [];
    const queue = chatQueue((err) => failures.push(String((err as Error).message)));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    queue.add("a", async () => {
      await gate;
      log.push("a1");
    });
    queue.add("a", async () => {
      log.push("a2");
      throw new Error("a2 broke");
    });
    queue.add("a", async () => {
      log.push("a3");
    });
    const bDone = new Promise<void>((r) =>
      queue.add("b", async () => {
        log.push("b1");
        r();
      }),
    );
    // b does not wait for a's first message, still waiting for its file.
    await bDone;
    expect(log).toEqual(["b1"]);
    release();
    await queue.idle();
    expect(log).toEqual(["b1", "a1", "a2", "a3"]);
    expect(failures).toEqual(["a2 broke"]);
  });
});
