/**
 * The approval policy: who may approve a dangerous or protected-path action, per session.
 * Hardline commands never get here (the tools refuse them themselves).
 *
 * In order, for one request:
 * 1. Webhook and API server runs deny everything: nobody there can approve (their input comes
 *    from outside, and neither `--yolo` nor `approvals.mode: off` is meant for it).
 * 2. Cron jobs (unattended, never prompted): protected paths are refused; then
 *    `command_allowlist`, then `approvals.cron_mode` (`approve` runs it, `deny` refuses).
 * 3. A protected-path request (`protectedPath`) is approved only by the user's own answer at a
 *    prompt; no mode, flag, allowlist or earlier "session" answer approves it, and with no prompt
 *    (non-interactive) it is denied. Its "session"/"always" answers count as "once".
 * 4. `--yolo`, `delegation.subagent_auto_approve` (children only) and `approvals.mode: off` approve.
 * 5. Earlier "session"/"always" answers and `command_allowlist` approve silently.
 * 6. `approvals.mode: smart`: the auxiliary model approves, denies, or escalates.
 * 7. The surface's prompt asks the user (one question at a time, failing closed after
 *    `approvals.timeout`); with no prompt the request is denied.
 *
 * Only the user's "always" at a prompt writes `command_allowlist` (`persistAlways`); smart mode,
 * yolo, mode off and tools never do. Every denial rejects with `ApprovalDeniedError`, whose message
 * tells the model who refused and why.
 */
import type { HermesConfig } from "../config/defaults.js";
import { ApprovalDeniedError, type DenialCause } from "../tools/approval/denial.js";
import { isCommandAllowlisted } from "../tools/approval/index.js";
import type { ApprovalDecision, ApprovalRequest } from "../tools/types.js";
import { formatWait, type SmartJudge, smartAssess } from "./approval-smart.js";

export type ApprovalMode = "manual" | "smart" | "off";
export type CronApprovalMode = "deny" | "approve";
/** Where the session runs, as far as approvals go. `interactive`: a CLI or chat session. */
export type ApprovalSurface = "interactive" | "cron" | "webhook" | "api_server";

export interface ApprovalSettings {
  mode: ApprovalMode;
  /** How long a prompt waits for the user before denying. */
  timeoutMs: number;
  cronMode: CronApprovalMode;
  surface: ApprovalSurface;
}

export const DEFAULT_APPROVAL_TIMEOUT_S = 60;
/** How long smart mode waits for the auxiliary model before escalating. */
export const SMART_TIMEOUT_MS = 30_000;

/** Options a surface's prompt receives. */
export interface ApprovalPromptOptions {
  /** Aborts when `approvals.timeout` passes or the turn is interrupted: withdraw the question. */
  signal: AbortSignal;
  timeoutMs: number;
}

/** Asks the user; resolves with the answer ("deny" when the question was withdrawn). */
export type ApprovalPrompt = (
  request: ApprovalRequest,
  options: ApprovalPromptOptions,
) => Promise<ApprovalDecision>;

/**
 * Reads `approvals.*` for a session on `platform`. Never throws: a value it cannot use falls back
 * to the safe choice with a warning (an unknown `mode` is `manual`, an unknown `cron_mode` is
 * `deny`, a bad `timeout` is 60 s), so a typo never starts a gateway that approves more than meant.
 */
