/**
 * Signal through the whole gateway: `hermes gateway run` (the built CLI) against a loopback fake of
 * signal-cli's HTTP daemon (SSE events, JSON-RPC calls). The owner's DM is answered with Signal's
 * native text styles, with typing and 👀/✅ reactions; a stranger gets a pairing code and never
 * reaches the agent; a dangerous command waits for a "yes"; photos come in and files go out as
 * attachments; group messages are answered only in allowed groups; a dropped event stream is
 * reopened with Last-Event-ID and nothing is lost or answered twice.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSignalCli, type RpcCall, startFakeSignalCli } from "../support/fake-signal-cli.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const OWNER = "+15551230001";
const STRANGER = "+15559870002";
const GROUP = "R3JvdXBJZE9uZQ==";
const OTHER_GROUP = "T3RoZXJHcm91cA==";

let llm: FakeLlm;
let signal: FakeSignalCli;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  signal = await startFakeSignalCli();
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    SIGNAL_HTTP_URL: signal.url,
    SIGNAL_ACCOUNT: signal.account,
    SIGNAL_ALLOWED_USERS: OWNER,
    SIGNAL_GROUP_ALLOWED_USERS: GROUP,
  };
  gateway = await startGatewayProcess(h, env, /^Gateway running.*signal/);
  await signal.waitForConnections(1);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await signal?.stop();
  await llm?.close();
});

/** How many model requests were turns answering `text` (its last user message), not history. */
const turnsFor = (text: string) =>
  llm.chatRequests.filter((r) => {
    const messages = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const user = messages.filter((m) => m.role === "user").at(-1);
    return JSON.stringify(user?.content ?? "").includes(text);
  }).length;

const sends = (predicate: (c: RpcCall) => boolean, after = 0) =>
  signal.waitForCall("send", predicate, 20_000, after);
const to = (number: string) => (c: RpcCall) =>
  Array.isArray(c.params["recipient"]) && (c.params["recipient"] as string[]).includes(number);

