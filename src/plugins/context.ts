/**
 * The `ctx` a plugin's `register(ctx)` receives, and the checks on what it registers. Everything a
 * plugin adds is recorded on its `PluginRecord`, so disabling the plugin (it threw) takes all of
 * it away: hooks leave the bus, tools and commands answer that the plugin is disabled.
 */
import { HOOK_EVENTS, type HookBus, type HookEventName, type HookHandlers } from "../agent/hooks.js";
import type { CommandDef } from "../commands/types.js";
import type { MemoryProvider } from "../knowledge/memory/providers/types.js";
import { PLUGIN_TOOLSET_PREFIX } from "../tools/plugin-toolsets.js";
import type { AnyTool, ToolRegistry } from "../tools/registry.js";
import type { PluginManifest } from "./manifest.js";

export interface PluginRecord {
  name: string;
  dir: string;
  manifest: PluginManifest;
  status: "loaded" | "disabled";
  /** Why it was disabled (the message the user saw). */
  reason?: string;
  tools: string[];
  hooks: HookEventName[];
  commands: string[];
  memoryProviders: string[];
  /** Registered a fail-closed `pre_tool_call` guard: disabling it must keep blocking. */
  failClosed: boolean;
}

/** What a plugin's tool handler receives besides its arguments. */
export interface PluginToolContext {
  sessionId: string;
  taskId: string;
  cwd: string;
  signal: AbortSignal;
}

export interface PluginToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments: `{type: "object", properties: ...}`. */
  parameters: Record<string, unknown>;
  handler(args: Record<string, unknown>, ctx: PluginToolContext): unknown;
  check?(): boolean | Promise<boolean>;
  requiresEnv?: string[];
  parallelSafe?: boolean;
  emoji?: string;
  maxResultChars?: number;
}

export interface PluginCommandContext {
  /** Lines shown to the user (the REPL or the chat). */
  reply(...lines: string[]): void;
  /** "repl" or "chat". */
  surface: string;
  /** "cli", "telegram", ... */
  platform: string;
  sessionId: string;
}

export interface PluginHookOptions {
  timeoutMs?: number;
  /** `pre_tool_call` only: a throw or timeout blocks the call. */
  failClosed?: boolean;
}

/** The object passed to `register(ctx)`. */
export interface PluginContext {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly home: string;
  registerTool(spec: PluginToolSpec): void;
  registerHook<E extends HookEventName>(
    event: E,
    handler: HookHandlers[E],
    options?: PluginHookOptions,
  ): void;
  registerCommand(
    name: string,
    handler: (args: string, ctx: PluginCommandContext) => unknown,
    options?: { description?: string; args?: string },
  ): void;
  registerMemoryProvider(provider: MemoryProvider): void;
  /** A warning for the user (stderr in the CLI, the log in the gateway). */
  warn(message: string): void;
}

export interface ContextDeps {
  home: string;
  bus: HookBus;
  registry: ToolRegistry;
  addCommand: (command: CommandDef) => void;
  memoryProviders: Map<string, MemoryProvider>;
  warn: (message: string) => void;
  /** Called when a tool or command of the plugin throws. */
  fail: (record: PluginRecord, where: string, error: unknown) => void;
}

export class PluginRegistrationError extends Error {}

/** The hook-bus source of plugin `name`. */
export function pluginSource(name: string): string {
  return `plugin:${name}`;
}

