/**
 * One rollout: the agent runs an item's prompt in a fresh session (source and platform `rl`) and a
 * fresh working directory, through the same `AIAgent` every surface uses, so approvals, the
 * redactor, write guards and interrupts apply unchanged. Nobody can answer an approval here: a
 * dangerous command is refused (the model reads why) unless the operator passed `--yolo`;
 * hardline commands and protected paths stay refused even then.
 *
 * Isolation: each rollout has its own tool runtime (its own shell and background processes, ended
 * with the session), its own temporary directory, no memory (neither the snapshot nor the tool,
 * so one rollout cannot teach the next), and none of the tools that reach past the task
 * (`clarify`: nobody to ask; `cronjob`: no scheduling; `memory`; `send_message`).
 *
 * Backend: the local one only. A task's files, setup and tests live in the rollout's local
 * directory, so an agent working in a container or on an ssh host would be scored on a directory
 * it never touched (silently wrong rewards), and quietly running it locally instead would drop
 * the isolation its operator chose. `terminal.backend` other than local is refused with that
 * reason (`rlBackendProblem`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { Message, Transport } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionStore } from "../state/types.js";
import type { Logger } from "../util/log.js";
import type { RlEnvironment, RlItem, Rollout } from "./types.js";

/** Tools a rollout never gets, whatever its toolsets name (see the file comment). */
export const RL_EXCLUDED_TOOLS = ["clarify", "cronjob", "memory", "send_message"] as const;

export interface RolloutOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** Resolved model (the CLI resolves `--model`/config once); absent with `transport`. */
  resolved?: ResolvedRuntime;
  /** A ready transport (tests). */
  transport?: Transport;
  toolsets: string[];
  maxTurns?: number;
  /** Dangerous commands run without asking (hardline and protected paths still refused). */
  yolo?: boolean;
  /** Where sessions are recorded; null: not recorded. */
  store: SessionStore | null;
  logger?: Logger;
  onWarning?: (message: string) => void;
  /** Keep each rollout's working directory instead of removing it after scoring. */
  keepWorkdirs?: boolean;
}

export interface ScoredRollout extends Rollout {
  score: number;
}

/** Why rollouts cannot run with this config's terminal backend, or undefined when they can. */
export function rlBackendProblem(config: Pick<HermesConfig, "terminal">): string | undefined {
  const backend = String(config.terminal?.backend ?? "local").trim() || "local";
  if (backend === "local") return undefined;
  return (
    `RL rollouts run on the local terminal backend only, and terminal.backend is "${backend}": ` +
    "a task's files, setup and tests live in the rollout's local directory, so an agent working " +
    `in the ${backend} environment would be scored on files it never touched. Serve from a profile ` +
    "whose terminal.backend is local (hermes -p NAME rl serve ...), or run this host inside the sandbox."
  );
}

/**
 * Runs and scores one rollout of `item`. Throws when the item could not be prepared (its setup
 * failed) or the run was interrupted: such a rollout says nothing about the model and its group
 * is dropped, as Atropos drops a group whose collection failed.
 */
export async function runRollout<I extends RlItem>(
  environment: RlEnvironment<I>,
  item: I,
  options: RolloutOptions,
  signal: AbortSignal,
): Promise<ScoredRollout> {
  const backend = rlBackendProblem(options.config);
  if (backend) throw new Error(backend);
  const slug = item.id.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40) || "item";
  const workdir = mkdtempSync(join(tmpdir(), `hermes-rl-${slug}-`));
  try {
    await environment.prepare(item, workdir, signal);
    const rollout = await runAgent(item, workdir, options, signal);
    if (signal.aborted) throw new Error("The rollout was interrupted.");
    const score = await environment.score(item, rollout, signal);
    return { ...rollout, score };
  } finally {
    if (!options.keepWorkdirs) rmSync(workdir, { recursive: true, force: true });
  }
}

async function runAgent(
  item: RlItem,
  workdir: string,
  options: RolloutOptions,
  signal: AbortSignal,
): Promise<Rollout> {
  const [{ ChatSession }, { createBuiltinRegistry }] = await Promise.all([
    import("../agent/chat-session.js"),
    import("../tools/builtin.js"),
  ]);
  const registry = createBuiltinRegistry();
  for (const name of RL_EXCLUDED_TOOLS) if (registry.has(name)) registry.unregister(name);
  const session = await ChatSession.open({
    config: options.config,
    home: options.home,
    env: options.env,
    ...(options.resolved ? { resolved: options.resolved } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
    cwd: workdir,
    toolsets: options.toolsets,
    registry,
    platform: "rl",
    source: "rl",
    skipMemory: true,
    memory: false,
    store: options.store,
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(options.yolo ? { yolo: true } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
  });
  const stop = () => session.interrupt();
  signal.addEventListener("abort", stop, { once: true });
  try {
    await session.agent.prepareEnvironment();
    const result = await session.run(item.prompt).result;
    const system = await session.agent.systemPrompt();
    const messages: Message[] = [{ role: "system", content: system }, ...session.agent.messages];
    return {
      messages,
      sessionId: options.store ? session.id : undefined,
      reason: result.reason,
      workdir,
    };
  } finally {
    signal.removeEventListener("abort", stop);
    await session.close("rl_rollout_complete");
  }
}
