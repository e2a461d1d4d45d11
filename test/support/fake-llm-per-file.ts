/**
 * One fake LLM server per test file, the way most end-to-end files use it: started before the
 * file's tests, closed after them, its recorded requests cleared before each test (scripted
 * replies left unconsumed stay queued, as before).
 *
 *   const llm = useFakeLlm();
 *   it("…", async () => { llm.enqueue(reply().text("hi")); … });
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type FakeLlm, type FakeLlmOptions, startFakeLlm } from "./fake-llm.js";

export function useFakeLlm(options: FakeLlmOptions = {}): FakeLlm {
  let current: FakeLlm | undefined;
  const server = (): FakeLlm => {
    if (!current) throw new Error("the fake LLM is used before beforeAll started it");
    return current;
  };
  beforeAll(async () => {
    current = await startFakeLlm(options);
  });
  afterAll(async () => {
    await current?.close();
  });
  beforeEach(() => {
    server().requests.length = 0;
    server().chatRequests.length = 0;
  });
  // The server exists only once beforeAll ran; the file holds this stand-in from the start.
  return new Proxy({} as FakeLlm, {
    get: (_target, key) => {
      const value: unknown = Reflect.get(server(), key);
      return typeof value === "function" ? value.bind(server()) : value;
    },
  });
}
