import { describe, expect, it } from "vitest";
import { ChatApprovals } from "../../../src/gateway/messaging/approvals.js";
import type { PlatformAdapter, SendOptions } from "../../../src/gateway/platforms/types.js";
import type { ApprovalRequest } from "../../../src/tools/types.js";

/** Just enough of a platform to see what the approval question looks like and how it ends. */
function fakeAdapter() {
  const sent: Array<{ text: string; options?: SendOptions }> = [];
  const edits: string[] = [];
  const adapter = {
    platform: "telegram",
    capabilities: {
      maxMessageLength: 4000,
      edit: true,
      buttons: true,
      typing: false,
      media: false,
      maxMediaBytes: 0,
    },
    send: async (_target: unknown, text: string, options?: SendOptions) => {
      sent.push({ text, ...(options ? { options } : {}) });
      return { messageId: String(sent.length) };
    },
    edit: async (_target: unknown, _id: string, text: string) => void edits.push(text),
  } as unknown as PlatformAdapter;
  return { adapter, sent, edits };
}

const PROTECTED: ApprovalRequest = {
  command: "tee -a ~/.hermes/config.yaml",
  reason: "writes the Hermes config (config.yaml)",
  patternKey: "protected_path",
  protectedPath: true,
};
const where = (adapter: PlatformAdapter) => ({ adapter, target: { chatId: "1" }, userId: "u1" });
const settled = () => new Promise((r) => setImmediate(r));

describe("chat approvals", () => {
  it("a protected path offers only once or deny, and an 'always' answer counts as once", async () => {
    const { adapter, sent } = fakeAdapter();
    const approvals = new ChatApprovals(60_000);
    const pending = approvals.ask("k", PROTECTED, where(adapter));
    await settled();
    expect(sent[0]?.text).toMatch(/protected path/);
    const labels = (sent[0]?.options?.buttons ?? []).flat().map((b) => b.label);
    expect(labels).toEqual(["Approve once", "Deny"]);
    expect(approvals.answer("k", "always")).toBe(true);
    expect(await pending).toBe("once");
  });

  it("a withdrawn question (the policy's timeout) is denied and marked as unanswered", async () => {
    const { adapter, edits } = fakeAdapter();
    const approvals = new ChatApprovals(60_000);
    const controller = new AbortController();
    const pending = approvals.ask(
      "k",
      { command: "rm -rf build", reason: "recursive delete", patternKey: "recursive_delete" },
      where(adapter),
      controller.signal,
    );
    await settled();
    controller.abort(new Error("approval timeout"));
    expect(await pending).toBe("deny");
    expect(approvals.has("k")).toBe(false);
    await settled();
    expect(edits[0]).toMatch(/Denied \(no answer in time\)/);
  });
});
