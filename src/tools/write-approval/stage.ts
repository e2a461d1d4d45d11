/**
 * The write-approval gate as the `memory` and `skill_manage` tools apply it: when
 * `<subsystem>.write_approval` is on, a write is checked (so one that can never apply is refused at
 * once), then staged under `<home>/pending/<subsystem>/` instead of applied, and the model is told
 * it waits for the user. Every agent's tool calls pass here, the background review's included, so
 * there is no path around it; approving replays the payload through the same store code (apply.ts).
 */
import {
  memorySummary,
  skillGist,
  stagedMessage,
  writeApprovalEnabled,
} from "../../knowledge/write-approval/gate.js";
import type { Subsystem, WriteOrigin } from "../../knowledge/write-approval/pending.js";
import { stageWrite as stageShared } from "../../knowledge/write-approval/pending-shared.js";
import { type SkillLookup, skillBase } from "../../knowledge/write-approval/skill-diff.js";
import type { ToolContext } from "../types.js";

/** The tool result of a staged write (upstream's shape, plus our clearer message). */
export interface StagedResult {
  success: true;
  staged: true;
  pending_id: string;
  message: string;
  gist?: string;
}

/** What staging needs of a tool call (a `ToolContext` satisfies it). */
export type StageContext = Pick<ToolContext, "home" | "config" | "writeOrigin">;

/** Whether writes to `subsystem` are staged for this call. */
export function gateOn(ctx: Pick<ToolContext, "config">, subsystem: Subsystem): boolean {
  return writeApprovalEnabled(ctx.config, subsystem);
}

/**
 * Stages a write the caller has already checked and returns what the model reads. Exposed for
 * writers other than the two tools (the curator's consolidation), so they queue items the same
 * way; the background review needs nothing extra: its `memory`/`skill_manage` calls are gated
 * like any other (set `writeOrigin: "background_review"` on its agent to label them).
 */
export async function stageWrite(
  ctx: StageContext,
  subsystem: Subsystem,
  payload: Record<string, unknown>,
  lookup?: SkillLookup,
): Promise<StagedResult> {
  const origin: WriteOrigin = ctx.writeOrigin ?? "foreground";
  const summary = subsystem === "skills" ? skillGist(payload) : memorySummary(payload);
  const base = subsystem === "skills" && lookup ? skillBase(lookup, payload) : undefined;
  const record = await stageShared(ctx.home, subsystem, { payload, summary, origin, base });
  return {
    success: true,
    staged: true,
    pending_id: record.id,
    message: stagedMessage(subsystem, record.id),
    ...(subsystem === "skills" ? { gist: summary } : {}),
  };
}

/** A payload with the arguments that were not given left out (as upstream records them). */
export function payloadOf(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null));
}
