import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CredentialPoolOptions,
  configuredStrategy,
  maskKey,
  openCredentialPool,
  type PoolEntry,
  poolKey,
} from "../../../src/ai/credential-pool.js";
import { CLEARED_STATUS, fingerprint } from "../../../src/config/auth-store.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";

const python = spawnSync("python3", ["-c", "import json"]).status === 0;
const T0 = 1_700_000_000;
const KEY_A = "sk-or-v1-aaaaaaaaaaaaaaaaaaaaaaaaaaaa1111";
const KEY_B = "sk-or-v1-bbbbbbbbbbbbbbbbbbbbbbbbbbbb2222";
const KEY_C = "sk-or-v1-cccccccccccccccccccccccccccc3333";
const KEY_ENV = "sk-or-v1-eeeeeeeeeeeeeeeeeeeeeeeeeeee9999";

const homes: string[] = [];
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-pool-"));
  homes.push(dir);
  return dir;
}

interface Clock {
  now: () => number;
  advance(seconds: number): void;
}

function clock(start = T0): Clock {
  let t = start;
  return {
    now: () => t,
    advance: (s) => {
      t += s;
    },
  };
}

function manual(id: string, key: string, priority: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    label: id,
    auth_type: "api_key",
    priority,
    source: "manual",
    access_token: key,
    ...CLEARED_STATUS,
    request_count: 0,
    ...extra,
  };
}

