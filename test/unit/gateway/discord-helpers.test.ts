/** A whole adapter process's lifetime against the fake of Discord, and the adapter's pure helpers. */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import {
  buttonComponents,
  mediaKindFor,
  splitForDiscord,
  stripBotMention,
  toDiscordMarkdown,
} from "../../../src/gateway/platforms/discord.js";
import { fake, home, useDiscordBench } from "../../support/discord-adapter-bench.js";

useDiscordBench();

describe("process lifetime", () => {
  it("a process that receives a file, replies and disconnects exits on its own", async () => {
    const script = join(home, "lifetime.mts");
    const adapterPath = resolve(import.meta.dirname, "../../../src/gateway/platforms/discord.ts");
    const ctx = { home, settings: {}, mediaDir: join(home, "media"), maxInboundMediaBytes: 1024 };
    writeFileSync(
      script,
      [
        `import { createDiscordAdapter } from ${JSON.stringify(adapterPath)};`,
        `const adapter = createDiscordAdapter({ ...${JSON.stringify(ctx)}, env: process.env });`,
        "const got = new Promise((resolve) => {",
        "  adapter.connect({ onMessage: resolve, onAction() {}, onError: console.error }).then(() => console.log('ready'));",
        "});",
        "const message = await got;",
        "await adapter.send({ chatId: message.source.chatId }, 'got ' + message.media.length + ' file');",
        "await adapter.disconnect();",
        "console.log('disconnected');",
      ].join("\n"),
    );
    // One process (tsx as a loader, not its CLI wrapper), so a kill on timeout reaches it.
    const tsx = pathToFileURL(resolve(import.meta.dirname, "../../../node_modules/tsx/dist/loader.mjs")).href;
    const env = {
      PATH: process.env.PATH ?? "",
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiBase,
    };
    const child = spawn(process.execPath, ["--import", tsx, script], { env, stdio: "pipe" });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    try {
      await vi.waitFor(() => expect(output).toContain("ready"), { timeout: 25_000, interval: 50 });
      fake.injectMessage({ content: "here", attachments: [{ filename: "a.txt", data: "hello" }] });
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(output).toContain("disconnected");
    expect(fake.calls.find((c) => c.method === "POST")?.body).toMatchObject({ content: "got 1 file" });
  }, 45_000);
});

describe("pure helpers", () => {
  it("mediaKindFor sorts by MIME type, voice only with the voice-message flag", () => {
    const types = ["image/png", "audio/ogg", "audio/ogg; codecs=opus", "video/webm", "application/zip", null];
    expect(types.map((t) => mediaKindFor(t, false))).toEqual([
      "photo",
      "audio",
      "audio",
      "video",
      "document",
      "document",
    ]);
    expect(mediaKindFor("audio/ogg", true)).toBe("voice");
  });

  it("stripBotMention removes both mention spellings", () => {
    expect(stripBotMention("<@42> hi <@!42>  there", "42")).toBe("hi there");
    expect(stripBotMention("<@421> not me", "42")).toBe("<@421> not me");
  });

  it("toDiscordMarkdown leaves code blocks and shallow headings alone", () => {
    const text = "### Plan\n```\n#### not a heading\n| a | b |\n|---|---|\n```\n###### Deep";
    expect(toDiscordMarkdown(text)).toBe(
      "### Plan\n```\n#### not a heading\n| a | b |\n|---|---|\n```\n**Deep**",
    );
  });

  it("splitForDiscord keeps code fences balanced across pieces", () => {
    const code = Array.from({ length: 200 }, (_, i) => `const value${i} = ${i};`).join("\n");
    const pieces = splitForDiscord(`Here:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`, 1000);
    expect(pieces.length).toBeGreaterThan(2);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(1000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(splitForDiscord("short")).toEqual(["short"]);
    expect(splitForDiscord("x".repeat(4500), 2000).every((p) => p.length <= 2000)).toBe(true);
  });

  it("buttonComponents caps rows and buttons at Discord's limits", () => {
    const row = Array.from({ length: 7 }, (_, i) => ({ label: `b${i}`, data: `d${i}` }));
    const rows = buttonComponents(Array.from({ length: 7 }, () => row));
    expect(rows).toHaveLength(5);
    expect(rows[0]?.components).toHaveLength(5);
  });
});
