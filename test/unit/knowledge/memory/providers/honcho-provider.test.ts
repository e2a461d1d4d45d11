import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  chunkMessage,
  HonchoProvider,
} from "../../../../../src/knowledge/memory/providers/honcho/provider.js";
import type { ProviderSessionInfo } from "../../../../../src/knowledge/memory/providers/types.js";
import { type FakeHoncho, startFakeHoncho } from "../../../../support/fake-honcho.js";

let fake: FakeHoncho;
beforeAll(async () => {
  fake = await startFakeHoncho();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.context = {};
  fake.dialectic = "";
});

const KEY = "hk-test-secret-0123456789";

function provider(settings: Record<string, unknown> | undefined, env: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), "hermes-honcho-provider-"));
  const home = join(root, "home");
  mkdirSync(home);
  if (settings) writeFileSync(join(home, "honcho.json"), JSON.stringify(settings));
  const cwd = join(root, "my-project");
  mkdirSync(cwd);
  const info: ProviderSessionInfo = { sessionId: "20260101_000000_abcdef", cwd, platform: "cli" };
  return { p: new HonchoProvider({ home, env: { HOME: root, ...env } }), info, home };
}

const configured = () => ({ apiKey: KEY, baseUrl: fake.url, peerName: "alice", timeout: 2 });
const signal = () => AbortSignal.timeout(5_000);

describe("HonchoProvider status", () => {
  it("is off with a clear line and no request when there is no key", () => {
    const { p } = provider(undefined);
    const status = p.status();
    expect(status.active).toBe(false);
    expect(status.detail).toMatch(
      /^off: no API key\. Set HONCHO_API_KEY in \.env or run `hermes memory setup honcho`/,
    );
    expect(fake.requests).toHaveLength(0);
  });

  it("is on with a key, shows it masked, and names the workspace and URL", () => {
    const { p } = provider(configured());
    const status = p.status();
    expect(status.active).toBe(true);
    expect(status.detail).toBe(`on: workspace hermes at ${fake.url}`);
    expect(JSON.stringify(status)).not.toContain(KEY);
    expect(status.settings?.["api key"]).toMatch(/^hk-t\*\*\*\* \(honcho\.json apiKey\)$/);
  });

  it("a local self-hosted Honcho needs no key; `enabled: false` turns it off", () => {
    expect(provider({ baseUrl: fake.url }).p.status().active).toBe(true);
    expect(provider({ ...configured(), enabled: false }).p.status().detail).toMatch(/^off: disabled/);
    expect(provider(undefined, { HONCHO_API_KEY: KEY }).p.status().active).toBe(true);
  });

  it("a broken honcho.json is a status line, not a crash", () => {
    const { p, home } = provider(undefined);
    writeFileSync(join(home, "honcho.json"), "{oops");
    const broken = new HonchoProvider({ home, env: { HOME: join(home, "..") } });
    expect(broken.status().active).toBe(false);
    expect(broken.status().detail).toMatch(/^off: .*honcho\.json is not valid JSON/);
    expect(p.status().active).toBe(false);
  });
});

