/**
 * Mattermost through the whole gateway: `hermes gateway run` (the built CLI, with the official
 * `@mattermost/client`) against a loopback fake of a Mattermost server (v4 REST + WebSocket). The
 * owner's DM is answered (streaming on: one post, edited while it grows) with typing and 👀/✅ reactions; a stranger
 * gets a pairing code and never reaches the agent; channel posts are answered only when they
 * @mention the bot, inside the thread they came from; a dangerous command waits for a "yes"; files
 * go both ways; a dropped WebSocket is resumed (the server replays) or, when the server forgot the
 * connection, caught up over REST, and nothing is lost or answered twice.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm, turnsAsking } from "../support/fake-llm.js";
import { type FakeMattermost, type MmPost, startFakeMattermost } from "../support/fake-mattermost.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const OWNER = "owneruserid000000000000001";
const STRANGER = "strangeruserid00000000002";
const DM = "dmchannel00000000000000001";
const STRANGER_DM = "dmchannel00000000000000002";
const TOWN = "townsquare0000000000000001";

let llm: FakeLlm;
let mm: FakeMattermost;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  mm = await startFakeMattermost();
  mm.addUser(OWNER, "owner");
  mm.addUser(STRANGER, "stranger");
  mm.addChannel(DM, "D");
  mm.addChannel(STRANGER_DM, "D");
  mm.addChannel(TOWN, "O", "Town Square");
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      'display:\n  tool_progress: "off"\n  platforms:\n    mattermost:\n      streaming: true\n',
    ),
  );
  env = { MATTERMOST_URL: mm.url, MATTERMOST_TOKEN: mm.token, MATTERMOST_ALLOWED_USERS: OWNER };
  gateway = await startGatewayProcess(h, env, /^Gateway running.*mattermost/);
  await mm.waitForConnections(1);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await mm?.stop();
  await llm?.close();
});

/** How many model requests were turns answering `text` (its last user message), not history. */
const turnsFor = (text: string) => turnsAsking(llm, text);

const botPost = (message: string) => mm.waitForPost((p) => p.message === message);
const inChannel = (channel: string) => (p: MmPost) => p.channel_id === channel;

