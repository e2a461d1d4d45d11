import { describe, expect, it } from "vitest";
import { StatedContextLengths } from "../../../src/ai/model-metadata.js";

describe("StatedContextLengths", () => {
  const setup = (answers: Array<number | undefined>) => {
    let now = 1_000;
    const asked: string[] = [];
    const cache = new StatedContextLengths(
      async (input) => {
        asked.push(`${input.baseUrl} ${input.model}`);
        return { answered: true, tokens: answers.shift() };
      },
      () => now,
      60_000,
    );
    return { cache, asked, advance: (ms: number) => (now += ms) };
  };

  it("asks an endpoint once for many sessions at once and after, within the TTL", async () => {
    const { cache, asked, advance } = setup([32_768]);
    const answers = await Promise.all(
      Array.from(
        { length: 50 },
        async () => (await cache.get({ baseUrl: "http://h/v1", model: "m" })).tokens,
      ),
    );
    expect(new Set(answers)).toEqual(new Set([32_768]));
    advance(59_999);
    expect((await cache.get({ baseUrl: "http://h/v1/", model: "m", apiKey: "other" })).tokens).toBe(32_768);
    expect(asked).toEqual(["http://h/v1 m"]);
  });

  it("remembers 'not stated' too, and asks again once the TTL has passed", async () => {
    const { cache, asked, advance } = setup([undefined, 8_192]);
    expect((await cache.get({ baseUrl: "http://h/v1", model: "m" })).tokens).toBeUndefined();
    expect((await cache.get({ baseUrl: "http://h/v1", model: "m" })).tokens).toBeUndefined();
    advance(60_000);
    expect((await cache.get({ baseUrl: "http://h/v1", model: "m" })).tokens).toBe(8_192);
    expect(asked).toHaveLength(2);
  });

  it("keeps endpoints and models apart", async () => {
    const { cache, asked } = setup([1_024, 2_048, 4_096]);
    expect((await cache.get({ baseUrl: "http://a/v1", model: "m" })).tokens).toBe(1_024);
    expect((await cache.get({ baseUrl: "http://b/v1", model: "m" })).tokens).toBe(2_048);
    expect((await cache.get({ baseUrl: "http://a/v1", model: "n" })).tokens).toBe(4_096);
    expect(asked).toEqual(["http://a/v1 m", "http://b/v1 m", "http://a/v1 n"]);
  });
});
