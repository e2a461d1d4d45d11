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

describe("chat approvals answered from outside the chat (the control socket)", () => {
  const RM: ApprovalRequest = {
    command: "rm -rf build",
    reason: "recursive delete",
    patternKey: "recursive_delete",
  };

  it("lists what is pending, answers by id, and tells the observer both ends", async () => {
    const { adapter, edits } = fakeAdapter();
    const seen: string[] = [];
    const approvals = new ChatApprovals(60_000, {
      requested: (a) => seen.push(`requested ${a.id} ${a.sessionKey} ${a.platform} ${a.chatId}`),
      resolved: (a, decision, by) => seen.push(`resolved ${a.id} ${decision} ${by}`),
    });
    const pending = approvals.ask("k", RM, where(adapter));
    await settled();
    const [listed] = approvals.list();
    expect(listed).toMatchObject({ sessionKey: "k", platform: "telegram", chatId: "1", userId: "u1" });
    expect(listed?.expiresAt.getTime()).toBe((listed?.createdAt.getTime() ?? 0) + 60_000);
    approvals.respondById(listed?.id ?? "", "always", "control");
    expect(await pending).toBe("always");
    expect(approvals.list()).toEqual([]);
    expect(seen).toEqual([`requested ${listed?.id} k telegram 1`, `resolved ${listed?.id} always control`]);
    await settled();
    expect(edits.at(-1)).toMatch(/Approved always \(answered from outside the chat\)/);
  });

  it("refuses unknown and already answered ids", async () => {
    const { adapter } = fakeAdapter();
    const approvals = new ChatApprovals(60_000);
    const pending = approvals.ask("k", RM, where(adapter));
    await settled();
    const id = approvals.list()[0]?.id ?? "";
    expect(() => approvals.respondById("deadbeef", "once", "control")).toThrow(/No pending approval/);
    approvals.answer("k", "deny");
    expect(await pending).toBe("deny");
    expect(() => approvals.respondById(id, "once", "control")).toThrow(/No pending approval/);
  });

  it("never approves a protected path from outside the chat, but can deny it", async () => {
    const { adapter } = fakeAdapter();
    const approvals = new ChatApprovals(60_000);
    const pending = approvals.ask("k", PROTECTED, where(adapter));
    await settled();
    const id = approvals.list()[0]?.id ?? "";
    for (const decision of ["once", "session", "always"] as const)
      expect(() => approvals.respondById(id, decision, "control")).toThrow(
        /only the chat's user can approve it/,
      );
    expect(approvals.list()).toHaveLength(1);
    approvals.respondById(id, "deny", "control");
    expect(await pending).toBe("deny");
  });
});