function writePool(
  home: string,
  provider: string,
  entries: unknown[],
  extra: Record<string, unknown> = {},
): void {
  const data = { version: 1, providers: {}, credential_pool: { [provider]: entries }, ...extra };
  writeFileSync(join(home, "auth.json"), `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

function stored(home: string, provider = "openrouter"): Record<string, unknown>[] {
  return JSON.parse(readFileSync(join(home, "auth.json"), "utf8")).credential_pool[provider];
}

function storedById(home: string, id: string, provider = "openrouter"): Record<string, unknown> | undefined {
  return stored(home, provider).find((e) => e["id"] === id);
}

/** Three manual keys a, b, c, stored out of priority order. */
function threeKeys(home: string, extra: Record<string, Record<string, unknown>> = {}): void {
  writePool(home, "openrouter", [
    manual("c", KEY_C, 2, extra["c"]),
    manual("a", KEY_A, 0, extra["a"]),
    manual("b", KEY_B, 1, extra["b"]),
  ]);
}

function pool(home: string, options: Partial<CredentialPoolOptions> = {}) {
  return openCredentialPool({ home, provider: "openrouter", env: {}, ...options });
}

const ids = (entries: readonly (PoolEntry | undefined)[]) => entries.map((e) => e?.id);

describe("selection strategies", () => {
  it("fill_first (the default) takes the highest-priority available key every time", () => {
    const home = tempHome();
    threeKeys(home);
    const p = pool(home);
    expect(p.strategy).toBe("fill_first");
    expect(ids(p.entries())).toEqual(["a", "b", "c"]);
    expect(ids([p.select(), p.select(), p.select()])).toEqual(["a", "a", "a"]);
  });

  it("round_robin cycles in priority order and skips keys cooling down", async () => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const p = pool(home, {
      config: { credential_pool_strategies: { openrouter: "round_robin" } },
      now: c.now,
    });
    expect(p.strategy).toBe("round_robin");
    expect(ids([p.select(), p.select(), p.select(), p.select()])).toEqual(["a", "b", "c", "a"]);
    await p.markExhausted("b", { status: 429 });
    expect(ids([p.select(), p.select(), p.select()])).toEqual(["c", "a", "c"]);
  });

  it("random picks with the injected source and never a key cooling down", async () => {
    const home = tempHome();
    threeKeys(home);
    const rolls = [0.0, 0.5, 0.99, 0.5];
    const p = pool(home, { strategy: "random", random: () => rolls.shift() ?? 0, now: clock().now });
    expect(p.peek()?.id).toBe("a");
    expect(ids([p.select(), p.select(), p.select()])).toEqual(["a", "b", "c"]);
    await p.markExhausted("b", { status: 401 });
    // 0.5 of the two left (a, c) is c.
    expect(p.select()?.id).toBe("c");
  });

  it("least_used prefers the lowest request count, counting requests still in flight", async () => {
    const home = tempHome();
    threeKeys(home, { a: { request_count: 5 }, b: { request_count: 2 }, c: { request_count: 2 } });
    const p = pool(home, { config: { credential_pool_strategies: { openrouter: "LEAST_USED" } } });
    expect(p.strategy).toBe("least_used");
    const first = p.select();
    expect(first?.id).toBe("b");
    // b is in flight, so c (2) beats b (2 + 1).
    expect(p.select()?.id).toBe("c");
    await p.markSuccess("b");
    await p.markSuccess("c");
    expect(p.entries().map((e) => e.requestCount)).toEqual([5, 3, 3]);
  });

  it("takes the effective HermesConfig as is", () => {
    const config: HermesConfig = { ...defaultConfig(), credential_pool_strategies: { openrouter: "random" } };
    expect(pool(tempHome(), { config }).strategy).toBe("random");
    expect(pool(tempHome(), { config: defaultConfig() }).strategy).toBe("fill_first");
  });

  it("warns about an unknown strategy and uses fill_first", () => {
    expect(
      configuredStrategy({ credential_pool_strategies: { openrouter: "fastest" } }, "openrouter"),
    ).toEqual({
      strategy: "fill_first",
      warning: expect.stringContaining('unknown strategy "fastest"'),
    });
    const warnings: string[] = [];
    const home = tempHome();
    pool(home, {
      config: { credential_pool_strategies: { openrouter: "fastest" } },
      onWarning: (m) => warnings.push(m),
    });
    expect(warnings).toHaveLength(1);
  });

  it("does not select OAuth entries it cannot refresh, nor dead ones", () => {
    const home = tempHome();
    writePool(home, "openrouter", [
      manual("o", "oauth-token", 0, { auth_type: "oauth", source: "device_code" }),
      manual("d", KEY_A, 1, { last_status: "dead" }),
      manual("b", KEY_B, 2),
    ]);
    const p = pool(home);
    expect(p.select()?.id).toBe("b");
    expect(p.entries().map((e) => e.usable)).toEqual([false, false, true]);
  });
});

describe("cooldowns", () => {
  it.each([
    [401, 300],
    [403, 300],
    [429, 3600],
    [402, 3600],
    [500, 3600],
    [undefined, 3600],
  ])("status %s benches the key for %i s, then it is back", async (status, seconds) => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const p = pool(home, { now: c.now });
    await p.markExhausted(p.select() as PoolEntry, { status });
    expect(p.select()?.id).toBe("b");
    c.advance(seconds - 1);
    expect(p.select()?.id).toBe("b");
    c.advance(1);
    expect(p.select()?.id).toBe("a");
  });

  it("a billing failure keeps the hour even when it came as a 403", async () => {
    const home = tempHome();
    threeKeys(home, {
      c: { last_status: "exhausted", last_status_at: T0, last_error_code: 403, last_error_reason: "billing" },
    });
    const p = pool(home, { now: clock().now });
    await p.markExhausted("a", { status: 403, reason: "billing" });
    expect(p.entries().map((e) => e.cooldownUntil)).toEqual([T0 + 3600, undefined, T0 + 3600]);
  });

  it("writes the status to auth.json at once, in Python's fields", async () => {
    const home = tempHome();
    threeKeys(home);
    const p = pool(home, { now: clock().now });
    await p.markExhausted("a", { status: 429, reason: "rate_limit", message: "Too Many Requests" });
    expect(storedById(home, "a")).toMatchObject({
      last_status: "exhausted",
      last_status_at: T0,
      last_error_code: 429,
      last_error_reason: "rate_limit",
      last_error_message: "Too Many Requests",
      last_error_reset_at: T0 + 3600,
      access_token: KEY_A,
    });
  });

  it.each([
    ["epoch seconds", T0 + 90],
    ["epoch milliseconds", (T0 + 90) * 1000],
    ["an ISO string", new Date((T0 + 90) * 1000).toISOString()],
    ["a Date", new Date((T0 + 90) * 1000)],
  ])("uses the provider's reset time given as %s", async (_what, resetAt) => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const p = pool(home, { now: c.now });
    await p.markExhausted("a", { status: 429, resetAt });
    expect(storedById(home, "a")?.["last_error_reset_at"]).toBe(T0 + 90);
    c.advance(89);
    expect(p.select()?.id).toBe("b");
    c.advance(1);
    expect(p.select()?.id).toBe("a");
  });

  it("uses Retry-After seconds or ms, and ignores a reset time already past", async () => {
    const home = tempHome();
    threeKeys(home);
    const p = pool(home, { now: clock().now });
    await p.markExhausted("a", { status: 429, retryAfterSeconds: 30 });
    expect(p.entries()[0]?.cooldownUntil).toBe(T0 + 30);
    await p.markExhausted("c", { status: 429, retryAfterMs: 1500 });
    expect(p.entries()[2]?.cooldownUntil).toBe(T0 + 1.5);
    await p.markExhausted("b", { status: 429, resetAt: T0 - 10 });
    expect(p.entries()[1]?.cooldownUntil).toBe(T0 + 3600);
  });

  it("reads a cooldown Python wrote without a reset time from last_status_at and the code", () => {
    const home = tempHome();
    threeKeys(home, { a: { last_status: "exhausted", last_status_at: T0 - 100, last_error_code: 401 } });
    const c = clock();
    const p = pool(home, { now: c.now });
    expect(p.select()?.id).toBe("b");
    expect(p.entries()[0]?.cooldownUntil).toBe(T0 + 200);
    c.advance(200);
    expect(p.select()?.id).toBe("a");
  });

  it("a success clears the status at once and counts the request", async () => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const p = pool(home, { now: c.now });
    await p.markExhausted("a", { status: 401 });
    c.advance(300);
    await p.markSuccess(p.select() as PoolEntry);
    expect(storedById(home, "a")).toMatchObject({ ...CLEARED_STATUS, request_count: 1 });
  });
});

describe("request counts", () => {
  it("are written at most every countFlushSeconds, adding to what other processes wrote", async () => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const p = pool(home, { now: c.now, countFlushSeconds: 60 });
    const other = pool(home, { now: c.now, countFlushSeconds: 60 });
    const before = readFileSync(join(home, "auth.json"), "utf8");
    await p.markSuccess("a");
    await p.markSuccess("a");
    expect(readFileSync(join(home, "auth.json"), "utf8")).toBe(before);
    expect(p.entries()[0]?.requestCount).toBe(2);
    await other.markSuccess("a");
    await other.flush();
    expect(storedById(home, "a")?.["request_count"]).toBe(1);
    c.advance(60);
    await p.markSuccess("a");
    expect(storedById(home, "a")?.["request_count"]).toBe(4);
    expect(p.entries()[0]?.requestCount).toBe(4);
  });
});

describe("environment and config keys", () => {
  it("join the pool after stored keys with source env:NAME, deduplicated by key", () => {
    const home = tempHome();
    writePool(home, "openrouter", [manual("a", KEY_A, 0)]);
    const p = pool(home, { env: { OPENROUTER_API_KEY: ` ${KEY_ENV} ` } });
    expect(p.entries().map((e) => [e.source, e.label, e.persisted])).toEqual([
      ["manual", "a", true],
      ["env:OPENROUTER_API_KEY", "OPENROUTER_API_KEY", false],
    ]);
    expect(p.entries()[1]?.apiKey).toBe(KEY_ENV);
    const same = pool(home, { env: { OPENROUTER_API_KEY: KEY_A } });
    expect(same.entries().map((e) => e.source)).toEqual(["manual"]);
  });

  it("takes every variable of the provider once, and config.yaml's model.api_key first", () => {
    const home = tempHome();
    const p = openCredentialPool({
      home,
      provider: "google",
      env: { GOOGLE_API_KEY: "g-key-1234567890", GEMINI_API_KEY: "g-key-1234567890" },
      config: { model: { provider: "gemini", api_key: "config-key-123456" } },
    });
    expect(p.provider).toBe("gemini");
    expect(p.entries().map((e) => e.source)).toEqual(["model_config", "env:GOOGLE_API_KEY"]);
  });

  it("takes a custom_providers key for custom:<name>", () => {
    const home = tempHome();
    const p = openCredentialPool({
      home,
      provider: "custom:My Box",
      config: {
        custom_providers: [{ name: "my box", base_url: "http://box/v1", api_key: "box-key-0000000" }],
      },
    });
    expect(p.provider).toBe("custom:my-box");
    expect(p.entries().map((e) => [e.source, e.baseUrl])).toEqual([["config:my box", "http://box/v1"]]);
  });

  it("stores an env key's status with a fingerprint, never the key itself", async () => {
    const home = tempHome();
    writePool(home, "openrouter", [manual("a", KEY_A, 0)]);
    const p = pool(home, { env: { OPENROUTER_API_KEY: KEY_ENV }, now: clock().now });
    const env = p.entries()[1] as PoolEntry;
    await p.markExhausted(env, { status: 429 });
    const text = readFileSync(join(home, "auth.json"), "utf8");
    expect(text).not.toContain(KEY_ENV);
    const record = stored(home).find((e) => e["source"] === "env:OPENROUTER_API_KEY");
    expect(record).toMatchObject({
      label: "OPENROUTER_API_KEY",
      last_status: "exhausted",
      secret_fingerprint: fingerprint(KEY_ENV),
    });
    expect(record).not.toHaveProperty("access_token");
    // Another process with the same variable sees the cooldown.
    const other = pool(home, { env: { OPENROUTER_API_KEY: KEY_ENV }, now: clock().now });
    expect(other.entries()[1]).toMatchObject({ status: "exhausted", persisted: true });
    expect(other.hasAlternative("a")).toBe(false);
  });

  it("two processes recording the same env key keep one stored entry", async () => {
    const home = tempHome();
    const env = { OPENROUTER_API_KEY: KEY_ENV };
    const c = clock();
    const one = pool(home, { env, now: c.now });
    const two = pool(home, { env, now: c.now });
    const fromTwo = two.select() as PoolEntry;
    await one.markExhausted(one.select() as PoolEntry, { status: 429 });
    c.advance(10);
    await two.markExhausted(fromTwo, { status: 401 });
    expect(stored(home)).toEqual([
      expect.objectContaining({
        source: "env:OPENROUTER_API_KEY",
        last_error_code: 401,
        last_status_at: T0 + 10,
      }),
    ]);
  });

  it("forgets a recorded status when the variable now holds a different key", async () => {
    const home = tempHome();
    const p = pool(home, { env: { OPENROUTER_API_KEY: KEY_ENV }, now: clock().now });
    await p.markExhausted(p.select() as PoolEntry, { status: 402 });
    const rotated = pool(home, { env: { OPENROUTER_API_KEY: KEY_B }, now: clock().now });
    expect(rotated.entries()[0]).toMatchObject({ status: undefined, cooldownUntil: undefined });
    expect(rotated.select()?.apiKey).toBe(KEY_B);
  });

  it("skips a suppressed source, and lists a stored env entry whose variable is not set here as unusable", () => {
    const home = tempHome();
    writePool(
      home,
      "openrouter",
      [
        {
          id: "e",
          label: "X",
          priority: 0,
          source: "env:OPENROUTER_API_KEY",
          secret_fingerprint: "sha256:00",
        },
      ],
      { suppressed_sources: { deepseek: ["env:DEEPSEEK_API_KEY"] } },
    );
    const p = pool(home);
    expect(p.entries().map((e) => [e.id, e.usable, e.apiKey])).toEqual([["e", false, ""]]);
    expect(p.select()).toBeUndefined();
    const ds = openCredentialPool({
      home,
      provider: "deepseek",
      env: { DEEPSEEK_API_KEY: "ds-key-000000000" },
    });
    expect(ds.entries()).toEqual([]);
  });
});

describe("a pool of one key", () => {
  it("still returns the key while it cools down, with no alternative to rotate to", async () => {
    const home = tempHome();
    const p = pool(home, { env: { OPENROUTER_API_KEY: KEY_ENV }, now: clock().now });
    const only = p.select() as PoolEntry;
    expect(p.hasAlternative()).toBe(false);
    await p.markExhausted(only, { status: 429 });
    expect(p.select()?.apiKey).toBe(KEY_ENV);
    expect(p.hasAlternative(only)).toBe(false);
    expect(p.nextAfterFailure(only)).toBeUndefined();
    expect(p.hasAvailable()).toBe(false);
    expect(p.nextAvailableAt()).toBe(T0 + 3600);
  });

  it("a larger pool with every key cooling down selects nothing, so the caller falls back", async () => {
    const home = tempHome();
    writePool(home, "openrouter", [manual("a", KEY_A, 0), manual("b", KEY_B, 1)]);
    const p = pool(home, { now: clock().now });
    expect(p.hasAlternative()).toBe(true);
    await p.markExhausted("a", { status: 429 });
    expect(p.nextAfterFailure("a")?.id).toBe("b");
    await p.markExhausted("b", { status: 401 });
    expect(p.nextAfterFailure("b")).toBeUndefined();
    expect(p.select()).toBeUndefined();
    expect(p.nextAvailableAt()).toBe(T0 + 300);
  });
});

describe("sharing auth.json", () => {
  it("a key one pool marks exhausted is skipped by another after its mtime check", async () => {
    const home = tempHome();
    threeKeys(home);
    const c = clock();
    const one = pool(home, { now: c.now });
    const two = pool(home, { now: c.now });
    expect(two.select()?.id).toBe("a");
    await one.markExhausted("a", { status: 429 });
    expect(two.select()?.id).toBe("b");
  });

  it.skipIf(!python)("sees a cooldown Python Hermes writes, and keeps the fields Python added", async () => {
    const home = tempHome();
    threeKeys(home);
    const p = pool(home, { now: clock().now });
    expect(p.select()?.id).toBe("a");
    const script = [
      "import json,os,sys,tempfile",
      "p=sys.argv[1]; d=json.load(open(p))",
      "e=[x for x in d['credential_pool']['openrouter'] if x['id']=='a'][0]",
      "e.update(last_status='exhausted', last_status_at=float(sys.argv[2]), last_error_code=429, failure_reason='rate_limit')",
      "fd,t=tempfile.mkstemp(dir=os.path.dirname(p)); os.write(fd, json.dumps(d, indent=2).encode()); os.close(fd); os.replace(t,p)",
    ].join("\n");
    expect(spawnSync("python3", ["-c", script, join(home, "auth.json"), String(T0)]).status).toBe(0);
    expect(p.select()?.id).toBe("b");
    await p.markSuccess("b");
    await p.flush();
    expect(storedById(home, "a")).toMatchObject({ failure_reason: "rate_limit", last_status: "exhausted" });
  });

  it("never brings back a key another process removed", async () => {
    const home = tempHome();
    threeKeys(home);
    const p = pool(home, { now: clock().now });
    const a = p.select() as PoolEntry;
    writePool(home, "openrouter", [manual("b", KEY_B, 0)]);
    await p.markExhausted(a, { status: 401 });
    expect(stored(home).map((e) => e["id"])).toEqual(["b"]);
  });

  it("runs on environment keys and writes nothing while auth.json does not parse", async () => {
    const home = tempHome();
    writeFileSync(join(home, "auth.json"), "{ broken");
    const warnings: string[] = [];
    const p = pool(home, { env: { OPENROUTER_API_KEY: KEY_ENV }, onWarning: (m) => warnings.push(m) });
    expect(p.storeError).toContain(join(home, "auth.json"));
    expect(warnings[0]).toContain("not valid JSON");
    const only = p.select() as PoolEntry;
    await p.markExhausted(only, { status: 429 });
    expect(readFileSync(join(home, "auth.json"), "utf8")).toBe("{ broken");
    expect(warnings.at(-1)).toContain("could not record the exhausted key");
  });
});

describe("keys stay secret", () => {
  it("an entry serialised or inspected does not show its key", () => {
    const home = tempHome();
    threeKeys(home);
    const entry = pool(home).select() as PoolEntry;
    expect(entry.apiKey).toBe(KEY_A);
    expect(JSON.stringify(entry)).not.toContain(KEY_A);
    expect(inspect(entry, { depth: 5 })).not.toContain(KEY_A);
    expect({ ...entry }).not.toHaveProperty("apiKey");
  });

  it.each([
    [KEY_A, "sk-or-…1111"],
    ["sk-ant-api03-0123456789", "sk-ant…6789"],
    ["abcdefghij", "ab…ij"],
    ["short", "…"],
    ["", ""],
  ])("maskKey(%j) = %j", (key, masked) => {
    expect(maskKey(key)).toBe(masked);
  });

  it.each([
    ["OpenRouter", "openrouter"],
    ["claude", "anthropic"],
    ["custom:My  Box", "custom:my-box"],
    ["copilot", "copilot"],
  ])("poolKey(%j) = %j", (name, key) => {
    expect(poolKey(name)).toBe(key);
  });
});
