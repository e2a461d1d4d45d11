import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/defaults.js";
import { createToolRuntime } from "../../src/tools/runtime.js";
import type { ApprovalDecision, ApprovalRequest, ToolContext } from "../../src/tools/types.js";

/** A ToolContext for calling tool handlers directly in unit tests. */
export function makeToolContext(overrides: Partial<ToolContext> = {}): ToolContext & {
  approvals: ApprovalRequest[];
  progressNotes: string[];
} {
  const approvals: ApprovalRequest[] = [];
  const progressNotes: string[] = [];
  const cwd = overrides.cwd ?? mkdtempSync(join(tmpdir(), "hermes-tool-"));
  const ctx: ToolContext = {
    taskId: `task-${Math.random().toString(36).slice(2, 8)}`,
    sessionId: "test-session",
    cwd,
    home: join(cwd, ".hermes-home"),
    config: defaultConfig() as unknown as Record<string, unknown>,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    signal: new AbortController().signal,
    requestApproval: async (req: ApprovalRequest): Promise<ApprovalDecision> => {
      approvals.push(req);
      return "deny";
    },
    progress: (message) => progressNotes.push(message),
    session: new Map(),
    runtime: createToolRuntime(),
    ...overrides,
  };
  return Object.assign(ctx, { approvals, progressNotes });
}
