/**
 * The gateway's hook registry: loads the enabled hook folders' handlers and fires them. A handler
 * is `handle(event, context)` (named export, `default.handle`, or a default function), sync or
 * async. Firing never waits for it: the turn goes on, a throw or rejection is logged, and a
 * handler still running after its timeout is logged as hung (JS cannot cancel it; a synchronous
 * endless loop would still stall the process, which is why folders load only when enabled).
 */
import { createRequire } from "node:module";
import { discoverGatewayHooks, type GatewayHookFolder } from "./discover.js";

export type GatewayHookHandler = (event: string, context: Record<string, unknown>) => unknown;

interface LoadedHook {
  name: string;
  events: readonly string[];
  handle: GatewayHookHandler;
}

export interface GatewayHooksOptions {
  home: string;
  config: Record<string, unknown>;
  /** One line per problem (a folder not loaded, a handler that threw or hung). */
  warn: (message: string) => void;
  /** How long a handler may run before it is reported as hung (default 10 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export class GatewayHooks {
  private readonly hooks: LoadedHook[] = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly warn: (message: string) => void,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  /** Adds a handler (the loader's, or a test's). */
  add(name: string, events: readonly string[], handle: GatewayHookHandler): void {
    this.hooks.push({ name, events, handle });
  }

  get size(): number {
    return this.hooks.length;
  }

  /** Whether some hook listens for `event` (so a caller can skip building its context). */
  wants(event: string): boolean {
    return this.hooks.some((h) => matches(h.events, event));
  }

  /** The events hooks subscribed to (for deciding which agent events to bridge). */
  events(): Set<string> {
    return new Set(this.hooks.flatMap((h) => h.events));
  }

  /** Fires `event` at every matching hook without waiting; each gets its own copy of `context`. */
  emit(event: string, context: Record<string, unknown>): void {
    for (const hook of this.hooks) {
      if (!matches(hook.events, event)) continue;
      const run = this.runOne(hook, event, structuredClone(context));
      this.pending.add(run);
      void run.finally(() => this.pending.delete(run));
    }
  }

  /** Resolves when the handlers fired so far have finished or timed out (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async runOne(hook: LoadedHook, event: string, context: Record<string, unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), this.timeoutMs);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([Promise.resolve().then(() => hook.handle(event, context)), hung]);
      if (outcome === "hung")
        this.warn(
          `hook "${hook.name}" did not finish ${event} within ${this.timeoutMs / 1000} s; the gateway went on without it`,
        );
    } catch (error) {
      this.warn(`hook "${hook.name}" failed on ${event}: ${describe(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `command:*` matches every `command:<name>`; anything else matches exactly. */
export function matches(events: readonly string[], event: string): boolean {
  return events.some((e) => e === event || (e.endsWith(":*") && event.startsWith(e.slice(0, -1))));
}

/** Loads the enabled hook folders of a home; folders not enabled are counted, never run. */
export function loadGatewayHooks(options: GatewayHooksOptions): {
  hooks: GatewayHooks;
  folders: GatewayHookFolder[];
} {
  const hooks = new GatewayHooks(options.warn, options.timeoutMs ?? timeoutOf(options.config));
  const folders = discoverGatewayHooks(options.home, options.config);
  const require = createRequire(import.meta.url);
  for (const folder of folders) {
    if (!folder.enabled) continue;
    if (folder.error || !folder.handler) {
      options.warn(`hook "${folder.name}" is not loaded: ${folder.error ?? "no handler"}`);
      continue;
    }
    try {
      hooks.add(folder.name, folder.events, handlerOf(require(folder.handler), folder.handler));
    } catch (error) {
      options.warn(`hook "${folder.name}" is not loaded: ${describe(error)}`);
    }
  }
  return { hooks, folders };
}

/** `gateway_hooks.timeout` in seconds. */
function timeoutOf(config: Record<string, unknown>): number {
  const section = config["gateway_hooks"];
  const raw =
    section && typeof section === "object" ? Number((section as Record<string, unknown>)["timeout"]) : NaN;
  return Number.isFinite(raw) && raw > 0 ? raw * 1000 : DEFAULT_TIMEOUT_MS;
}

function handlerOf(mod: unknown, file: string): GatewayHookHandler {
  const m = (mod ?? {}) as Record<string, unknown>;
  const def = m["default"] as Record<string, unknown> | ((...a: unknown[]) => unknown) | undefined;
  const candidates = [m["handle"], typeof def === "object" && def ? def["handle"] : undefined, def, mod];
  const found = candidates.find((c) => typeof c === "function");
  if (!found) throw new Error(`${file} exports no handle(event, context) function`);
  return found as GatewayHookHandler;
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n")[0] ?? "").slice(0, 300) || "unknown error";
}
