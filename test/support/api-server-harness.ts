/**
 * An API server in-process, its agent pointed at the fake LLM, with a temporary HERMES_HOME and
 * the official `openai` client aimed at it.
 *
 *   const h = await startApiHarness();
 *   h.llm.enqueue(reply().text("hi"));
 *   await h.client.chat.completions.create({ model: "hermes-agent", messages: [...] });
 *   await h.close();
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach } from "vitest";
import { defaultConfig, type HermesConfig } from "../../src/config/defaults.js";
import { type ApiServer, type ApiServerOptions, startApiServer } from "../../src/gateway/api-server/index.js";
import { type FakeLlm, startFakeLlm } from "./fake-llm.js";

export const API_KEY = "test-api-key-0123456789";

export interface ApiHarness {
  llm: FakeLlm;
  server: ApiServer;
  client: OpenAI;
  home: string;
  /** `server.url` + `/v1`. */
  base: string;
  /** `fetch` against the server with the right key (override headers to test auth). */
  call(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** A config pointing the agent at `llm` with no retries (a failing fake fails the turn at once). */
export function fakeLlmConfig(llm: FakeLlm): HermesConfig {
  const config = defaultConfig();
  config.model = { ...config.model, provider: "custom", base_url: llm.url, default: "fake-model" };
  config.agent = { ...config.agent, api_max_retries: 0 };
  return config;
}

/**
 * Harnesses for the calling file's tests: `start` opens one (as `startApiHarness`), and the last
 * one started is closed after each test unless the test closed it itself and said so (`forget`).
 */
export function harnessPerTest() {
  let current: ApiHarness | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    async start(options: Parameters<typeof startApiHarness>[0] = {}): Promise<ApiHarness> {
      current = await startApiHarness(options);
      return current;
    },
    forget(): void {
      current = undefined;
    },
  };
}

export async function startApiHarness(
  options: Partial<ApiServerOptions> & { llm?: FakeLlm } = {},
): Promise<ApiHarness> {
  const { llm: given, ...serverOptions } = options;
  const llm = given ?? (await startFakeLlm());
  const root = mkdtempSync(join(tmpdir(), "hermes-api-server-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const server = await startApiServer({
    home,
    cwd,
    config: fakeLlmConfig(llm),
    env: {},
    port: 0,
    key: API_KEY,
    ...serverOptions,
  });
  const base = `${server.url}/v1`;
  const client = new OpenAI({ baseURL: base, apiKey: API_KEY, maxRetries: 0 });
  return {
    llm,
    server,
    client,
    home,
    base,
    call: (path, init = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          "content-type": "application/json",
          ...(init.headers ?? {}),
        },
      }),
    close: async () => {
      await server.close();
      if (!given) await llm.close();
    },
  };
}

/** The messages of a request the fake LLM received, as role/content pairs. */
export function sentMessages(body: unknown): { role: string; content: string }[] {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  return messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  }));
}
