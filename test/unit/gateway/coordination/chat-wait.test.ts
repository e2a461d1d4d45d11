import { describe, expect, it } from "vitest";
import { ChatBusyError, waitForChat } from "../../../../src/gateway/coordination/chat-wait.js";
import { coordinatorHub } from "../../../support/coordinator-hub.js";

describe("an API-server turn waits for its session across instances", () => {
  it("B waits while A runs the session and gets it as soon as A releases it; never both at once", async () => {
    const hub = coordinatorHub();
    const a = hub.join("a");
    const b = hub.join("b");
    const releaseA = await waitForChat(a, "api_server:s1");
    let bGot = false;
    const bWaits = waitForChat(b, "api_server:s1", { pollMs: 10 }).then((release) => {
      bGot = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(bGot).toBe(false);
    expect(hub.chatHolder("api_server:s1")).toBe("a");
    await releaseA();
    const releaseB = await bWaits;
    expect(hub.chatHolder("api_server:s1")).toBe("b");
    await releaseB();
    expect(hub.chatHolder("api_server:s1")).toBeUndefined();
  });

  it("gives up with ChatBusyError naming the holder after the timeout, and stops when the client goes away", async () => {
    const hub = coordinatorHub();
    const a = hub.join("a");
    const b = hub.join("b");
    await waitForChat(a, "api_server:s2");
    const error = await waitForChat(b, "api_server:s2", { timeoutMs: 80, pollMs: 10 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChatBusyError);
    expect((error as ChatBusyError).holder).toBe("a");
    const gone = new AbortController();
    const waiting = waitForChat(b, "api_server:s2", { pollMs: 10, signal: gone.signal }).catch(
      (e: unknown) => e,
    );
    gone.abort(new Error("client disconnected"));
    expect(String(await waiting)).toContain("client disconnected");
    expect(hub.chatHolder("api_server:s2")).toBe("a");
  });
});