export function approvalSettings(
  config: Pick<HermesConfig, "approvals"> | Readonly<Record<string, unknown>>,
  platform: string | undefined,
): { settings: ApprovalSettings; warnings: string[] } {
  const warnings: string[] = [];
  const raw = (config as { approvals?: unknown }).approvals;
  const section = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const modeValue = section["mode"];
  // PyYAML reads an unquoted `mode: off` as false; Python Hermes treats that as "off".
  const modeText =
    modeValue === false ? "off" : typeof modeValue === "string" ? modeValue.trim().toLowerCase() : "";
  let mode: ApprovalMode = "manual";
  if (modeText === "manual" || modeText === "smart" || modeText === "off") mode = modeText;
  else if (modeValue !== undefined && modeValue !== null && modeValue !== "") {
    warnings.push(
      `approvals.mode ${JSON.stringify(modeValue)} is not one of manual, smart, off; using manual (dangerous commands are asked about).`,
    );
  }
  const cronValue = section["cron_mode"];
  const cronText = typeof cronValue === "string" ? cronValue.trim().toLowerCase() : undefined;
  let cronMode: CronApprovalMode = "deny";
  if (cronText === "approve" || cronText === "deny") cronMode = cronText;
  else if (cronValue !== undefined && cronValue !== null) {
    warnings.push(
      `approvals.cron_mode ${JSON.stringify(cronValue)} is not deny or approve; using deny (dangerous commands are refused in cron jobs).`,
    );
  }
  const timeoutValue = section["timeout"];
  let timeoutS = DEFAULT_APPROVAL_TIMEOUT_S;
  if (typeof timeoutValue === "number" && Number.isFinite(timeoutValue) && timeoutValue > 0)
    timeoutS = timeoutValue;
  else if (timeoutValue !== undefined && timeoutValue !== null) {
    warnings.push(
      `approvals.timeout ${JSON.stringify(timeoutValue)} is not a positive number of seconds; using ${DEFAULT_APPROVAL_TIMEOUT_S}.`,
    );
  }
  return { settings: { mode, timeoutMs: timeoutS * 1000, cronMode, surface: surfaceOf(platform) }, warnings };
}

/** The approval surface of a session's platform. */
export function surfaceOf(platform: string | undefined): ApprovalSurface {
  if (platform === "cron") return "cron";
  if (platform === "webhook") return "webhook";
  if (platform === "api_server") return "api_server";
  return "interactive";
}

export interface ApprovalPolicyOptions {
  /** Default: manual, 60 s, cron_mode deny, interactive. */
  settings?: Partial<ApprovalSettings>;
  yolo: boolean;
  allowlist: readonly string[];
  /** The session's working directory, shown to the smart-mode judge. */
  cwd?: string;
  /** The surface's prompt. Absent: nobody can be asked (non-interactive), so asking denies. */
  prompt?: ApprovalPrompt;
  /**
   * Called when the user answers "always", to persist the pattern to `command_allowlist`. It
   * reports its own failures; a failure still approves the action.
   */
  persistAlways?: (patternKey: string) => Promise<void> | void;
  /** The auxiliary model for `approvals.mode: smart`. Absent: smart mode escalates everything. */
  judge?: SmartJudge;
  /** Smart mode's deadline (default 30 s). */
  smartTimeoutMs?: number;
  /** Told about every denial (the CLI prints one line on stderr in non-interactive runs). */
  onDenied?: (request: ApprovalRequest, denial: ApprovalDeniedError) => void;
}

/** How a request was settled. `by` names the rule that decided. */
export type ApprovalOutcome =
  | {
      decision: Exclude<ApprovalDecision, "deny">;
      by: "yolo" | "auto_approve" | "mode_off" | "cron_approve" | "session" | "allowlist" | "smart" | "user";
    }
  | { decision: "deny"; by: DenialCause; denial: ApprovalDeniedError };

/** What a parent and its subagents share: one set of session approvals, one question at a time. */
interface Shared {
  yolo: boolean;
  sessionApproved: Set<string>;
  promptQueue: Promise<unknown>;
}

export interface DecideOptions {
  /** Aborts the smart-mode call and the prompt (the turn was interrupted). */
  signal?: AbortSignal | undefined;
}

export class ApprovalPolicy {
  readonly settings: ApprovalSettings;
  private readonly shared: Shared;
  /** `delegation.subagent_auto_approve` for this (child) view. */
  private readonly autoApprove: boolean;

  constructor(
    private readonly options: ApprovalPolicyOptions,
    inherit?: { shared: Shared; autoApprove: boolean },
  ) {
    this.settings = {
      mode: "manual",
      timeoutMs: DEFAULT_APPROVAL_TIMEOUT_S * 1000,
      cronMode: "deny",
      surface: "interactive",
      ...options.settings,
    };
    this.shared = inherit?.shared ?? {
      yolo: options.yolo,
      sessionApproved: new Set(),
      promptQueue: Promise.resolve(),
    };
    this.autoApprove = inherit?.autoApprove ?? false;
  }

  get yolo(): boolean {
    return this.shared.yolo;
  }

  set yolo(value: boolean) {
    this.shared.yolo = value;
  }