describe("HonchoProvider over the real SDK against the fake", () => {
  it("prefetches the summary, representation, peer card and a dialectic answer, as the SDK sends them", async () => {
    fake.context = {
      summary: "We set up CI.",
      representation: "Alice prefers Rust.",
      card: ["Name: Alice", "Lives in Lyon"],
    };
    fake.dialectic = "Alice is debugging a flaky test.";
    const { p, info } = provider(configured());
    const text = await p.prefetch("why does the test fail?", info, signal());
    expect(text).toBe(
      "## Session Summary\nWe set up CI.\n\n## User Representation\nAlice prefers Rust.\n\n" +
        "## User Peer Card\nName: Alice\nLives in Lyon\n\n## Dialectic\nAlice is debugging a flaky test.",
    );
    const paths = fake.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain("POST /v3/workspaces");
    expect(paths).toContain("POST /v3/workspaces/hermes/peers");
    expect(paths).toContain("POST /v3/workspaces/hermes/sessions");
    expect(paths).toContain("GET /v3/workspaces/hermes/sessions/my-project/context");
    expect(paths).toContain("POST /v3/workspaces/hermes/peers/alice/chat");
    const context = fake.requests.find((r) => r.path.endsWith("/context"));
    expect(context?.query).toMatchObject({
      summary: "true",
      peer_target: "alice",
      peer_perspective: "hermes",
    });
    const chat = fake.requests.find((r) => r.path.endsWith("/chat"));
    expect(chat?.body).toMatchObject({ session_id: "my-project", reasoning_level: "low" });
    expect(String((chat?.body as { query?: string } | undefined)?.query)).toContain(
      "why does the test fail?",
    );
    expect(fake.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(fake.sessions.get("my-project")).toEqual({ alice: {}, hermes: {} });
  });

  it("keeps the base context between cadence refreshes and cuts the dialectic to dialecticMaxChars", async () => {
    fake.context = { representation: "Likes tea." };
    fake.dialectic = "word ".repeat(100);
    const { p, info } = provider({
      ...configured(),
      contextCadence: 2,
      dialecticCadence: 2,
      dialecticMaxChars: 40,
    });
    const first = await p.prefetch("first question", info, signal());
    expect(first).toMatch(/## Dialectic\n(word ){6,8}word…$/);
    fake.context = { representation: "Changed." };
    const second = await p.prefetch("second question", info, signal());
    expect(second).toBe("## User Representation\nLikes tea.");
    const third = await p.prefetch("third question", info, signal());
    expect(third).toContain("Changed.");
    expect(fake.requests.filter((r) => r.path.endsWith("/chat"))).toHaveLength(2);
  });

  it("recalls nothing in tools mode and offers no tools in context mode", async () => {
    const tools = provider({ ...configured(), recallMode: "tools" });
    expect(await tools.p.prefetch("anything at all", tools.info, signal())).toBe("");
    expect(fake.requests).toHaveLength(0);
    expect(tools.p.tools.map((t) => t.name)).toEqual([
      "honcho_profile",
      "honcho_search",
      "honcho_context",
      "honcho_reasoning",
      "honcho_conclude",
    ]);
    expect(provider({ ...configured(), recallMode: "context" }).p.tools).toEqual([]);
  });

  it("syncs the user's and the assistant's message under their peers, split at messageMaxChars", async () => {
    const { p, info } = provider({ ...configured(), messageMaxChars: 30 });
    await p.syncTurn({ user: "remember that I use fish shell", assistant: "a".repeat(48) }, info, signal());
    const stored = fake.messages.get("my-project") ?? [];
    expect(stored.map((m) => [m.peer_id, m.content])).toEqual([
      ["alice", "remember that I use fish shell"],
      ["hermes", "a".repeat(30)],
      ["hermes", `[continued] ${"a".repeat(18)}`],
    ]);
  });

  it("writes nothing with saveMessages: false", async () => {
    const { p, info } = provider({ ...configured(), saveMessages: false });
    await p.syncTurn({ user: "hello there", assistant: "hi" }, info, signal());
    expect(fake.requests).toHaveLength(0);
  });

  it("maps sessions by strategy, manual map and gateway user", async () => {
    const perSession = provider({ ...configured(), sessionStrategy: "per-session" });
    await perSession.p.syncTurn({ user: "u", assistant: "a" }, perSession.info, signal());
    expect(fake.messages.has("20260101_000000_abcdef")).toBe(true);
    const manual = provider(undefined);
    writeFileSync(
      join(manual.home, "honcho.json"),
      JSON.stringify({ ...configured(), sessions: { [manual.info.cwd]: "named session!" } }),
    );
    const remapped = new HonchoProvider({ home: manual.home, env: { HOME: join(manual.home, "..") } });
    await remapped.syncTurn({ user: "u", assistant: "a" }, manual.info, signal());
    expect(fake.messages.has("named-session")).toBe(true);
    const gateway = provider({ ...configured(), runtimePeerPrefix: "tg_" });
    await gateway.p.syncTurn(
      { user: "u", assistant: "a" },
      { ...gateway.info, platform: "telegram", userId: "42" },
      signal(),
    );
    expect(fake.messages.get("telegram-42")?.[0]?.peer_id).toBe("tg_42");
  });

  it("without peerName a CLI session mints no peer and says how to set one", async () => {
    const { p, info } = provider({ apiKey: KEY, baseUrl: fake.url });
    await expect(p.prefetch("a real question", info, signal())).rejects.toThrow(/--peer-name/);
    expect(fake.requests).toHaveLength(0);
  });

  it("throws on a 500 from Honcho, and gives up at the caller's deadline when Honcho hangs", async () => {
    const { p, info } = provider({ ...configured(), timeout: 30 });
    fake.failNext(/\/context$/, 5);
    await expect(p.prefetch("a real question", info, signal())).rejects.toThrow();
    fake.hangNext(/\/context$/, 5);
    const started = Date.now();
    await expect(p.prefetch("a real question", info, AbortSignal.timeout(300))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("runs its tools through the SDK", async () => {
    fake.context = { card: ["Name: Alice"] };
    fake.dialectic = "She likes tea.";
    const { p, info } = provider(configured());
    const tool = (name: string) => p.tools.find((t) => t.name === name);
    expect(await tool("honcho_profile")?.run({}, info, signal())).toBe("- Name: Alice");
    expect(await tool("honcho_reasoning")?.run({ query: "what does she drink?" }, info, signal())).toBe(
      "She likes tea.",
    );
    await p.syncTurn({ user: "I love green tea", assistant: "noted" }, info, signal());
    expect(await tool("honcho_search")?.run({ query: "green tea" }, info, signal())).toBe(
      "[my-project] alice: I love green tea",
    );
    expect(
      await tool("honcho_conclude")?.run({ action: "add", content: "Drinks green tea" }, info, signal()),
    ).toBe("Saved a conclusion about alice.");
    expect(await tool("honcho_conclude")?.run({ action: "list" }, info, signal())).toMatch(
      /^- c-\d+: Drinks green tea$/,
    );
    await expect(tool("honcho_search")?.run({ query: "  " }, info, signal())).rejects.toThrow(
      /"query" is required/,
    );
  });
});

describe("chunkMessage", () => {
  it.each([
    ["short", 10, ["short"]],
    ["x".repeat(10), 10, ["x".repeat(10)]],
    ["x".repeat(25), 20, ["x".repeat(20), "[continued] xxxxx"]],
  ])("chunks %j at %i", (text, max, chunks) => {
    expect(chunkMessage(text, max)).toEqual(chunks);
  });
});
