/**
 * What the tool-calling loop (`loop.ts`) is given, and the contract each injected part keeps.
 *
 * The loop's own guarantees rest on these contracts: every `tool_start` gets its `tool_end`, every
 * tool call in the history gets its result, and the turn ends with a `LoopResult` instead of a
 * rejection. So the loop does not trust them: `guardLoopDeps` wraps every injected function so
 * that a part breaking its contract (throwing where it must not) costs only what that part was
 * for. A throwing tool becomes an error result the model reads; a throwing helper (traits, guard,
 * steering, checkpoint, compression, recovery) becomes one `warning` event and the safe default
 * its contract names.
 */

import { repairHistory } from "../ai/history-repair.js";
import type { Message } from "../ai/types.js";
import type { ToolOutcome } from "../tools/types.js";
import type { GuardedCall, GuardrailVerdict } from "./guardrails.js";
import type { ModelCallDeps } from "./model-call.js";
import type { ModelRecovery } from "./recovery.js";

/** What the loop needs to know about a tool to schedule it. */
export interface ToolTraits {
  /** Read-only: may run next to other read-only calls. */
  parallelSafe: boolean;
  /** Talks to the user (clarify): the whole batch then runs one call at a time. */
  interactive: boolean;
  /**
   * Whether a call with these arguments changes nothing outside the session (`ToolDefinition`'s
   * `sideEffectFree`): when every call of a reply does, the reply is stored with the results in one
   * commit. Absent or throwing: it has side effects, and its call is stored before it runs.
   */
  sideEffectFree?: (args: Record<string, unknown>) => boolean;
  /**
   * The absolute paths a call with these arguments touches, for running path-scoped writers in
   * parallel when they do not overlap. Must not throw; a throw counts as "could touch anything".
   */
  paths?: (args: Record<string, unknown>) => string[];
}

/** One tool call as the loop hands it to `executeTool`: repaired name, parsed arguments. */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * The tool-loop guardrails as the loop uses them (`ToolLoopGuard` is the implementation).
 * Neither method may throw.
 */
export interface LoopGuard {
  /** Forgets the previous turn's counts; called once when the turn starts. */
  startTurn(): void;
  /** Records a finished call; an empty verdict means "nothing to say". */
  record(call: GuardedCall): GuardrailVerdict;
}

/**
 * The loop's dependencies. Every function member must not throw (or reject): its doc comment says
 * what to return instead, and what the loop does when it throws anyway.
 */
export interface LoopDeps extends ModelCallDeps {
  /** Model calls allowed in this turn before the grace call and forced summary. */
  maxIterations: number;
  /**
   * Scheduling traits of a tool the model may call. Must not throw. `undefined` (an unknown tool)
   * schedules the call alone and non-interactive. A throw: a warning, then `undefined`.
   */
  traits(name: string): ToolTraits | undefined;
  /**
   * Runs one tool call to its result. Must not throw or reject: a failed or refused call resolves
   * to `{ ok: false, content, error }`, whose `content` the model reads. Should stop soon after
   * `signal` aborts. A throw or rejection becomes an error result that tells the model the call
   * returned nothing and may or may not have taken effect.
   */
  executeTool(call: ToolCallRequest, signal: AbortSignal): Promise<ToolOutcome>;
  /**
   * Guardrails against a model repeating itself; absent means none. A throwing method: a warning,
   * then the call's result stands without a verdict.
   */
  guard?: LoopGuard;
  /**
   * Pending `/steer` text, taken once; appended to the next tool result. Must not throw;
   * `undefined` or "" means none. A throw: a warning, then none.
   */
  takeSteering?(): string | undefined;
  /** Per-session count of unknown tool names, so repeated misses get the list of valid names. */
  unknownToolMisses: { count: number };
  /**
   * Runs after each batch of tool results is appended, before the next model call of the turn:
   * the agent compresses there when the context has passed its threshold mid-turn. May rewrite
   * `messages` in place, and must leave every tool call answered. Must not reject; a rejection: a
   * warning, and the turn goes on with the history as it is.
   */
  checkpoint?(): Promise<void>;
  /**
   * Settles when what the event listeners store for the events so far is stored (the session
   * recorder's writes to an asynchronous store). The loop waits for it before each step, a model
   * call or a tool call, so every message is in the store before the step after it runs. Must not
   * reject.
   */
  settled?(): Promise<void>;
}

