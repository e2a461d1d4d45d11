/**
 * memory: the agent's persistent notes (MEMORY.md) and user profile (USER.md) in the home's
 * `memories/` folder. Writes land on disk at once; the system prompt shows them from the next
 * session on (the current prompt is frozen for prompt caching).
 */
import { type TUnsafe, Type } from "@sinclair/typebox";
import type { MemoryRecords } from "../knowledge/memory/store.js";
import type { MemoryOperation, MemoryResult, MemoryTarget } from "../knowledge/memory/types.js";
import { knowledgeStores } from "../knowledge/stores.js";
import description from "./memory.md";
import { defineTool, type ToolContext } from "./types.js";
import { gateOn, payloadOf, type StagedResult, stageWrite } from "./write-approval/stage.js";

/** A string enum as plain `{type: "string", enum}`, shorter than TypeBox's union of consts. */
function stringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

const operation = Type.Object({
  action: stringEnum(["add", "replace", "remove"] as const),
  content: Type.Optional(Type.String()),
  old_text: Type.Optional(Type.String()),
});

const parameters = Type.Object({
  action: Type.Optional(stringEnum(["add", "replace", "remove", "read"] as const)),
  target: Type.Optional(stringEnum(["memory", "user"] as const, { description: "Default memory." })),
  content: Type.Optional(Type.String({ description: "Entry text (add, replace)." })),
  old_text: Type.Optional(
    Type.String({ description: "A short unique substring naming the entry (replace, remove)." }),
  ),
  operations: Type.Optional(
    Type.Array(operation, { description: "Batch, applied in order; action is then not needed." }),
  ),
});

/** The `memory:` section of config.yaml, read defensively (missing keys keep their defaults). */
interface MemoryConfig {
  memory_enabled: boolean;
  user_profile_enabled: boolean;
  memory_char_limit?: number;
  user_char_limit?: number;
}

function memoryConfig(config: Readonly<Record<string, unknown>>): MemoryConfig {
  const raw = config.memory;
  const section: Record<string, unknown> =
    raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const flag = (key: string) => section[key] !== false;
  const num = (key: string) => (typeof section[key] === "number" ? section[key] : undefined);
  return {
    memory_enabled: flag("memory_enabled"),
    user_profile_enabled: flag("user_profile_enabled"),
    memory_char_limit: num("memory_char_limit"),
    user_char_limit: num("user_char_limit"),
  };
}

function disabled(target: MemoryTarget): MemoryResult {
  const [what, key] =
    target === "user"
      ? ["The user profile (USER.md)", "user_profile_enabled"]
      : ["Memory (MEMORY.md)", "memory_enabled"];
  return {
    success: false,
    target,
    error: `${what} is switched off in config (memory.${key}: false), so nothing can be read or saved there. Continue without it.`,
  };
}

/** Arguments of a memory write, as the tool takes them and as a staged payload replays them. */
export interface MemoryWriteArgs {
  action?: string | undefined;
  content?: string | undefined;
  old_text?: string | undefined;
  operations?: readonly MemoryOperation[] | undefined;
}

/** Whether `args` is a batch (operations given, and no single action instead). */
function isBatch(
  args: MemoryWriteArgs,
): args is MemoryWriteArgs & { operations: readonly MemoryOperation[] } {
  return args.operations !== undefined && (args.operations.length > 0 || args.action === undefined);
}

/**
 * Applies one memory write through the store (locks, limits, injection scan, drift guard). The
 * tool's direct path and approving a staged write both end here.
 */
export function runMemoryWrite(
  store: MemoryRecords,
  target: MemoryTarget,
  args: MemoryWriteArgs,
): Promise<MemoryResult> | MemoryResult {
  if (isBatch(args) || args.action === "batch") return store.apply(target, args.operations ?? []);
  switch (args.action) {
    case "add":
      return store.add(target, args.content ?? "");
    case "replace":
      return store.replace(target, args.old_text ?? "", args.content ?? "");
    case "remove":
      return store.remove(target, args.old_text ?? "");
    default:
      return {
        success: false,
        target,
        error: 'Pass action ("add", "replace", "remove" or "read"), or operations for a batch.',
      };
  }
}

/** The home's memory store (the state backend's) with the `memory:` limits of `config`, for callers outside the tool. */
export function memoryStoreFor(home: string, config: Readonly<Record<string, unknown>>): MemoryRecords {
  return knowledgeStores(home).memory(memoryConfig(config));
}

/**
 * With `memory.write_approval` on: the write checked and staged (or refused when it could never
 * apply); undefined when the gate is off and the caller writes directly.
 */
async function gateMemory(
  ctx: ToolContext,
  store: MemoryRecords,
  target: MemoryTarget,
  args: MemoryWriteArgs,
): Promise<MemoryResult | StagedResult | undefined> {
  if (!gateOn(ctx, "memory")) return undefined;
  const batch = isBatch(args);
  const ops: MemoryOperation[] = batch
    ? [...args.operations]
    : [{ action: args.action as MemoryOperation["action"], content: args.content, old_text: args.old_text }];
  const refused = await store.precheck(target, ops, batch);
  if (refused) return refused;
  const payload = batch
    ? { action: "batch", target, operations: ops.map((op) => payloadOf({ ...op })) }
    : { action: args.action, target, content: args.content ?? null, old_text: args.old_text ?? null };
  return stageWrite(ctx, "memory", payload);
}

export const memoryTool = defineTool({
  name: "memory",
  toolset: "memory",
  description,
  parameters,
  parallelSafe: false,
  // A read changes nothing; every other form writes (or stages) memory.
  sideEffectFreeCall: (args) => args.action === "read" && !isBatch(args),
  emoji: "🧠",
  check({ config }) {
    const cfg = memoryConfig(config);
    return cfg.memory_enabled || cfg.user_profile_enabled;
  },
  async handler(args, ctx): Promise<MemoryResult | StagedResult> {
    const cfg = memoryConfig(ctx.config);
    const target: MemoryTarget = args.target ?? "memory";
    if (!(target === "user" ? cfg.user_profile_enabled : cfg.memory_enabled)) return disabled(target);
    const store = knowledgeStores(ctx.home).memory(cfg);
    if (args.action === "read" && !isBatch(args)) return store.read(target);
    if (args.action === undefined && !isBatch(args)) return runMemoryWrite(store, target, args);
    const staged = await gateMemory(ctx, store, target, args);
    return staged ?? runMemoryWrite(store, target, args);
  },
});