  /**
   * The policy a subagent uses: the same settings, prompt, yolo switch and session approvals as
   * this one. `autoApprove` (`delegation.subagent_auto_approve`) approves the child's dangerous
   * commands where yolo would, never protected paths. `unattended` (a background child, which
   * runs while nobody watches the turn) drops the prompt: what would ask the user is denied.
   */
  child(options: { autoApprove: boolean; unattended?: boolean }): ApprovalPolicy {
    const { prompt: _prompt, ...unprompted } = this.options;
    return new ApprovalPolicy(options.unattended ? unprompted : this.options, {
      shared: this.shared,
      autoApprove: options.autoApprove,
    });
  }

  /** Resolves with the approval, or rejects with `ApprovalDeniedError` saying why it was refused. */
  async request(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const outcome = await this.decide(request, { signal });
    if (outcome.decision !== "deny") return outcome.decision;
    try {
      this.options.onDenied?.(request, outcome.denial);
    } catch {
      // A failing notice must not turn a denial into something else.
    }
    throw outcome.denial;
  }

  /** Settles one request (see the module comment for the order). Never throws. */
  async decide(request: ApprovalRequest, options: DecideOptions = {}): Promise<ApprovalOutcome> {
    const { surface } = this.settings;
    // An API turn has nobody to ask, unless its route follows the turn and answers (the Runs API).
    if (surface === "webhook" || (surface === "api_server" && !this.options.prompt)) {
      return this.deny(surface, request);
    }
    // Cron runs are unattended: a prompt handed in by mistake is never used there.
    if (surface === "cron") {
      if (request.protectedPath === true) return this.deny("cron", request);
      if (this.allowlisted(request)) return { decision: "always", by: "allowlist" };
      if (this.settings.cronMode === "approve") return { decision: "once", by: "cron_approve" };
      return this.deny("cron", request);
    }
    if (request.protectedPath === true) {
      if (this.options.prompt) return this.ask(request, options.signal);
      return this.deny("no_approver", request);
    }
    if (this.shared.yolo) return { decision: "once", by: "yolo" };
    if (this.autoApprove) return { decision: "once", by: "auto_approve" };
    if (this.settings.mode === "off") return { decision: "once", by: "mode_off" };
    if (this.shared.sessionApproved.has(request.patternKey)) return { decision: "session", by: "session" };
    if (this.allowlisted(request)) return { decision: "always", by: "allowlist" };
    let escalated: string | undefined;
    if (this.settings.mode === "smart") {
      const verdict = this.options.judge
        ? await smartAssess(request, {
            cwd: this.options.cwd ?? process.cwd(),
            judge: this.options.judge,
            timeoutMs: this.options.smartTimeoutMs ?? SMART_TIMEOUT_MS,
            signal: options.signal,
          })
        : { verdict: "escalate" as const, why: "no approval model is available" };
      if (verdict.verdict === "approve") return { decision: "once", by: "smart" };
      if (verdict.verdict === "deny") return this.deny("smart", request, verdict.reason);
      escalated =
        verdict.why ?? (verdict.reason ? `the approval model was unsure: ${verdict.reason}` : undefined);
      escalated ??= "the approval model was unsure";
    }
    if (this.options.prompt) return this.ask(request, options.signal);
    return this.deny("no_approver", request, escalated);
  }

  private allowlisted(request: ApprovalRequest): boolean {
    return isCommandAllowlisted(request.command, [...this.options.allowlist]);
  }

