/**
 * Dangerous-command approvals over chat. The question goes to the chat the turn serves, with
 * buttons where the platform has them and a "reply yes or no" line where it does not. It is
 * answered by a button press, a `yes`/`no` reply, `/approve [session|always]` or `/deny`, and
 * fails closed: no answer within `approvals.timeout` seconds is a denial.
 */
import { randomBytes } from "node:crypto";
import type { ApprovalDecision, ApprovalRequest } from "../../tools/types.js";
import type { OutboundTarget, PlatformAdapter } from "../platforms/types.js";

interface Pending {
  id: string;
  key: string;
  createdAt: Date;
  request: ApprovalRequest;
  adapter: PlatformAdapter;
  target: OutboundTarget;
  messageId?: string;
  /** Who may answer: the user the turn belongs to. */
  userId: string;
  settle: (decision: ApprovalDecision, by: string) => void;
}

const YES = new Set(["yes", "y", "approve", "approved", "ok", "okay", "go", "allow", "sure"]);
const NO = new Set(["no", "n", "deny", "denied", "cancel", "stop", "reject", "nope"]);

/** `yes`/`no` as a decision; undefined for anything else. */
export function parseApprovalReply(text: string): ApprovalDecision | undefined {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, "");
  if (YES.has(word)) return "once";
  if (NO.has(word)) return "deny";
  return undefined;
}

/** Told about approvals as they are asked and answered (the gateway's event log). */
export interface ApprovalObserver {
  requested(approval: PendingApproval): void;
  resolved(approval: PendingApproval, decision: ApprovalDecision, by: string): void;
}

/** A pending approval as the control socket lists it. */
export interface PendingApproval {
  id: string;
  sessionKey: string;
  platform: string;
  chatId: string;
  userId: string;
  request: ApprovalRequest;
  createdAt: Date;
  expiresAt: Date;
}

const LABEL: Readonly<Record<ApprovalDecision, string>> = {
  once: "✅ Approved once",
  session: "✅ Approved for this session",
  always: "✅ Approved always",
  deny: "❌ Denied",
};

