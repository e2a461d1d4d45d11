/**
 * Runs one dataset prompt as its own agent session: source and platform `batch` (recorded in
 * state.db, resumable with `hermes -r ID`), its own working directory and terminal task, no memory,
 * no context files (they would leak the operator's files into training data, as upstream avoids),
 * nobody to ask: `clarify` is removed and dangerous commands are refused by the approval policy
 * (no prompt to approve them) unless the run was started with `--yolo`. A row's `image` runs the
 * prompt's tools in that container image through the docker backend (or the image key of the
 * configured non-local backend), with a container of its own that is removed at the end.
 */
import { existsSync, statSync } from "node:fs";
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { Message, ToolSchema, Transport, Usage } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionStore } from "../state/types.js";
import type { Logger } from "../util/log.js";
import type { DatasetRow } from "./dataset.js";

/** Tools a batch prompt never gets: nobody answers questions, and no memory or jobs outlive it. */
export const BATCH_EXCLUDED_TOOLS = ["clarify", "memory", "cronjob"] as const;

export interface PromptRunContext {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** Resolved once for the run; absent with `transport`. */
  resolved?: ResolvedRuntime;
  transport?: Transport;
  store: SessionStore | null;
  maxTurns: number;
  yolo: boolean;
  logger?: Logger;
  onWarning?: (message: string) => void;
}

export type PromptOutcome =
  | {
      kind: "ran";
      sessionId: string;
      model: string;
      messages: Message[];
      tools: ToolSchema[];
      completed: boolean;
      /** The agent stopped for a reason other than finishing or running out of turns. */
      partial: boolean;
      reason: string;
      error?: string;
      apiCalls: number;
      usage: Usage;
    }
  /** Stopped by the run's interrupt: not done, run again on resume. */
  | { kind: "interrupted" }
  /** Failed before a trajectory existed (bad cwd, image, provider): retried on resume. */
  | { kind: "error"; error: string };

/**
 * The config a row runs with: the row's image replaces the backend's image (local runs switch to
 * docker), in a container of this prompt alone that is removed when the prompt ends.
 */
export function configForRow(config: HermesConfig, row: Pick<DatasetRow, "image">): HermesConfig {
  if (!row.image) return config;
  const terminal = config.terminal as HermesConfig["terminal"] & Record<string, unknown>;
  const backend =
    typeof terminal.backend === "string" && terminal.backend !== "local" ? terminal.backend : "docker";
  const image =
    backend === "singularity"
      ? { singularity_image: row.image.startsWith("docker://") ? row.image : `docker://${row.image}` }
      : backend === "modal"
        ? { modal_image: row.image }
        : backend === "daytona"
          ? { daytona_image: row.image }
          : { docker_image: row.image };
  return {
    ...config,
    terminal: {
      ...terminal,
      backend,
      ...image,
      container_persistent: false,
      docker_persist_across_processes: false,
    },
  };
}

/** Runs `row` in `cwd` with `toolsets`; never throws (a failure is an `error` outcome). */
export async function runPrompt(
  row: DatasetRow,
  cwd: string,
  toolsets: readonly string[],
  ctx: PromptRunContext,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  if (signal.aborted) return { kind: "interrupted" };
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    return { kind: "error", error: `working directory ${cwd} does not exist (the row's "cwd").` };
  }
  const [{ ChatSession }, { createBuiltinRegistry }] = await Promise.all([
    import("../agent/chat-session.js"),
    import("../tools/builtin.js"),
  ]);
  const registry = createBuiltinRegistry();
  for (const name of BATCH_EXCLUDED_TOOLS) registry.unregister(name);
  let session: import("../agent/chat-session.js").ChatSession | undefined;
  const stop = () => session?.interrupt();
  signal.addEventListener("abort", stop, { once: true });
  try {
    session = await ChatSession.open({
      config: configForRow(ctx.config, row),
      home: ctx.home,
      env: ctx.env,
      cwd,
      ...(ctx.resolved ? { resolved: ctx.resolved } : {}),
      ...(ctx.transport ? { transport: ctx.transport } : {}),
      toolsets: toolsets.filter((t) => !BATCH_EXCLUDED_TOOLS.includes(t as never)),
      registry,
      platform: "batch",
      source: "batch",
      skipMemory: true,
      skipContextFiles: true,
      maxTurns: ctx.maxTurns,
      yolo: ctx.yolo,
      store: ctx.store,
      ...(ctx.onWarning ? { onWarning: ctx.onWarning } : {}),
      ...(ctx.logger ? { logger: ctx.logger } : {}),
    });
    // A container backend starts before the model is asked: a missing image fails this prompt
    // (retried on resume), never a run on the host.
    await session.agent.prepareEnvironment();
    if (signal.aborted) return { kind: "interrupted" };
    const result = await session.run(row.prompt).result;
    if (result.reason === "interrupted" || signal.aborted) return { kind: "interrupted" };
    return {
      kind: "ran",
      sessionId: session.id,
      model: session.model,
      messages: [...session.agent.messages],
      tools: await session.agent.toolSchemas(),
      completed: result.reason === "completed",
      partial: result.reason !== "completed" && result.reason !== "max_turns",
      reason: result.reason,
      ...(result.error ? { error: result.error } : {}),
      apiCalls: result.iterations,
      usage: result.usage,
    };
  } catch (error) {
    const fix = error instanceof Error && "fix" in error ? ` Fix: ${String(error.fix)}` : "";
    return { kind: "error", error: `${error instanceof Error ? error.message : String(error)}${fix}` };
  } finally {
    signal.removeEventListener("abort", stop);
    await session?.close("batch_complete").catch(() => undefined);
  }
}
