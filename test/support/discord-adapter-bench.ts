import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createDiscordAdapter } from "../../src/gateway/platforms/discord.js";
import type {
  AdapterContext,
  AdapterHandlers,
  InboundAction,
  InboundMessage,
  PlatformAdapter,
} from "../../src/gateway/platforms/types.js";
import { type FakeDiscord, startFakeDiscord } from "./fake-discord.js";

export const WAIT = { timeout: 15_000, interval: 20 };

/** Handlers that record what the adapter delivers; `onAction` runs too when given. */
export function recorder(onAction?: (action: InboundAction) => void) {
  const [messages, actions, errors] = [[] as InboundMessage[], [] as InboundAction[], [] as string[]];
  const handlers: AdapterHandlers = {
    onMessage: (message) => messages.push(message),
    onAction: (action) => [actions.push(action), onAction?.(action)],
    onError: (line) => errors.push(line),
  };
  return { handlers, messages, actions, errors };
}

export let fake: FakeDiscord;
export let home: string;
export const adapters: PlatformAdapter[] = [];

export function context(
  overrides: Partial<AdapterContext> = {},
  env: Record<string, string> = {},
): AdapterContext {
  return {
    home,
    env: { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase, ...env },
    settings: {},
    mediaDir: join(home, "cache", "media"),
    maxInboundMediaBytes: 1024 * 1024,
    ...overrides,
  };
}

/** Registers an adapter for disconnection after the test. */
export function tracked(adapter: PlatformAdapter): PlatformAdapter {
  adapters.push(adapter);
  return adapter;
}

/** Starts a new fake after a test stopped the current one. */
export async function startNewFake(): Promise<void> {
  fake = await startFakeDiscord();
}

export async function restartFake(options?: Parameters<typeof startFakeDiscord>[0]): Promise<void> {
  await fake.stop();
  fake = await startFakeDiscord(options);
}

export async function connected(
  overrides: Partial<AdapterContext> = {},
  onAction?: (action: InboundAction) => void,
): Promise<{ adapter: PlatformAdapter; events: ReturnType<typeof recorder> }> {
  const adapter = tracked(createDiscordAdapter(context(overrides), { connectTimeoutMs: 20_000 }));
  const events = recorder(onAction);
  await adapter.connect(events.handlers);
  return { adapter, events };
}

/** A fresh fake and home before each test of the calling file; adapters disconnected after. */
export function useDiscordBench(): void {
  beforeEach(async () => {
    fake = await startFakeDiscord();
    home = mkdtempSync(join(tmpdir(), "hermes-discord-"));
  });

  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });
}
