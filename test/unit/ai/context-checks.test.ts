import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveContextLength } from "../../../src/agent/summarizer.js";
import {
  CONTEXT_CHECK_TTL_MS,
  CONTEXT_CHECKS_FILE,
  fileContextCheckMemo,
  memoryContextCheckMemo,
  processContextCheckMemo,
} from "../../../src/ai/context-checks.js";
import { DEFAULT_CONTEXT_LENGTH, memoryContextLengthStore } from "../../../src/ai/context-length.js";
import type { ResolvedRuntime } from "../../../src/ai/resolve.js";

const BASE = "http://127.0.0.1:9/v1";
const KEY = `local-model@${BASE}`;
const runtime = { baseUrl: BASE, apiKey: "k", apiMode: "chat_completions" } as ResolvedRuntime;
const config = { model: {} };

/** A fetch that answers every `/models` with `body` (status `status`), counting the asks. */
function listing(body: unknown, status = 200) {
  const asked: string[] = [];
  const fetch = (async (url: string) => {
    asked.push(url);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, asked };
}

describe("context window checks remembered across starts", () => {
  it("does not ask again while an answer is recent, and asks in the background once it is old", async () => {
    const checks = memoryContextCheckMemo();
    const { fetch, asked } = listing({ data: [{ id: "local-model" }] });
    let now = 1_000_000;
    const resolve = () =>
      resolveContextLength({
        model: "local-model",
        config,
        runtime,
        store: memoryContextLengthStore(),
        checks,
        fetch,
        clock: () => now,
      });
    const first = resolve();
    expect(first.now).toBe(DEFAULT_CONTEXT_LENGTH);
    expect(await first.stated).toBeUndefined();
    expect(checks.get(KEY)).toEqual({ tokens: undefined, at: 1_000_000 });
    now += CONTEXT_CHECK_TTL_MS - 1;
    expect(resolve().stated).toBeUndefined();
    expect(asked).toHaveLength(1);
    now += 1;
    const stale = resolve();
    expect(stale.now).toBe(DEFAULT_CONTEXT_LENGTH);
    await stale.stated;
    expect(asked).toHaveLength(2);
    expect(checks.get(KEY)?.at).toBe(now);
  });

  it("plans with a window stated at an earlier start at once, and a learnt limit still wins over it", async () => {
    const { fetch, asked } = listing({ data: [] });
    const checks = memoryContextCheckMemo({ [KEY]: { tokens: 32_768, at: 5_000 } });
    const stated = resolveContextLength({
      model: "local-model",
      config,
      runtime,
      store: memoryContextLengthStore(),
      checks,
      fetch,
      clock: () => 6_000,
    });
    expect(stated).toEqual({ now: 32_768 });
    const learnt = resolveContextLength({
      model: "local-model",
      config,
      runtime,
      store: memoryContextLengthStore({ [KEY]: 16_000 }),
      checks,
      fetch,
      clock: () => 6_000,
    });
    expect(learnt).toEqual({ now: 16_000 });
    expect(asked).toEqual([]);
  });

  it("asks again for a check dated in the future (a clock set back) and records a newly stated window", async () => {
    const checks = memoryContextCheckMemo({ [KEY]: { tokens: undefined, at: 9_000_000 } });
    const store = memoryContextLengthStore();
    const { fetch, asked } = listing({ data: [{ id: "local-model", max_model_len: 65_536 }] });
    const window = resolveContextLength({
      model: "local-model",
      config,
      runtime,
      store,
      checks,
      fetch,
      clock: () => 10,
    });
    expect(await window.stated).toBe(65_536);
    expect(asked).toEqual([`${BASE}/models`]);
    expect(checks.get(KEY)).toEqual({ tokens: 65_536, at: 10 });
    expect(store.get(KEY)).toBe(65_536);
  });

  it("remembers an error status as an answer, but not an endpoint that could not be reached", async () => {
    const answered = memoryContextCheckMemo();
    const notFound = listing({ error: "no listing" }, 404);
    const window = resolveContextLength({
      model: "local-model",
      config,
      runtime,
      store: memoryContextLengthStore(),
      checks: answered,
      fetch: notFound.fetch,
      clock: () => 1,
    });
    expect(await window.stated).toBeUndefined();
    expect(answered.get(KEY)).toEqual({ tokens: undefined, at: 1 });

    const unreachable = memoryContextCheckMemo();
    const refused = (async () => {
      throw new TypeError("connect ECONNREFUSED");
    }) as unknown as typeof globalThis.fetch;
    const down = resolveContextLength({
      model: "local-model",
      config,
      runtime,
      store: memoryContextLengthStore(),
      checks: unreachable,
      fetch: refused,
      clock: () => 1,
    });
    expect(await down.stated).toBeUndefined();
    expect(unreachable.get(KEY)).toBeUndefined();
  });
});

describe("the checks file", () => {
  const home = () => mkdtempSync(join(tmpdir(), "hermes-checks-"));

  it("round-trips answers and keeps what another process wrote meanwhile", () => {
    const dir = home();
    const mine = fileContextCheckMemo(dir);
    const theirs = fileContextCheckMemo(dir);
    expect(mine.get("a@x")).toBeUndefined();
    theirs.set("b@y", { tokens: 8_192, at: 2_000_000 });
    mine.set("a@x", { tokens: undefined, at: 3_000_000 });
    const fresh = fileContextCheckMemo(dir);
    expect(fresh.get("a@x")).toEqual({ tokens: undefined, at: 3_000_000 });
    expect(fresh.get("b@y")).toEqual({ tokens: 8_192, at: 2_000_000 });
    const text = JSON.parse(readFileSync(join(dir, CONTEXT_CHECKS_FILE), "utf8"));
    expect(text.checks["a@x"]).toEqual({ context_length: null, checked_at: 3000 });
  });

  it("treats a corrupt, foreign or tampered file as empty and replaces it on the next answer", () => {
    const dir = home();
    const path = join(dir, CONTEXT_CHECKS_FILE);
    mkdirSync(join(dir, "cache"), { recursive: true });
    for (const text of [
      "{not json",
      JSON.stringify({ version: 2, checks: { "a@x": { context_length: null, checked_at: 1 } } }),
      JSON.stringify({ version: 1, checks: "a@x" }),
    ]) {
      writeFileSync(path, text);
      expect(fileContextCheckMemo(dir).get("a@x")).toBeUndefined();
    }
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        checks: {
          "neg@x": { context_length: -5, checked_at: 1 },
          "tiny@x": { context_length: 12, checked_at: 1 },
          "str@x": { context_length: "131072", checked_at: 1 },
          "when@x": { context_length: null, checked_at: "now" },
          "ok@x": { context_length: 131_072, checked_at: 7 },
        },
      }),
    );
    const memo = fileContextCheckMemo(dir);
    for (const key of ["neg@x", "tiny@x", "str@x", "when@x"]) expect(memo.get(key)).toBeUndefined();
    expect(memo.get("ok@x")).toEqual({ tokens: 131_072, at: 7_000 });
    writeFileSync(path, "{not json");
    memo.set("a@x", { tokens: undefined, at: 1_000 });
    expect(fileContextCheckMemo(dir).get("a@x")).toEqual({ tokens: undefined, at: 1_000 });
  });

  it("is read once per process, and an answer it already holds fresh is not written again", () => {
    const dir = home();
    const path = join(dir, CONTEXT_CHECKS_FILE);
    const first = processContextCheckMemo(dir);
    expect(processContextCheckMemo(dir)).toBe(first);
    first.set("a@x", { tokens: 32_768, at: 1_000_000 });
    expect(JSON.parse(readFileSync(path, "utf8")).checks["a@x"]).toEqual({
      context_length: 32_768,
      checked_at: 1000,
    });
    // The same answer from a session that started alongside: nothing rewritten.
    rmSync(path);
    processContextCheckMemo(dir).set("a@x", { tokens: 32_768, at: 1_000_500 });
    expect(existsSync(path)).toBe(false);
    expect(processContextCheckMemo(dir).get("a@x")).toEqual({ tokens: 32_768, at: 1_000_000 });
    // A different answer, or the same one once the old one is stale, is written.
    processContextCheckMemo(dir).set("a@x", { tokens: 16_384, at: 1_001_000 });
    expect(JSON.parse(readFileSync(path, "utf8")).checks["a@x"].context_length).toBe(16_384);
    rmSync(path);
    processContextCheckMemo(dir).set("a@x", { tokens: 16_384, at: 1_001_000 + CONTEXT_CHECK_TTL_MS });
    expect(existsSync(path)).toBe(true);
  });

  it("forgets answers a month old when it rewrites the file", () => {
    const dir = home();
    const memo = fileContextCheckMemo(dir);
    memo.set("old@x", { tokens: undefined, at: 0 });
    memo.set("new@x", { tokens: undefined, at: 31 * 24 * 3600 * 1000 });
    const again = fileContextCheckMemo(dir);
    expect(again.get("old@x")).toBeUndefined();
    expect(again.get("new@x")).toBeDefined();
  });

  it("an unwritable home costs only the memory of the answer", () => {
    const dir = home();
    writeFileSync(join(dir, "cache"), "a file where the folder would be");
    const memo = fileContextCheckMemo(dir);
    expect(() => memo.set("a@x", { tokens: undefined, at: 1 })).not.toThrow();
    expect(fileContextCheckMemo(dir).get("a@x")).toBeUndefined();
  });
});
