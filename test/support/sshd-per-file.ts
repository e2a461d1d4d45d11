/** One sshd per test file (see ./sshd.ts): started before the file's tests, stopped after them. */
import { afterAll, beforeAll } from "vitest";
import { type SshdFixture, sshdSkipReason, startSshd } from "./sshd.js";

/** Starts one sshd for the test file and stops it afterwards; `get()` returns it inside tests. */
export function useSshd(): { get(): SshdFixture } {
  let fixture: SshdFixture | undefined;
  beforeAll(async () => {
    if (sshdSkipReason) return;
    fixture = await startSshd();
  });
  afterAll(async () => {
    await fixture?.stop();
  });
  return {
    get() {
      if (!fixture) throw new Error(sshdSkipReason ?? "sshd did not start");
      return fixture;
    },
  };
}
