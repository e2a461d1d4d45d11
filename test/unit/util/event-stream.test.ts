import { describe, expect, it } from "vitest";
import { EventStream } from "../../../src/util/event-stream.js";

describe("EventStream", () => {
  it("delivers values pushed before and after the consumer starts, then ends", async () => {
    const stream = new EventStream<number>();
    stream.push(1);
    const seen: number[] = [];
    const consumer = (async () => {
      for await (const v of stream) seen.push(v);
    })();
    stream.push(2);
    stream.end();
    await consumer;
    expect(seen).toEqual([1, 2]);
  });

  it("rejects the consumer when the producer fails", async () => {
    const stream = new EventStream<string>();
    stream.push("a");
    stream.fail(new Error("boom"));
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const v of stream) seen.push(v);
      })(),
    ).rejects.toThrow("boom");
  });
});
