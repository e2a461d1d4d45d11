/**
 * Discord through the whole gateway: `hermes gateway run` (the built CLI) logs in with the real
 * discord.js client to a local fake of Discord (REST v10 and the Gateway WebSocket over loopback),
 * answers a DM, ignores server messages that do not mention it, answers one that does, asks for
 * approval with buttons, and `hermes send` posts over REST alone while the gateway keeps its session.
 *
 * Not covered here (nor by the fake): resuming a dropped gateway session, compressed gateway
 * traffic, sharding, voice, slash commands.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeDiscord, startFakeDiscord } from "../support/fake-discord.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

let llm: FakeLlm;
let discord: FakeDiscord;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;
let alice: ReturnType<FakeDiscord["addUser"]>;
let general = "";

beforeAll(async () => {
  llm = await startFakeLlm();
  discord = await startFakeDiscord();
  alice = discord.addUser("alice");
  const guild = discord.addGuild({ name: "Hermes Lab", channels: [{ name: "general" }] });
  general = guild.channels[0]?.id ?? "";
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiBase,
    DISCORD_ALLOWED_USERS: alice.id,
  };
  gateway = await startGatewayProcess(h, env, /^Gateway running.*discord/);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await discord?.stop();
  await llm?.close();
});

const posted = (channelId: string, predicate: (body: Record<string, unknown>) => boolean = () => true) =>
  discord
    .waitForCall("POST", (path) => path === `/channels/${channelId}/messages`)
    .then(async () => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const call = discord.calls.find(
          (c) =>
            c.method === "POST" &&
            c.path === `/channels/${channelId}/messages` &&
            c.body &&
            predicate(c.body),
        );
        if (call) return call;
        if (Date.now() > deadline)
          throw new Error(`no matching message in ${channelId}\n${gateway.stderr()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    });

describe("the Discord gateway", () => {
  it("answers a DM", async () => {
    llm.enqueue(reply().text("Hi Alice, ready when you are."));
    const sent = discord.injectMessage({ author: alice, content: "hello" });
    const answer = await posted(
      String(sent.channel_id),
      (b) => b["content"] === "Hi Alice, ready when you are.",
    );
    expect(answer.headers.authorization).toBe(`Bot ${discord.token}`);
  }, 30_000);

  it("ignores server chatter and answers a mention", async () => {
    const before = llm.chatRequests.length;
    discord.injectMessage({ channelId: general, author: alice, content: "just chatting with friends" });
    llm.enqueue(reply().text("The build is green."));
    discord.injectMessage({
      channelId: general,
      author: alice,
      content: `<@${discord.botUser.id}> build status?`,
    });
    await posted(general, (b) => b["content"] === "The build is green.");
    expect(llm.chatRequests.length).toBe(before + 1);
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).not.toContain("just chatting");
  }, 30_000);

  it("asks with buttons before a dangerous command and runs it after the press", async () => {
    const victim = join(h.cwd, "tmp-output");
    mkdirSync(victim);
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Removed it."));
    const sent = discord.injectMessage({ author: alice, content: "remove the tmp output" });
    const ask = await posted(String(sent.channel_id), (b) => Array.isArray(b["components"]));
    const rows = ask.body?.["components"] as Array<{
      components: Array<{ label: string; custom_id: string }>;
    }>;
    const approve = rows.flatMap((r) => r.components).find((b) => b.label === "Approve once");
    expect(approve?.custom_id).toMatch(/^ap:/);
    expect(existsSync(victim)).toBe(true);
    const askId = [...discord.messages.values()].find(
      (m) => Array.isArray(m["components"]) && (m["components"] as unknown[]).length > 0,
    )?.["id"] as string;
    discord.pressButton({ messageId: askId, customId: approve?.custom_id ?? "", user: alice });
    await posted(String(sent.channel_id), (b) => b["content"] === "Removed it.");
    expect(existsSync(victim)).toBe(false);
    await discord.waitForCall("POST", /^\/interactions\/\d+\/[^/]+\/callback$/);
  }, 40_000);

  it("hermes send posts over REST without opening a second gateway session", async () => {
    const sessions = discord.identifies.length;
    const sent = await runHermes(["send", "-t", `discord:${general}`, "Nightly backup done."], { ...h, env });
    expect(sent.code, sent.stderr).toBe(0);
    await posted(general, (b) => b["content"] === "Nightly backup done.");
    expect(discord.identifies.length).toBe(sessions);
  }, 30_000);
});
