/**
 * The process's subagents: every running `delegate_task` child, background child and `/background`
 * agent, with its progress and a way to stop it. One registry per tool runtime (so per REPL,
 * gateway or one-shot run), shared by every agent of that process; `/agents` reads it. Finished
 * entries stay listed for a while so `/agents` can say how the last ones ended.
 */
import type { DelegationResult, ToolRuntime } from "../../tools/types.js";

/** `child`: one of a batch the parent waits for; `async`: `background: true`; `background`: `/background`. */
export type SubagentKind = "child" | "async" | "background";

export type SubagentStatus = "running" | DelegationResult["status"];

export interface SubagentInfo {
  /** Short id the user types (`/agents stop <id>`). */
  readonly id: string;
  readonly kind: SubagentKind;
  readonly goal: string;
  /** The delegating agent's session (for `/background`: the chat's). */
  readonly parentSessionId: string;
  /** The child's own session (recorded with `parent_session_id` = `parentSessionId`). */
  readonly sessionId: string;
  /** The child's terminal task: its own shell, cwd and background processes. */
  readonly taskId: string;
  readonly depth: number;
  readonly startedAt: number;
  /** An external ACP agent (`delegate_task` with `acp_command`): its command line. */
  readonly acp?: string;
  status: SubagentStatus;
  /** What it does now: "starting", "thinking", the tool it runs; its status once ended. */
  detail: string;
  /** Model calls so far. */
  iterations: number;
  endedAt?: number;
}

interface Entry extends SubagentInfo {
  stop(): void;
}

/** Finished entries kept for `/agents`. */
const KEEP_FINISHED = 20;

export class SubagentRegistry {
  private readonly entries = new Map<string, Entry>();
  private counter = 0;

  /** A new short id: `sa1`, `sa2`, … (unique within the process). */
  nextId(): string {
    this.counter += 1;
    return `sa${this.counter}`;
  }

  add(info: Omit<SubagentInfo, "status" | "detail" | "iterations">, stop: () => void): SubagentInfo {
    const entry: Entry = { ...info, status: "running", detail: "starting", iterations: 0, stop };
    this.entries.set(info.id, entry);
    return entry;
  }

  progress(id: string, detail: string, iterations?: number): void {
    const entry = this.entries.get(id);
    if (entry?.status !== "running") return;
    entry.detail = detail;
    if (iterations !== undefined) entry.iterations = iterations;
  }

  finish(id: string, status: DelegationResult["status"], iterations: number, endedAt: number): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.status = status;
    entry.detail = status;
    entry.iterations = iterations;
    entry.endedAt = endedAt;
    const finished = [...this.entries.values()].filter((e) => e.status !== "running");
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
      this.entries.delete(old.id);
    }
  }

  /** Running entries first (oldest first), then finished ones (newest first). */
  list(): SubagentInfo[] {
    const all = [...this.entries.values()].map(({ stop: _stop, ...info }) => ({ ...info }));
    const running = all.filter((e) => e.status === "running").sort((a, b) => a.startedAt - b.startedAt);
    const ended = all
      .filter((e) => e.status !== "running")
      .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0));
    return [...running, ...ended];
  }

  get(id: string): SubagentInfo | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const { stop: _stop, ...info } = entry;
    return { ...info };
  }

  /** Running background work (`async` and `background` kinds), which `max_async_children` caps. */
  runningBackground(): number {
    return [...this.entries.values()].filter((e) => e.status === "running" && e.kind !== "child").length;
  }

  /** Stops one running subagent (its children stop with it); false when none runs under that id. */
  stop(id: string): boolean {
    const entry = this.entries.get(id);
    if (entry?.status !== "running") return false;
    entry.detail = "stopping";
    entry.stop();
    return true;
  }

  stopAll(): void {
    for (const entry of this.entries.values()) if (entry.status === "running") entry.stop();
  }
}

/** The runtime's registry, created on first use; running subagents stop when the runtime is disposed. */
export function subagentRegistry(runtime: ToolRuntime): SubagentRegistry {
  return runtime.get("delegation:subagents", () => {
    const registry = new SubagentRegistry();
    runtime.onDispose(() => registry.stopAll());
    return registry;
  });
}
