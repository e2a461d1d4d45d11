/**
 * A refused approval, as the tool that asked receives it. The approval policy rejects
 * `ToolContext.requestApproval` with this error so the reason reaches the model as the tool's error
 * text (the registry turns a thrown error into `{"error": message}`) instead of a generic "denied".
 */

/** Who or what refused: drives the wording for the model and the one-line notice on stderr. */
export type DenialCause =
  /** The user answered "deny" at a prompt. */
  | "user"
  /** Nobody answered within `approvals.timeout`. */
  | "timeout"
  /** `approvals.mode: smart` and the auxiliary model answered DENY. */
  | "smart"
  /** No one can be asked: a non-interactive run (`hermes -q`, piped input, no TTY). */
  | "no_approver"
  /** A cron job under `approvals.cron_mode: deny`. */
  | "cron"
  /** A webhook-triggered run: nobody can approve anything. */
  | "webhook"
  /** An API server run: the client is not an interactive approver. */
  | "api_server"
  /** The turn was interrupted while the question was open. */
  | "interrupted";

export class ApprovalDeniedError extends Error {
  /** Who or what refused. */
  readonly by: DenialCause;
  /** The explanation alone (without the command), for one-line notices. */
  readonly why: string;

  constructor(by: DenialCause, why: string, message: string) {
    super(message);
    this.name = "ApprovalDeniedError";
    this.by = by;
    this.why = why;
  }
}

/** True for a denial raised by the approval policy (also across module copies in a bundle). */
export function isApprovalDenied(error: unknown): error is ApprovalDeniedError {
  return error instanceof Error && error.name === "ApprovalDeniedError";
}

/**
 * The policy's denial with the asking tool's advice after it (what to do instead: the memory tool
 * for memories/, write_file instead of a script...). Anything else is returned as it is. Use as
 * `ctx.requestApproval(request).catch((e) => { throw withAdvice(e, advice); })`.
 */
export function withAdvice(error: unknown, advice: string): unknown {
  if (!isApprovalDenied(error) || advice === "") return error;
  return new ApprovalDeniedError(error.by, error.why, `${error.message} ${advice}`);
}