export class ChatApprovals {
  /** Pending approvals by session key (one at a time per conversation: the turn waits on it). */
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly timeoutMs: number,
    private readonly observer?: ApprovalObserver,
  ) {}

  /** Every pending approval, oldest first. */
  list(): PendingApproval[] {
    return [...this.pending.values()]
      .map((entry) => this.view(entry))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  /**
   * Answers a pending approval by its id from outside the chat (the control socket, `by`
   * "control"). A protected path is approved only by the chat's user, so only `deny` is taken for
   * one. Throws with the reason when the id is unknown or the answer is refused.
   */
  respondById(id: string, decision: ApprovalDecision, by: string): void {
    const entry = [...this.pending.values()].find((e) => e.id === id);
    if (!entry) throw new Error(`No pending approval with id "${id}" (answered, timed out or never asked).`);
    if (entry.request.protectedPath === true && decision !== "deny") {
      throw new Error(
        `Approval ${id} touches a protected path: only the chat's user can approve it, in the chat. It can be denied here.`,
      );
    }
    entry.settle(decision, by);
  }

  private view(entry: Pending): PendingApproval {
    return {
      id: entry.id,
      sessionKey: entry.key,
      platform: entry.adapter.platform,
      chatId: entry.target.chatId,
      userId: entry.userId,
      request: entry.request,
      createdAt: entry.createdAt,
      expiresAt: new Date(entry.createdAt.getTime() + this.timeoutMs),
    };
  }

  /** Whether the conversation `key` waits for an answer. */
  has(key: string): boolean {
    return this.pending.has(key);
  }

  /** Asks in the chat and resolves with the answer; a denial after the timeout or a failed send. */
  ask(
    key: string,
    request: ApprovalRequest,
    where: { adapter: PlatformAdapter; target: OutboundTarget; userId: string },
    signal?: AbortSignal,
  ): Promise<ApprovalDecision> {
    this.pending.get(key)?.settle("deny", "superseded");
    const id = randomBytes(4).toString("hex");
    // A protected path is approved one action at a time: "session" and "always" count as once.
    const protectedPath = request.protectedPath === true;
    return new Promise<ApprovalDecision>((resolve) => {
      let done = false;
      let announced = false;
      const onAbort = () =>
        entry.settle("deny", String(signal?.reason).includes("timeout") ? "timeout" : "stopped");
      const entry: Pending = {
        id,
        key,
        createdAt: new Date(),
        request,
        adapter: where.adapter,
        target: where.target,
        userId: where.userId,
        settle: (answer, by) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (this.pending.get(key) === entry) this.pending.delete(key);
          const decision = protectedPath && answer !== "deny" ? "once" : answer;
          resolve(decision);
          if (announced) this.observer?.resolved(this.view(entry), decision, by);
          void this.markAnswered(entry, decision, by);
        },
      };
      const timer = setTimeout(() => entry.settle("deny", "timeout"), this.timeoutMs);
      timer.unref?.();
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
      if (done) return;
      this.pending.set(key, entry);
      announced = true;
      this.observer?.requested(this.view(entry));
      const buttons = where.adapter.capabilities.buttons;
      const seconds = Math.round(this.timeoutMs / 1000);
      const head = protectedPath
        ? `🔒 **Approval needed (protected path):** ${request.reason}`
        : `⚠️ **Approval needed:** ${request.reason}`;
      const how = protectedPath
        ? buttons
          ? `Only you can approve this, once; it is never remembered. Choose within ${seconds} s, or it is denied.`
          : `Only you can approve this, once. Reply **yes** or **no**; no answer within ${seconds} s denies it.`
        : buttons
          ? `Choose below within ${seconds} s, or it is denied.`
          : `Reply **yes** to run it once or **no** to refuse (/approve session, /approve always, /deny). ` +
            `No answer within ${seconds} s denies it.`;
      const text = `${head}\n\n\`\`\`\n${request.command}\n\`\`\`\n${how}`;
      const rows = protectedPath
        ? [
            [
              { label: "Approve once", data: `ap:${id}:once`, style: "primary" as const },
              { label: "Deny", data: `ap:${id}:deny`, style: "danger" as const },
            ],
          ]
        : [
            [
              { label: "Approve once", data: `ap:${id}:once`, style: "primary" as const },
              { label: "This session", data: `ap:${id}:session` },
            ],
            [
              { label: "Always", data: `ap:${id}:always` },
              { label: "Deny", data: `ap:${id}:deny`, style: "danger" as const },
            ],
          ];
      where.adapter
        .send(where.target, text, buttons ? { buttons: rows } : {})
        .then((sent) => {
          entry.messageId = sent.messageId;
        })
        .catch(() => entry.settle("deny", "send failed"));
    });
  }

  /** A button press `ap:<id>:<decision>`; returns whether it answered a pending approval. */
  answerAction(key: string, data: string, userId: string): boolean {
    const m = /^ap:([0-9a-f]+):(once|session|always|deny)$/.exec(data);
    const entry = this.pending.get(key);
    if (!m || !entry || entry.id !== m[1] || entry.userId !== userId) return false;
    entry.settle(m[2] as ApprovalDecision, "button");
    return true;
  }

  /** Answers by id alone (a button pressed from another conversation key, e.g. a thread). */
  answerById(data: string, userId: string): boolean {
    const m = /^ap:([0-9a-f]+):(once|session|always|deny)$/.exec(data);
    if (!m) return false;
    for (const entry of this.pending.values()) {
      if (entry.id === m[1] && entry.userId === userId) {
        entry.settle(m[2] as ApprovalDecision, "button");
        return true;
      }
    }
    return false;
  }

  /** A text answer (`yes`, `/approve session`, `/deny`); returns whether it answered. */
  answer(key: string, decision: ApprovalDecision): boolean {
    const entry = this.pending.get(key);
    if (!entry) return false;
    entry.settle(decision, "reply");
    return true;
  }

  /** Denies everything pending (shutdown, /stop). */
  denyAll(key?: string): void {
    for (const [k, entry] of [...this.pending])
      if (key === undefined || k === key) entry.settle("deny", "stopped");
  }

  private async markAnswered(entry: Pending, decision: ApprovalDecision, by: string): Promise<void> {
    const suffix =
      by === "timeout"
        ? " (no answer in time)"
        : by === "stopped"
          ? " (stopped)"
          : by === "control"
            ? " (answered from outside the chat)"
            : "";
    const text = `${LABEL[decision]}${suffix}\n\n\`\`\`\n${entry.request.command}\n\`\`\``;
    try {
      if (entry.messageId && entry.adapter.capabilities.edit) {
        await entry.adapter.edit(entry.target, entry.messageId, text);
      } else if (by === "timeout" || by === "control") {
        await entry.adapter.send(entry.target, text);
      }
    } catch {
      /* the decision stands whether or not the chat shows it */
    }
  }
}