  /** Asks the user, one question at a time across the parent and its children. */
  private async ask(request: ApprovalRequest, signal: AbortSignal | undefined): Promise<ApprovalOutcome> {
    const prompt = this.options.prompt as ApprovalPrompt;
    const previous = this.shared.promptQueue;
    let release: () => void = () => undefined;
    this.shared.promptQueue = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await previous;
      if (signal?.aborted) return this.deny("interrupted", request);
      // A question answered "session" while this one waited may already cover it.
      if (!request.protectedPath && this.shared.sessionApproved.has(request.patternKey)) {
        return { decision: "session", by: "session" };
      }
      return await this.askNow(prompt, request, signal);
    } finally {
      release();
    }
  }

  private async askNow(
    prompt: ApprovalPrompt,
    request: ApprovalRequest,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalOutcome> {
    const { timeoutMs } = this.settings;
    const withdraw = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      withdraw.abort(new Error("approval timeout"));
    }, timeoutMs);
    timer.unref?.();
    const onAbort = () => withdraw.abort(new Error("interrupted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    let answer: ApprovalDecision;
    try {
      const withdrawn = new Promise<ApprovalDecision>((resolve) => {
        withdraw.signal.addEventListener("abort", () => resolve("deny"), { once: true });
      });
      answer = await Promise.race([prompt(request, { signal: withdraw.signal, timeoutMs }), withdrawn]);
    } catch (error) {
      return this.deny(
        "no_approver",
        request,
        `the approval question could not be asked (${error instanceof Error ? error.message : String(error)})`,
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    if (timedOut) return this.deny("timeout", request);
    if (withdraw.signal.aborted) return this.deny("interrupted", request);
    if (answer === "deny") return this.deny("user", request);
    // Protected paths are approved one action at a time: nothing is remembered or persisted.
    if (request.protectedPath) return { decision: "once", by: "user" };
    if (answer === "session" || answer === "always") this.shared.sessionApproved.add(request.patternKey);
    if (answer === "always") {
      try {
        await this.options.persistAlways?.(request.patternKey);
      } catch {
        // The user approved; a config file that cannot be written costs the "always", not the
        // action (the persister reports its own failure).
      }
    }
    return { decision: answer, by: "user" };
  }

  private deny(by: DenialCause, request: ApprovalRequest, detail?: string): ApprovalOutcome {
    const { why, message } = denialText(by, request, {
      wait: formatWait(this.settings.timeoutMs),
      ...(detail ? { detail } : {}),
    });
    return { decision: "deny", by, denial: new ApprovalDeniedError(by, why, message) };
  }
}

/**
 * The model's explanation of a denial (`message`) and its short form (`why`). Each says who
 * refused, that nothing ran, and what to do instead, so a model does not retry a variant.
 */
export function denialText(
  by: DenialCause,
  request: Pick<ApprovalRequest, "reason" | "protectedPath">,
  extra: { wait?: string; detail?: string } = {},
): { why: string; message: string } {
  const what = request.protectedPath
    ? `it touches a protected path (${request.reason})`
    : `a dangerous command (${request.reason})`;
  const noRetry = "It was not run. Do not retry it or a variant;";
  const d = extra.detail ? `: ${extra.detail}` : "";
  switch (by) {
    case "user":
      return {
        why: "denied by the user",
        message: `Denied by the user: ${what}. ${noRetry} ask the user what to do instead.`,
      };
    case "timeout": {
      const why = `nobody answered the approval question within ${extra.wait ?? `${DEFAULT_APPROVAL_TIMEOUT_S} s`} (approvals.timeout)`;
      return {
        why,
        message: `Denied: ${what}; ${why}. ${noRetry} tell the user it needs their approval.`,
      };
    }
    case "smart": {
      const why = `denied by the approval model (approvals.mode: smart)${d}`;
      return {
        why,
        message: `Denied by the approval model (approvals.mode: smart)${d}; ${what}. ${noRetry} choose a safer approach or ask the user.`,
      };
    }
    case "no_approver": {
      const why = request.protectedPath
        ? "only the user can approve a protected path, at an interactive prompt, and this run is non-interactive"
        : `this run is non-interactive, so nobody can approve it${extra.detail ? ` (${extra.detail})` : ""}`;
      const nextStep = request.protectedPath
        ? "tell the user to make this change themselves or in an interactive session."
        : "tell the user it needs approval: an interactive session, or a run with --yolo, which approves dangerous commands.";
      return { why, message: `Denied: ${what}; ${why}. ${noRetry} ${nextStep}` };
    }
    case "cron": {
      const why = request.protectedPath
        ? "cron jobs never change protected paths, whatever approvals.cron_mode says"
        : "dangerous commands are refused in cron jobs (approvals.cron_mode: deny)";
      return {
        why,
        message: `Denied: ${what}; ${why}. ${noRetry} report in your answer what needs the user's approval.`,
      };
    }
    case "webhook":
    case "api_server": {
      const where = by === "webhook" ? "webhook-triggered runs" : "runs through the API server";
      const why = `${where} cannot run dangerous commands or change protected paths: nobody there can approve them`;
      return {
        why,
        message: `Denied: ${what}; ${why}. ${noRetry} say in your answer what would be needed.`,
      };
    }
    case "interrupted":
      return {
        why: "the turn was interrupted while waiting for approval",
        message: `Denied: the turn was interrupted while waiting for approval of ${what}. It was not run.`,
      };
  }
}
