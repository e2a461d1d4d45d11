/**
 * The approval policy an `AIAgent` builds for itself from `approvals.*`, `--yolo` and its options:
 * smart approvals judge with the `approval` auxiliary chain, else the session's own model.
 */
import { resolveAuxiliaryChain } from "../ai/auxiliary.js";
import type { HermesConfig } from "../config/defaults.js";
import type { AIAgentOptions } from "./agent-types.js";
import { ApprovalPolicy, type approvalSettings } from "./approval-policy.js";
import { auxiliaryJudge } from "./approval-smart.js";
import type { Frozen } from "./session-freeze.js";

export function agentApprovalPolicy(
  options: AIAgentOptions,
  settings: ReturnType<typeof approvalSettings>["settings"],
  agent: {
    config: HermesConfig;
    cwd: string;
    /** Read when the judge first runs: the agent sets its home after building the policy. */
    home: () => string;
    prepare: () => Promise<Frozen>;
  },
): ApprovalPolicy {
  const judge = auxiliaryJudge({
    chain: async () => {
      const frozen = await agent.prepare();
      const chain = frozen.runtime
        ? resolveAuxiliaryChain("approval", {
            config: agent.config,
            env: options.env ?? process.env,
            main: frozen.runtime,
            home: agent.home(),
          })
        : [];
      return { chain, transport: frozen.recovery.transport, model: frozen.model };
    },
  });
  return new ApprovalPolicy({
    settings,
    yolo: options.yolo ?? false,
    allowlist: agent.config.command_allowlist ?? [],
    cwd: agent.cwd,
    judge,
    ...(options.onApproval ? { prompt: options.onApproval } : {}),
    ...(options.persistAlwaysApproval ? { persistAlways: options.persistAlwaysApproval } : {}),
    ...(options.onApprovalDenied ? { onDenied: options.onApprovalDenied } : {}),
  });
}
