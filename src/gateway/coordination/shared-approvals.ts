/**
 * Approvals across gateway instances (PostgreSQL homes). Each approval this instance's turns wait
 * on is recorded in the shared store while it is pending, so every instance's control socket (and
 * `hermes gateway status`, `hermes mcp serve`, the dashboard) lists them all. An answer given
 * through any of them is recorded on the approval's row; this instance carries out the answers
 * recorded for its own approvals: at once when the answering instance tells it (`approval.answer`
 * through the coordinator), and by checking its rows every `pollMs` while any approval is pending,
 * so an answer given where no instance runs (the dashboard, `hermes mcp serve`) or a lost
 * notification still arrives. The decision is always read from the row, never from a message.
 *
 * A chat user's own answer (a button, `yes`, `/approve`) needs none of this: the chat's messages
 * reach the instance running its turn through the chat relay.
 */
import type { Coordinator } from "../../state/coordination.js";
import {
  ApprovalAnswerError,
  type PendingApprovalRecords,
  type SharedApprovalInfo,
} from "../../state/gateway/shared-approvals.js";
import type { ApprovalAnswer, ApprovalInfo } from "../../state/gateway-control.js";
import { approvalFields } from "../control/state.js";
import type { PendingApproval } from "../messaging/approvals.js";
import type { RouterObserver } from "../messaging/observer.js";

/** The router's approvals as this needs them (`ChatApprovals`). */
export interface LocalApprovals {
  list(): PendingApproval[];
  respondById(id: string, decision: ApprovalAnswer, by: string): void;
}

export interface SharedApprovalsOptions {
  /** One line per problem (gateway.log). */
  log?: (line: string) => void;
  /** How often recorded answers are looked for while an approval is pending (default 500 ms). */
  pollMs?: number;
}

export const APPROVAL_ANSWER_TOPIC = "approval.answer";

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class SharedApprovals {
  private local: LocalApprovals | undefined;
  /** Ids of this instance's approvals still pending (recorded or being recorded). */
  private readonly pending = new Set<string>();
  /** Writes to the store, in the order the router asked and answered (a remove never overtakes its add). */
  private writes: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;
  private readonly log: (line: string) => void;

  constructor(
    private readonly records: PendingApprovalRecords,
    private readonly coordinator: Coordinator,
    private readonly options: SharedApprovalsOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.unsubscribe = coordinator.subscribe((message) => {
      if (message.topic === APPROVAL_ANSWER_TOPIC) void this.check();
    });
  }

  /** The router's approvals, once the router exists. */
  attach(local: LocalApprovals): void {
    this.local = local;
  }

  /** `inner` (the control socket's state), plus recording each approval asked and answered here. */
  observe(inner: RouterObserver): RouterObserver {
    return {
      message: (direction, chat, text, details) => inner.message(direction, chat, text, details),
      turn: (key, chat, running) => inner.turn(key, chat, running),
      requested: (approval) => {
        inner.requested(approval);
        this.requested(approval);
      },
      resolved: (approval, decision, by) => {
        inner.resolved(approval, decision, by);
        this.resolved(approval.id);
      },
    };
  }

  /** Every instance's pending approvals; this instance's own alone when the store cannot be read. */
  async list(): Promise<Array<ApprovalInfo & { instance?: string }>> {
    try {
      return await this.records.list();
    } catch (error) {
      this.log(`approvals: could not list other instances' approvals: ${describe(error)}`);
      return (this.local?.list() ?? []).map((a) => ({
        ...approvalFields(a),
        instance: this.coordinator.instanceId,
      }));
    }
  }

  /**
   * Answers approval `id` from outside the chat: here when this instance waits on it, else by
   * recording the answer for the instance that does and telling it. Throws with the reason when
   * the id is unknown, expired, answered already, or a protected path is to be approved.
   */
  async respond(id: string, decision: ApprovalAnswer): Promise<{ instance: string }> {
    if (this.local?.list().some((a) => a.id === id)) {
      this.local.respondById(id, decision, "control");
      await this.writes; // listed nowhere once this answers
      return { instance: this.coordinator.instanceId };
    }
    const { instance } = await this.records.answer(id, decision, "control");
    if (instance === this.coordinator.instanceId) void this.check();
    else
      await this.coordinator
        .send(instance, APPROVAL_ANSWER_TOPIC, { id })
        .catch((error: unknown) =>
          this.log(`approvals: could not tell instance ${instance} of an answer: ${describe(error)}`),
        );
    return { instance };
  }

  /** Stops looking for answers and forgets this instance's rows (its approvals were denied). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.timer);
    this.timer = undefined;
    await this.writes;
    await this.checking;
    await this.records
      .clear(this.coordinator.instanceId)
      .catch((error: unknown) => this.log(`approvals: could not clear this instance's: ${describe(error)}`));
  }

  private requested(approval: PendingApproval): void {
    if (this.closed) return;
    this.pending.add(approval.id);
    this.write(() => this.records.add(this.coordinator.instanceId, approvalFields(approval)));
    this.timer ??= setInterval(() => void this.check(), this.options.pollMs ?? 500);
    this.timer.unref?.();
  }

  private resolved(id: string): void {
    this.pending.delete(id);
    this.write(() => this.records.remove(this.coordinator.instanceId, id));
    if (this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private write(step: () => Promise<void>): void {
    this.writes = this.writes
      .then(step)
      .catch((error: unknown) => this.log(`approvals: could not update the shared list: ${describe(error)}`));
  }

  /** Carries out the answers recorded for this instance's approvals (one check at a time). */
  private check(): Promise<void> {
    this.checking ??= (async () => {
      try {
        await this.writes;
        if (this.closed || this.pending.size === 0) return;
        for (const answer of await this.records.answers(this.coordinator.instanceId)) {
          try {
            this.local?.respondById(answer.id, answer.decision, "control");
          } catch {
            // Settled meanwhile (the chat's user answered, or it timed out): the row goes.
            this.resolved(answer.id);
          }
        }
      } catch (error) {
        this.log(`approvals: could not read answers given elsewhere: ${describe(error)}`);
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }
}

export { ApprovalAnswerError, type SharedApprovalInfo };
