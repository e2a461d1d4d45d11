/**
 * The production `runJob`: each run is a fresh agent session (platform and source `cron`, recorded
 * in state.db) with the job's toolsets and skills, no memory (neither the snapshot nor the tool),
 * no way to ask anyone (`clarify`) and no way to schedule more jobs (`cronjob`). Dangerous commands
 * follow `approvals.cron_mode` (the approval policy reads it for the `cron` platform): `deny`
 * (default) refuses them, `approve` runs them; hardline commands and protected paths stay refused.
 * A job's `script` runs first under the same rules (script.ts); `no_agent` jobs end there.
 */
import type { Transport } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { CronJob } from "../knowledge/cron/types.js";
import { describeFindings, scanThreats, type ThreatFinding } from "../knowledge/threats.js";
import type { Logger } from "../util/log.js";

/** How long a finished run waits for writes still queued behind another process's lock on state.db. */
const RUN_SAVE_WAIT_MS = 10_000;

import type { RecordingSessions } from "../knowledge/state-backend-types.js";
import type { CronRunResult, RunJobFn } from "./scheduler.js";

export interface AgentJobRunnerOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** A ready transport (tests); otherwise the job's or config's provider is resolved per run. */
  transport?: Transport;
  /** Record runs in state.db (default true). */
  record?: boolean;
  /** Opens the store runs are recorded in (the state backend's); default the home's state.db. */
  openSessions?: () => RecordingSessions;
  onWarning?: (message: string) => void;
  /** The home's log files: each run's agent events (and the job it runs) are logged. */
  logger?: Logger;
}

/** Tools a cron run never gets, whatever its toolsets name. */
export const CRON_EXCLUDED_TOOLS = ["cronjob", "clarify", "memory"] as const;

const CRON_NOTE =
  "[You are running as a scheduled cron job: nobody is watching this conversation. Your final " +
  "answer is saved and delivered to the job's target as is. If there is nothing worth reporting, " +
  "answer exactly [SILENT] and nothing will be sent.]";

/**
 * Builds the job's first user message: the note, each skill's instructions, then the prompt.
 * `blocked` is set when the assembled text carries prompt injection (see {@link cronRunBlock}).
 */
export async function cronJobMessage(
  job: CronJob,
  options: Pick<AgentJobRunnerOptions, "home" | "config" | "env">,
  /** Script output and other jobs' outputs (job-context.ts), put before the prompt and scanned with it. */
  context: readonly string[] = [],
): Promise<{ message: string; missingSkills: string[]; blocked?: string }> {
  const { loadSkillMessage } = await import("../knowledge/skills/view.js");
  const parts = [CRON_NOTE];
  const missingSkills: string[] = [];
  for (const name of job.skills ?? []) {
    const text = await loadSkillMessage(options.home, name, options.config.skills, {
      env: options.env,
      platform: "cron",
    });
    if (text === undefined) missingSkills.push(name);
    else parts.push(text);
  }
  parts.push(...context);
  if (job.prompt) parts.push(job.prompt);
  const blocked = cronRunBlock(parts.slice(1), job.prompt);
  return { message: parts.join("\n\n"), missingSkills, ...(blocked ? { blocked } : {}) };
}

/**
 * The run-time injection check over what the job would send: the skills' text and the prompt as
 * assembled now (a skill can change after the job was created, and jobs.json can be edited by
 * hand, which skips the check at creation). The assembled text is read with the `context` scope
 * (skills legitimately carry install lines), the prompt itself with `strict`, as at creation.
 * Returns the error the run fails with, or undefined when it is clean.
 */
export function cronRunBlock(assembled: readonly string[], prompt: string | undefined): string | undefined {
  const findings = new Map<string, ThreatFinding>();
  for (const f of scanThreats(assembled.join("\n\n"), "context")) findings.set(f.id, f);
  for (const f of prompt ? scanThreats(prompt, "strict") : []) if (!findings.has(f.id)) findings.set(f.id, f);
  if (findings.size === 0) return undefined;
  return (
    `Blocked: the job's prompt or skills look like prompt injection (${describeFindings([...findings.values()])}); ` +
    "nothing was sent to the model. Edit the job (`hermes cron edit ID --prompt ...`) or its skills."
  );
}