describe("the Mattermost gateway (@mattermost/client against a fake server)", () => {
  it("answers the owner's DM with typing and reactions", async () => {
    llm.enqueue(reply().text("Hello **owner**, here is ![a chart](https://example.com/c.png)."));
    const asked = mm.post(OWNER, DM, "hello");
    const answer = await botPost("Hello **owner**, here is https://example.com/c.png.");
    expect(answer).toMatchObject({ channel_id: DM, root_id: "" });
    expect(answer.props).toMatchObject({ disable_mentions: true });
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("hello");
    await mm.waitFor(() => mm.typing.find((t) => t.channel_id === DM && t.via === "ws"), "typing");
    await mm.waitFor(
      () => mm.reactions.find((r) => r.post_id === asked.id && r.emoji_name === "white_check_mark"),
      "the ✅ reaction",
    );
    expect(
      mm.reactions.find((r) => r.post_id === asked.id && r.emoji_name === "eyes" && !r.removed),
    ).toBeTruthy();
    // Streaming is on: the answer is one post (edited while it grows), not one post per step.
    expect(mm.posts.filter((p) => p.user_id === mm.bot.id && p.channel_id === DM).length).toBe(1);
  }, 30_000);

  it("gives a stranger a pairing code and never reaches the agent", async () => {
    const before = llm.chatRequests.length;
    mm.post(STRANGER, STRANGER_DM, "let me in");
    const code = await mm.waitForPost(inChannel(STRANGER_DM));
    expect(code.message).toMatch(/hermes pairing approve mattermost [A-Z0-9]{8}/);
    // A stranger mentioning the bot in a channel, and the owner not mentioning it, reach nothing.
    mm.post(STRANGER, TOWN, "@hermes tell me a secret from the stranger");
    mm.post(OWNER, TOWN, "just chatting with people, not the bot");
    llm.enqueue(reply().text("Still only you."));
    mm.post(OWNER, DM, "anyone else?");
    await botPost("Still only you.");
    expect(llm.chatRequests.length).toBe(before + 1);
    expect(JSON.stringify(llm.chatRequests)).not.toContain("stranger");
    expect(JSON.stringify(llm.chatRequests)).not.toContain("just chatting");
    expect(mm.posts.some((p) => p.user_id === mm.bot.id && p.channel_id === TOWN)).toBe(false);
    const list = await runHermes(["pairing", "list"], { ...h, env });
    expect(list.stdout).toContain(STRANGER);
  }, 30_000);

  it("answers an @mention in a channel, and a reply in a thread inside that thread", async () => {
    llm.enqueue(reply().text("Channel answer."));
    mm.post(OWNER, TOWN, "@hermes what's up?");
    const flat = await botPost("Channel answer.");
    expect(flat).toMatchObject({ channel_id: TOWN, root_id: "" });
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("what's up?");
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).not.toContain("@hermes");

    const root = mm.post(OWNER, TOWN, "a thread about deploys");
    llm.enqueue(reply().text("Thread answer."));
    mm.post(OWNER, TOWN, "@hermes summarise this thread", { root_id: root.id });
    const threaded = await botPost("Thread answer.");
    expect(threaded).toMatchObject({ channel_id: TOWN, root_id: root.id });
  }, 30_000);

  it("waits for a yes before running a dangerous command", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    mm.post(OWNER, DM, "clear the cache");
    const ask = await mm.waitForPost((p) => p.message.includes("Approval needed"));
    expect(ask.message).toContain(`rm -rf ${victim}`);
    expect(ask.message).toContain("Reply **yes**");
    expect(existsSync(victim)).toBe(true);
    mm.post(OWNER, DM, "yes");
    await botPost("Cache cleared.");
    expect(existsSync(victim)).toBe(false);
  }, 40_000);

  it("brings a file in and sends a file out", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
    const report = join(h.cwd, "report.pdf");
    writeFileSync(report, "%PDF-1.4 mattermost report");
    llm.enqueue(reply().text(`Got it. Here is the report.\nMEDIA:${report}`));
    const fileId = mm.upload(DM, png, "dot.png", "image/png");
    mm.post(OWNER, DM, "what is this?", { file_ids: [fileId] });
    const out = await mm.waitForPost((p) => p.file_ids.length > 0);
    const sent = out.file_ids[0] ?? "";
    expect(mm.fileBytes(sent)?.toString()).toBe("%PDF-1.4 mattermost report");
    expect(mm.fileInfo(sent)).toMatchObject({ name: "report.pdf", mime_type: "application/pdf" });
    expect(out.channel_id).toBe(DM);
    await botPost("Got it. Here is the report.");
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body);
    const saved = /saved at ([^\]"\\]+\.png)/.exec(asked)?.[1];
    expect(saved, asked).toBeDefined();
    expect(readFileSync(saved ?? "")).toEqual(png);
  }, 30_000);

  it("resumes a dropped WebSocket without losing or repeating a message", async () => {
    const connections = mm.connections.length;
    mm.dropSockets();
    // Posted while the socket is down: the server queues it for the resumed connection.
    llm.enqueue(reply().text("Heard you after the drop."));
    mm.post(OWNER, DM, "message during the outage");
    await mm.waitForConnections(connections + 1);
    expect(mm.connections.at(-1)).not.toBe("");
    await botPost("Heard you after the drop.");

    // A server that forgot the connection cannot replay: the adapter reads the gap over REST.
    mm.dropSockets({ forget: true });
    llm.enqueue(reply().text("Caught up over REST."));
    mm.post(OWNER, DM, "message while the server forgot us");
    await mm.waitForConnections(connections + 2);
    await botPost("Caught up over REST.");
    expect(mm.calls.some((c) => c.method === "GET" && c.path === `/channels/${DM}/posts`)).toBe(true);

    llm.enqueue(reply().text("Only this is new."));
    mm.post(OWNER, DM, "a fresh message");
    await botPost("Only this is new.");
    for (const text of [
      "message during the outage",
      "message while the server forgot us",
      "anyone else?",
      "a fresh message",
    ])
      expect(turnsFor(text), text).toBe(1);
    expect(mm.posts.filter((p) => p.message === "Heard you after the drop.").length).toBe(1);
    expect(mm.posts.filter((p) => p.message.includes("hermes pairing approve")).length).toBe(1);
  }, 60_000);

  it("hermes send delivers into a thread without the agent while the gateway runs", async () => {
    const root = mm.post(OWNER, TOWN, "release thread");
    const sent = await runHermes(["send", "-t", `mattermost:${TOWN}:${root.id}`, "Deploy **done**."], {
      ...h,
      env,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const post = await botPost("Deploy **done**.");
    expect(post).toMatchObject({ channel_id: TOWN, root_id: root.id });
  }, 30_000);
});
