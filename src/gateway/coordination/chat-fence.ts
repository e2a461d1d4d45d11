/**
 * Gates in front of a chat turn's effects, for fenced chat claims (several instances): the
 * session store the turn writes through, the tool registry it runs tools through, the approval
 * prompts it sends and the platform adapter its reply goes out on. Each gated call first asks a
 * gate: nothing (the claim is valid: the call goes on at once, no extra tick), a promise that
 * resolves once the claim is confirmed in the database, or a rejection (`ChatClaimLostError`)
 * once another instance took the chat: the call is then never made.
 *
 * The gates are synchronous checks first on purpose: after a stall, the first callbacks that run
 * are often the turn's own I/O (a model stream chunk, a tool's exit), before any timer, so a
 * timer alone would let their effects through.
 *
 * A gate is a local check: a write that passed it just before a stall can still arrive late. So
 * session writes and chat → session index writes also carry the claim held when they were made
 * (`ChatClaim.fence`) to a store that lets the database check it (PostgreSQL's `fencedBy`): the
 * write lands only while that claim is the chat's current one, and otherwise throws
 * `ChatClaimLostError` as a gate would.
 */
import type { ApprovalPrompt } from "../../agent/approval-policy.js";
import type { ChatClaim, ClaimFence, ClaimFencedStore } from "../../state/coordination.js";
import type { PlatformAdapter } from "../platforms/types.js";

/** Undefined: go on now. A promise: wait for it (it rejects when the chat was lost). */
export type Gate = () => Promise<void> | undefined;

/** The session store calls that write (everything a turn, a command or a close records). */
export const SESSION_WRITES: readonly string[] = [
  "createSession",
  "startSession",
  "updateSession",
  "setTitle",
  "endSession",
  "reopenSession",
  "continueSession",
  "appendMessage",
  "appendMessages",
  "recordUsage",
  "undoTurns",
  "branchSession",
  "deleteSession",
];

/** The chat → session index calls that write. */
export const INDEX_WRITES: readonly string[] = ["set", "markInterrupted", "takeInterrupted", "touch"];

/** A platform adapter's calls that put something in a chat. */
export const ADAPTER_SENDS: readonly string[] = ["send", "edit", "typing", "sendMedia", "processing"];

/**
 * `target` with the calls named in `methods` passing `gate` first (given the call's arguments);
 * everything else as it is. Methods are called on `target` itself (private fields keep working).
 */
export function gated<T extends object>(
  target: T,
  methods: readonly string[],
  gate: (args: unknown[]) => Promise<void> | undefined,
): T {
  const names = new Set<PropertyKey>(methods);
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (!names.has(prop)) return fn.bind(obj);
      return (...args: unknown[]) => {
        const wait = gate(args);
        return wait ? wait.then(() => fn.apply(obj, args)) : fn.apply(obj, args);
      };
    },
  });
}

/** What a conversation's agent is opened with that a gate fences (see `ChatRelay.fenceSession`). */
export interface FencedParts<S extends object, R extends object> {
  store?: S | null | undefined;
  registry?: R | undefined;
  onApproval?: ApprovalPrompt | undefined;
}

function canFence<S extends object>(store: S): store is S & ClaimFencedStore<S> {
  return typeof (store as Partial<ClaimFencedStore<S>>).fencedBy === "function";
}

/**
 * `store` with the calls named in `methods` passing `gate` first and, when the store can fence
 * (PostgreSQL), made through its view fenced by the claim `claimOf` names for the call. The claim
 * is read before the gate, so a write made while a claim was held carries that claim's token even
 * if the claim is lost before the write reaches the database (the database then refuses it); no
 * claim held here: unfenced. A store that cannot fence keeps the gate alone.
 */
function fencedCalls<S extends object>(
  store: S,
  methods: readonly string[],
  gate: (args: unknown[]) => Promise<void> | undefined,
  claimOf: (args: unknown[]) => ChatClaim | undefined,
): S {
  if (!canFence(store)) return gated(store, methods, gate);
  // One view per claim (its fence object), made on its first write.
  const views = new WeakMap<ClaimFence, S>();
  const viewFor = (fence: ClaimFence | undefined): S => {
    if (!fence) return store;
    const made = views.get(fence);
    if (made) return made;
    const view = store.fencedBy(fence);
    views.set(fence, view);
    return view;
  };
  const names = new Set<PropertyKey>(methods);
  return new Proxy(store, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== "function") return value;
      if (!names.has(prop)) return (value as (...args: unknown[]) => unknown).bind(obj);
      return (...args: unknown[]) => {
        const target = viewFor(claimOf(args)?.fence);
        const call = () =>
          (Reflect.get(target, prop, target) as (...a: unknown[]) => unknown).apply(target, args);
        const wait = gate(args);
        return wait ? wait.then(call) : call();
      };
    },
  });
}

/**
 * `store` with its writes behind `gate` and, when the store can fence (PostgreSQL), made through
 * its view fenced by the claim `claimOf()` names when the write is made (see `fencedCalls`).
 */
export function fenceStore<S extends object>(store: S, gate: Gate, claimOf: () => ChatClaim | undefined): S {
  return fencedCalls(store, SESSION_WRITES, gate, claimOf);
}

/**
 * The chat → session index with its writes (the chat's key is their first argument) behind
 * `gate(key)` and, when the index can fence (PostgreSQL), made under the claim `claimOf(key)`
 * names at that moment: a write delayed past a take-over is refused by the database instead of
 * pointing the chat at a stale session. Keys not held here: the gate alone.
 */
export function fenceIndexWrites<T extends object>(
  index: T,
  gate: (key: string) => Promise<void> | undefined,
  claimOf: (key: string) => ChatClaim | undefined,
): T {
  return fencedCalls(
    index,
    INDEX_WRITES,
    (args) => gate(String(args[0])),
    (args) => claimOf(String(args[0])),
  );
}

/**
 * The store, registry and approval prompt of one conversation, each behind `gate`; with
 * `claimOf` (the claim held for the conversation's chat now, if any), the store's writes also
 * carry that claim to the database (`fenceStore`).
 */
export function fenceParts<S extends object, R extends object>(
  parts: FencedParts<S, R>,
  gate: Gate,
  claimOf?: () => ChatClaim | undefined,
): FencedParts<S, R> {
  const { store, registry, onApproval } = parts;
  return {
    ...(store
      ? { store: claimOf ? fenceStore(store, gate, claimOf) : gated(store, SESSION_WRITES, gate) }
      : {}),
    ...(registry ? { registry: gated(registry, ["execute"], gate) } : {}),
    ...(onApproval
      ? {
          onApproval: ((approval, options) => {
            const wait = gate();
            return wait ? wait.then(() => onApproval(approval, options)) : onApproval(approval, options);
          }) as ApprovalPrompt,
        }
      : {}),
  };
}

/** The adapter a turn's reply goes out on, behind `gate`. */
export function fenceAdapter(adapter: PlatformAdapter, gate: Gate): PlatformAdapter {
  return gated(adapter, ADAPTER_SENDS, gate);
}

/** The gate of one claim held for a turn: passes while valid, confirms it when not, refuses once lost. */
export function claimGate(claim: ChatClaim): Gate {
  return () => {
    if (claim.lost.aborted) return Promise.reject(claim.lost.reason);
    return claim.valid() ? undefined : claim.ensure();
  };
}