export function createPluginContext(record: PluginRecord, deps: ContextDeps): PluginContext {
  const source = pluginSource(record.name);
  const refuse = (message: string): never => {
    throw new PluginRegistrationError(message);
  };
  const disabledError = () =>
    new Error(`The plugin "${record.name}" is disabled for this run (${record.reason ?? "it failed"}).`);
  const ctx: PluginContext = {
    name: record.name,
    version: record.manifest.version,
    dir: record.dir,
    home: deps.home,
    registerTool(spec: PluginToolSpec) {
      if (typeof spec !== "object" || spec === null)
        refuse("registerTool takes {name, description, parameters, handler}");
      const { name, description, parameters, handler } = spec;
      if (typeof name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
        refuse(
          `registerTool: the name ${JSON.stringify(name)} is not valid (1-64 letters, digits, "_" or "-")`,
        );
      }
      if (typeof description !== "string" || !description.trim())
        refuse(`registerTool ${name}: a description is required`);
      if (typeof parameters !== "object" || parameters === null || parameters["type"] !== "object") {
        refuse(`registerTool ${name}: parameters must be a JSON Schema with type "object"`);
      }
      if (typeof handler !== "function") refuse(`registerTool ${name}: handler must be a function`);
      const owner = deps.registry.get(name);
      if (owner && owner.toolset !== `${PLUGIN_TOOLSET_PREFIX}${record.name}`) {
        refuse(
          `registerTool: "${name}" is already a tool of toolset "${owner.toolset}"; a plugin cannot replace it`,
        );
      }
      const tool: AnyTool = {
        name,
        toolset: `${PLUGIN_TOOLSET_PREFIX}${record.name}`,
        description,
        parameters: structuredClone(parameters),
        async handler(args: Record<string, unknown>, ctx) {
          if (record.status === "disabled") throw disabledError();
          try {
            return await handler(args, {
              sessionId: ctx.sessionId,
              taskId: ctx.taskId,
              cwd: ctx.cwd,
              signal: ctx.signal,
            });
          } catch (error) {
            deps.fail(record, `its tool ${name}`, error);
            throw error;
          }
        },
        ...(typeof spec.check === "function" ? { check: () => spec.check?.() ?? true } : {}),
        ...(Array.isArray(spec.requiresEnv)
          ? { requiresEnv: spec.requiresEnv.filter((v) => typeof v === "string") }
          : {}),
        ...(spec.parallelSafe === true ? { parallelSafe: true } : {}),
        ...(typeof spec.emoji === "string" ? { emoji: spec.emoji } : {}),
        ...(typeof spec.maxResultChars === "number" ? { maxResultChars: spec.maxResultChars } : {}),
      };
      deps.registry.register(tool);
      record.tools.push(name);
    },
    registerHook(event, handler, options) {
      if (!HOOK_EVENTS.includes(event)) {
        // Upstream has events this agent does not fire (transform_llm_output, ...): say so, go on.
        deps.warn(
          `plugin "${record.name}": the hook "${String(event)}" is not fired by Hermes-TS (known: ${HOOK_EVENTS.join(", ")}); it is ignored.`,
        );
        return;
      }
      if (typeof handler !== "function") refuse(`registerHook ${event}: the handler must be a function`);
      const failClosed = event === "pre_tool_call" && options?.failClosed === true;
      deps.bus.register(event, handler, {
        source,
        ...(typeof options?.timeoutMs === "number" && options.timeoutMs > 0
          ? { timeoutMs: options.timeoutMs }
          : {}),
        ...(failClosed ? { failClosed: true } : {}),
      });
      if (failClosed) record.failClosed = true;
      if (!record.hooks.includes(event)) record.hooks.push(event);
    },
    registerCommand(name, handler, options) {
      if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(name)) {
        refuse(
          `registerCommand: the name ${JSON.stringify(name)} is not valid (lower-case letters, digits, "_", "-")`,
        );
      }
      if (typeof handler !== "function") refuse(`registerCommand ${name}: the handler must be a function`);
      const command: CommandDef = {
        name,
        description: options?.description?.trim() || `(plugin ${record.name})`,
        ...(options?.args ? { args: options.args } : {}),
        category: "Info",
        async run(args, cctx) {
          if (record.status === "disabled") {
            cctx.reply(disabledError().message);
            return;
          }
          try {
            const answer = await handler(args, {
              reply: (...lines: string[]) => cctx.reply(...lines.map(String)),
              surface: cctx.surface.kind,
              platform: cctx.surface.platform,
              sessionId: cctx.session.id,
            });
            if (typeof answer === "string" && answer) cctx.reply(answer);
          } catch (error) {
            deps.fail(record, `its command /${name}`, error);
            cctx.reply(disabledError().message);
          }
        },
      };
      deps.addCommand(command);
      record.commands.push(name);
    },
    registerMemoryProvider(provider: MemoryProvider) {
      const ok =
        typeof provider === "object" &&
        provider !== null &&
        typeof provider.name === "string" &&
        typeof provider.status === "function" &&
        typeof provider.prefetch === "function" &&
        typeof provider.syncTurn === "function" &&
        typeof provider.close === "function" &&
        Array.isArray(provider.tools);
      if (!ok) {
        refuse("registerMemoryProvider takes {name, tools, status(), prefetch(), syncTurn(), close()}");
      }
      const key = provider.name.trim().toLowerCase();
      if (deps.memoryProviders.has(key)) refuse(`registerMemoryProvider: "${key}" is already registered`);
      deps.memoryProviders.set(key, provider);
      record.memoryProviders.push(key);
    },
    warn(message: string) {
      deps.warn(`plugin "${record.name}": ${String(message)}`);
    },
  };
  return Object.freeze(ctx);
}