/** `deps` with every injected function held to its contract (see the module comment). */
export function guardLoopDeps(deps: LoopDeps): LoopDeps {
  const warned = new Set<string>();
  const emit: LoopDeps["emit"] = (event) => {
    try {
      deps.emit(event);
    } catch {
      // A consumer that throws must not end the turn; nobody is left to tell but the others.
    }
  };
  /** One warning per part and turn: a part that throws on every call must not flood the user. */
  const broke = (part: string, error: unknown, consequence: string) => {
    if (warned.has(part)) return;
    warned.add(part);
    emit({ type: "warning", message: `${part} failed (${errorText(error)}); ${consequence}.` });
  };
  const { guard, takeSteering, checkpoint, compress, recovery } = deps;
  return {
    ...deps,
    emit,
    traits: (name) => {
      try {
        return deps.traits(name);
      } catch (error) {
        broke("Reading the tool's traits", error, `${name} runs on its own`);
        return undefined;
      }
    },
    executeTool: async (call, signal) => {
      try {
        return await deps.executeTool(call, signal);
      } catch (error) {
        return toolCrashOutcome(call.name, error, signal);
      }
    },
    ...(guard ? { guard: guardedGuard(guard, broke) } : {}),
    ...(takeSteering
      ? {
          takeSteering: () => {
            try {
              return takeSteering();
            } catch (error) {
              broke("Taking the /steer note", error, "the note is not passed on");
              return undefined;
            }
          },
        }
      : {}),
    ...(checkpoint
      ? {
          checkpoint: async () => {
            try {
              await checkpoint();
            } catch (error) {
              broke("The mid-turn context check", error, "the turn goes on uncompressed");
            }
          },
        }
      : {}),
    ...(compress
      ? {
          compress: async (failure) => {
            try {
              return await compress(failure);
            } catch (error) {
              broke("Compressing the conversation", error, "the request is not shrunk");
              return false;
            }
          },
        }
      : {}),
    ...(recovery ? { recovery: guardedRecovery(recovery, broke) } : {}),
  };
}

type Broke = (part: string, error: unknown, consequence: string) => void;

function guardedGuard(guard: LoopGuard, broke: Broke): LoopGuard {
  return {
    startTurn: () => {
      try {
        guard.startTurn();
      } catch (error) {
        broke("The tool-loop guardrail", error, "its counts go on from the last turn");
      }
    },
    record: (call) => {
      try {
        return guard.record(call);
      } catch (error) {
        broke("The tool-loop guardrail", error, "this turn's calls are not checked for loops");
        return {};
      }
    },
  };
}

/** Every recovery hook answers "not possible" (undefined) instead of throwing. */
function guardedRecovery(recovery: ModelRecovery, broke: Broke): ModelRecovery {
  const { rotateCredential, rebuildTransport, fallback, succeeded } = recovery;
  const attempt =
    <A extends unknown[], R>(part: string, consequence: string, hook: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R | undefined> => {
      try {
        return await hook.apply(recovery, args);
      } catch (error) {
        broke(part, error, consequence);
        return undefined;
      }
    };
  return {
    get primaryLabel() {
      return recovery.primaryLabel;
    },
    ...(rotateCredential
      ? { rotateCredential: attempt("Switching credentials", "the same key is kept", rotateCredential) }
      : {}),
    ...(rebuildTransport
      ? { rebuildTransport: attempt("Rebuilding the client", "the old one is kept", rebuildTransport) }
      : {}),
    ...(fallback
      ? { fallback: attempt("Resolving a fallback provider", "no fallback is used", fallback) }
      : {}),
    // Bookkeeping after a success; model-call.ts already ignores its failure (the answer stands).
    ...(succeeded ? { succeeded: () => succeeded.call(recovery) } : {}),
  };
}

/**
 * The result of a tool call whose `executeTool` threw: the model is told that nothing came back
 * and that the action may or may not have happened, as for a call cut off by a crash.
 */
export function toolCrashOutcome(name: string, error: unknown, signal: AbortSignal): ToolOutcome {
  const message = signal.aborted
    ? `${name} was interrupted by the user.`
    : `${name} failed inside Hermes and returned no result (${errorText(error)}). It may or may not have taken effect; check before repeating it.`;
  return { content: JSON.stringify({ error: message }), ok: false, error: message };
}

/** An unexpected error's message; one that cannot even be read is still reported. */
export function errorText(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return "an error that could not be described";
  }
}

/**
 * After a turn broke off unexpectedly: tool calls at the end of the history without a result get
 * the interrupted stand-in, appended and emitted like any message so the store holds it too.
 */
export function answerOpenCalls(
  history: Message[],
  emit: (e: { type: "message"; message: Message }) => void,
): void {
  let appended: Message[];
  try {
    appended = repairHistory(history).appended ?? [];
  } catch {
    // A history repair cannot read is repaired again, with the same rules, when it is loaded.
    return;
  }
  for (const message of appended) {
    history.push(message);
    emit({ type: "message", message });
  }
}
