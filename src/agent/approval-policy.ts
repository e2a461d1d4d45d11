/**
 * Decides dangerous-command approvals for one session: yolo approves everything that is not on the
 * hardline list (the terminal tool refuses those itself), earlier "session"/"always" answers and the
 * config allowlist approve silently, otherwise the surface's prompt decides, and with no prompt
 * (a non-interactive run) the answer is "deny".
 */
import { isCommandAllowlisted } from "../tools/approval/index.js";
import type { ApprovalDecision, ApprovalRequest } from "../tools/types.js";

export interface ApprovalPolicyOptions {
  yolo: boolean;
  allowlist: readonly string[];
  prompt?: (request: ApprovalRequest) => Promise<ApprovalDecision>;
  /** Called when the user answers "always", to persist the pattern to `command_allowlist`. */
  persistAlways?: (patternKey: string) => Promise<void> | void;
}

export class ApprovalPolicy {
  private readonly sessionApproved = new Set<string>();
  yolo: boolean;

  constructor(private readonly options: ApprovalPolicyOptions) {
    this.yolo = options.yolo;
  }

  async request(request: ApprovalRequest): Promise<ApprovalDecision> {
    if (this.yolo) return "once";
    if (this.sessionApproved.has(request.patternKey)) return "session";
    if (isCommandAllowlisted(request.command, [...this.options.allowlist])) return "always";
    if (!this.options.prompt) return "deny";
    const decision = await this.options.prompt(request);
    if (decision === "session" || decision === "always") this.sessionApproved.add(request.patternKey);
    if (decision === "always") await this.options.persistAlways?.(request.patternKey);
    return decision;
  }
}