/** A `runJob` that runs each job in a fresh agent session. */
export function agentJobRunner(options: AgentJobRunnerOptions): RunJobFn {
  return async (job: CronJob, signal?: AbortSignal): Promise<CronRunResult> => {
    const { config, env, home } = options;
    // The script (and `no_agent`) come first: a job that ends there never pays for an agent.
    const { prepareRun } = await import("./job-context.js");
    const pre = await prepareRun(job, { home, config, env, ...(signal ? { signal } : {}) });
    if ("done" in pre) {
      if (!pre.done.ok) {
        options.logger
          ?.child({ component: "cron" })
          .warning("job script", { job: job.id, error: pre.done.error });
      }
      return pre.done;
    }
    const { message, missingSkills, blocked } = await cronJobMessage(job, options, pre.context);
    if (blocked) {
      options.logger?.child({ component: "cron" }).warning("job blocked", { job: job.id, reason: blocked });
      return { ok: false, output: "", error: blocked };
    }
    if (missingSkills.length > 0) {
      return {
        ok: false,
        output: "",
        error: `Skill${missingSkills.length > 1 ? "s" : ""} not found: ${missingSkills.join(", ")}. Install ${missingSkills.length > 1 ? "them" : "it"} or edit the job's skills.`,
      };
    }
    const [{ ChatSession }, { createBuiltinRegistry }] = await Promise.all([
      import("../agent/chat-session.js"),
      import("../tools/builtin.js"),
    ]);
    const registry = createBuiltinRegistry();
    for (const name of CRON_EXCLUDED_TOOLS) registry.unregister(name);

    let resolved: import("../ai/resolve.js").ResolvedRuntime | undefined;
    if (!options.transport) {
      const { resolveRuntime } = await import("../ai/resolve.js");
      try {
        resolved = resolveRuntime({
          flags: {
            ...(typeof job.model === "string" && job.model ? { model: job.model } : {}),
            ...(typeof job.provider === "string" && job.provider ? { provider: job.provider } : {}),
            ...(typeof job.base_url === "string" && job.base_url ? { baseUrl: job.base_url } : {}),
          },
          config,
          env,
          home,
        });
      } catch (error) {
        return { ok: false, output: "", error: error instanceof Error ? error.message : String(error) };
      }
    }

    let store: RecordingSessions | null = null;
    if (options.record !== false) {
      try {
        // Recording store: a damaged state.db is moved aside, and writes that meet another
        // process's lock are queued and retried instead of lost.
        if (options.openSessions) store = options.openSessions();
        else {
          const { openRecordingStore } = await import("../state/recording-store.js");
          store = openRecordingStore(home, {
            notify: (message) => options.onWarning?.(`state.db: ${message}`),
          });
        }
      } catch (error) {
        options.onWarning?.(`cron: state.db could not be opened, the run is not recorded: ${String(error)}`);
      }
    }
    const toolsets = job.enabled_toolsets?.length ? job.enabled_toolsets : config.toolsets;
    const session = await ChatSession.open({
      config,
      home,
      env,
      ...(resolved ? { resolved } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(typeof job.workdir === "string" && job.workdir ? { cwd: job.workdir } : {}),
      toolsets: toolsets.filter((t) => !CRON_EXCLUDED_TOOLS.includes(t as never)),
      registry,
      platform: "cron",
      source: "cron",
      skipMemory: true,
      store,
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    options.logger
      ?.child({ component: "cron", sessionId: session.id })
      .info("job start", { job: job.id, name: job.name });
    // Stopping the ticker interrupts the agent as /stop would (a running command's group is killed).
    const stop = () => session.interrupt();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      if (signal?.aborted)
        return { ok: false, output: "", error: "The run was stopped before the agent started." };
      // A non-local backend starts before the model is asked; its error fails the job, never a host run.
      await session.agent.prepareEnvironment();
      const result = await session.run(message).result;
      if (result.reason === "completed") return { ok: true, output: result.text };
      return {
        ok: false,
        output: result.text,
        error: result.error ?? `The agent stopped (${result.reason}) before finishing.`,
      };
    } catch (error) {
      const fix = error instanceof Error && "fix" in error ? ` Fix: ${String(error.fix)}` : "";
      return {
        ok: false,
        output: "",
        error: `${error instanceof Error ? error.message : String(error)}${fix}`,
      };
    } finally {
      signal?.removeEventListener("abort", stop);
      await session.close("cron_complete");
      await store?.drain(RUN_SAVE_WAIT_MS);
      await store?.close();
    }
  };
}
