/**
 * V8's tier-up threshold for a CLI chat. V8 hands a function to its optimizing compiler (TurboFan)
 * once about 66 KB of its bytecode has run (`--interrupt-budget`). An agent loop's own functions
 * (the request, the stream, the store write, the tool call) reach that within a few model calls
 * and are compiled, deoptimized and compiled again while the session runs, on the main thread's
 * time and the compiler threads'; over tens to hundreds of model calls that costs more than the
 * optimized code saves (measured end to end with `hermes -z`, with a budget six times the
 * default: 0.1-0.2 ms less per model call over 100 calls, about 0.05 ms less over 300, the same
 * total over 20). So a chat raises the budget when it starts, not the process: start-up code
 * (config, YAML, the system prompt) still runs better at V8's default.
 *
 * A V8 code cache records the flags it was made with and is refused under others, so the default
 * is put back before bin/hermes writes one (it calls the function registered under
 * `Symbol.for("hermes.restoreV8Flags")`). Only a V8 whose default this file knows is tuned; any
 * other is left as it is, and `HERMES_V8_DEFAULTS=1` leaves it too.
 */
import { setFlagsFromString } from "node:v8";

/** V8's default `--interrupt-budget`, by V8 major.minor. */
const DEFAULT_BUDGETS: Readonly<Record<string, number>> = { "11.3": 67_584 };
/** How many times the default a chat's budget is. */
const FACTOR = 6;
const RESTORE = Symbol.for("hermes.restoreV8Flags");

let tuned = false;

/** Raises V8's tier-up threshold for the rest of this process (once; see the file comment). */
export function tuneJitForChat(
  env: NodeJS.ProcessEnv = process.env,
  v8Version: string = process.versions.v8,
): boolean {
  if (tuned || env["HERMES_V8_DEFAULTS"] === "1") return false;
  const base = DEFAULT_BUDGETS[v8Version.split(".").slice(0, 2).join(".")];
  if (base === undefined) return false;
  setFlagsFromString(`--interrupt-budget=${base * FACTOR}`);
  tuned = true;
  (globalThis as Record<symbol, unknown>)[RESTORE] = () => {
    setFlagsFromString(`--interrupt-budget=${base}`);
  };
  return true;
}
