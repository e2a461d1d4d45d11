import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ResponseStore, responseRecords } from "../../../src/gateway/api-server/response-store.js";
import { asyncView } from "../../../src/state/async-view.js";
import { chatSessionIndex, SessionIndex } from "../../../src/state/gateway/session-index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), "hermes-async-view-"));
  dirs.push(d);
  return d;
}

const source = { platform: "telegram", chatType: "dm", chatId: "42", userId: "u1" };

describe("asynchronous store contracts over the file and SQLite stores", () => {
  it("answers with promises, rejects instead of throwing, and refuses a name that is not a method", async () => {
    const impl = {
      n: 0,
      bump(by: number) {
        if (by < 0) throw new Error("negative");
        this.n += by;
        return this.n;
      },
    };
    const view = asyncView(impl, ["bump"]);
    const pending = view.bump(2);
    expect(pending).toBeInstanceOf(Promise);
    // The work is done inside the call, before anything is awaited.
    expect(impl.n).toBe(2);
    expect(await pending).toBe(2);
    let thrown: unknown;
    let rejected: Promise<number> | undefined;
    try {
      rejected = view.bump(-1);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    await expect(rejected).rejects.toThrow("negative");
    expect(() => asyncView(impl, ["n"])).toThrow(/not a method/);
  });

  it("the chat index writes sessions.json in call order, before the promise is awaited", async () => {
    const h = home();
    const index = chatSessionIndex(new SessionIndex(h));
    const now = new Date("2026-11-26T10:00:00Z");
    const first = index.set("telegram:42", "s1", source, now);
    const second = index.set("telegram:42", "s2", source, now);
    const onDisk = JSON.parse(readFileSync(join(h, "sessions", "sessions.json"), "utf8"));
    expect(onDisk["telegram:42"].session_id).toBe("s2");
    expect((await first).session_id).toBe("s1");
    expect((await second).session_id).toBe("s2");
    expect((await index.get("telegram:42"))?.session_id).toBe("s2");
    await index.markInterrupted("telegram:42", "restart_interrupted", now);
    expect((await index.takeInterrupted("telegram:42"))?.reason).toBe("restart_interrupted");
    expect(await index.takeInterrupted("telegram:42")).toBeUndefined();
  });

  it("the Responses store keeps its capacity and answers through promises", async () => {
    const records = responseRecords(new ResponseStore(undefined, 2));
    expect(records.capacity).toBe(2);
    const entry = (n: number) => ({
      sessionId: `s${n}`,
      response: { id: `r${n}` },
      conversationHistory: [],
      instructions: null,
    });
    await records.put("r1", entry(1));
    await records.put("r2", entry(2));
    await records.put("r3", entry(3));
    expect(await records.get("r1")).toBeUndefined();
    expect((await records.get("r3"))?.sessionId).toBe("s3");
    await records.setConversation("chat", "r3");
    expect(await records.conversation("chat")).toBe("r3");
    expect(await records.delete("r3")).toBe(true);
    expect(await records.delete("r3")).toBe(false);
    await records.close();
  });
});