describe("the Signal gateway (signal-cli HTTP daemon)", () => {
  it("answers the owner's DM with Signal text styles, typing and reactions", async () => {
    llm.enqueue(reply().text("Hello **Owner**, try `ls`."));
    const ts = signal.dm(OWNER, "hello");
    const answer = await sends((c) => to(OWNER)(c) && String(c.params["message"]).startsWith("Hello"));
    expect(answer.params["message"]).toBe("Hello Owner, try ls.");
    expect(answer.params["textStyle"]).toEqual(["6:5:BOLD", "17:2:MONOSPACE"]);
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("hello");
    await signal.waitForCall("sendTyping", to(OWNER));
    const seen = await signal.waitForCall("sendReaction", (c) => c.params["emoji"] === "👀");
    expect(seen.params).toMatchObject({ targetAuthor: OWNER, targetTimestamp: ts, recipient: [OWNER] });
    await signal.waitForCall(
      "sendReaction",
      (c) => c.params["emoji"] === "✅" && c.params["targetTimestamp"] === ts,
    );
  }, 30_000);

  it("gives a stranger a pairing code and never reaches the agent", async () => {
    const before = llm.chatRequests.length;
    signal.dm(STRANGER, "let me in");
    const code = await sends(to(STRANGER));
    expect(String(code.params["message"])).toMatch(/hermes pairing approve signal [A-Z0-9]{8}/);
    // A stranger in an allowed group, and anyone in a group not on the list, are ignored.
    signal.group(STRANGER, GROUP, "group hello from a stranger");
    signal.group(OWNER, OTHER_GROUP, "hello from an unlisted group");
    llm.enqueue(reply().text("Still only you."));
    signal.dm(OWNER, "anyone else?");
    await sends((c) => c.params["message"] === "Still only you.");
    expect(llm.chatRequests.length).toBe(before + 1);
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).not.toContain("stranger");
    expect(signal.calls.some((c) => c.params["groupId"] === OTHER_GROUP)).toBe(false);
    expect(
      signal.calls.some((c) => c.method === "sendReaction" && c.params["targetAuthor"] === STRANGER),
    ).toBe(false);
    const list = await runHermes(["pairing", "list"], { ...h, env });
    expect(list.stdout).toContain(STRANGER);
  }, 30_000);

  it("answers the owner in an allowed group, quoting the message it answers", async () => {
    llm.enqueue(reply().text("Group answer."));
    const ts = signal.group(OWNER, GROUP, "what's up, bot?");
    const answer = await sends(
      (c) => c.params["groupId"] === GROUP && c.params["message"] === "Group answer.",
    );
    expect(answer.params).toMatchObject({ quoteTimestamp: ts, quoteAuthor: OWNER });
    expect(answer.params["recipient"]).toBeUndefined();
  }, 30_000);

  it("waits for a yes before running a dangerous command", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    const after = Date.now();
    signal.dm(OWNER, "clear the cache");
    const ask = await sends((c) => String(c.params["message"]).includes("Approval needed"), after);
    expect(String(ask.params["message"])).toContain(`rm -rf ${victim}`);
    expect(String(ask.params["message"])).toContain("Reply yes");
    expect(existsSync(victim)).toBe(true);
    signal.dm(OWNER, "yes");
    await sends((c) => c.params["message"] === "Cache cleared.", after);
    expect(existsSync(victim)).toBe(false);
  }, 40_000);

  it("brings a photo in and sends a file out as attachments", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
    const report = join(h.cwd, "report.pdf");
    writeFileSync(report, "%PDF-1.4 signal report");
    llm.enqueue(reply().text(`Got it. Here is the report.\nMEDIA:${report}`));
    const after = Date.now();
    signal.dm(OWNER, "what is this?", { attachments: [signal.attachment(png, "image/png", "dot.png")] });
    const out = await sends((c) => (c.files?.length ?? 0) > 0, after);
    expect(out.files?.[0]?.bytes.toString()).toBe("%PDF-1.4 signal report");
    expect(out.files?.[0]).toMatchObject({ contentType: "application/pdf", fileName: "report.pdf" });
    await sends((c) => c.params["message"] === "Got it. Here is the report.", after);
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body);
    const saved = /saved at ([^\]"\\]+\.png)/.exec(asked)?.[1];
    expect(saved, asked).toBeDefined();
    expect(readFileSync(saved ?? "")).toEqual(png);
    expect(signal.calls.some((c) => c.method === "getAttachment")).toBe(true);
  }, 30_000);

  it("reconnects a dropped event stream without losing or repeating a message", async () => {
    const connections = signal.connections.length;
    signal.dropStreams();
    // Sent while no one listens: the daemon keeps it for the reconnect's Last-Event-ID.
    llm.enqueue(reply().text("Heard you after the drop."));
    signal.dm(OWNER, "message during the outage");
    await signal.waitForConnections(connections + 1);
    expect(signal.connections.at(-1)).toMatch(/^\d+-\d+$/);
    await sends((c) => c.params["message"] === "Heard you after the drop.");

    // A daemon that no longer knows the id replays its whole buffer: every old message again.
    signal.dropStreams({ forgetIds: true });
    await signal.waitForConnections(connections + 2);
    llm.enqueue(reply().text("Only this is new."));
    signal.dm(OWNER, "a fresh message");
    await sends((c) => c.params["message"] === "Only this is new.");
    // Replayed messages come before the fresh one on the stream, so they would have run by now.
    for (const text of ["message during the outage", "anyone else?", "a fresh message"])
      expect(turnsFor(text), text).toBe(1);
    expect(signal.calls.filter((c) => c.params["message"] === "Heard you after the drop.").length).toBe(1);
    expect(
      signal.calls.filter((c) => String(c.params["message"]).includes("hermes pairing approve")).length,
    ).toBe(1);
  }, 40_000);

  it("hermes send delivers to a group without the agent while the gateway runs", async () => {
    const sent = await runHermes(["send", "-t", `signal:group:${GROUP}`, "Deploy **done**."], { ...h, env });
    expect(sent.code, sent.stderr).toBe(0);
    const post = await sends((c) => c.params["groupId"] === GROUP && c.params["message"] === "Deploy done.");
    expect(post.params["textStyle"]).toEqual(["7:4:BOLD"]);
  }, 30_000);
});
