/** Helpers for tests that read a transport's event stream. */
import type { StreamEvent } from "../../src/ai/types.js";

/** Every event of a stream that must succeed. */
export async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The error a stream must end with, and the events before it. */
export async function failure(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ error: unknown; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { error, events };
  }
  throw new Error("expected the stream to fail");
}

/** The closing `finish` event (fails the test when the stream did not end with one). */
export function finishOf(events: StreamEvent[]) {
  const finish = events.at(-1);
  if (finish?.type !== "finish") throw new Error(`last event is ${finish?.type}, not finish`);
  return finish;
}

/** The text or reasoning deltas, in order. */
export const textOf = (events: StreamEvent[], type: "text_delta" | "reasoning_delta") =>
  events.flatMap((e) => (e.type === type ? [e.text] : []));
