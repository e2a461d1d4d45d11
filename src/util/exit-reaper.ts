/**
 * Children that must not outlive hermes. Shells and background processes run detached (their own
 * process groups, so a terminal's Ctrl+C does not reach them directly); when hermes exits — normally,
 * through `process.exit`, or on SIGTERM/SIGHUP (see `installExitSignals`) — every registered cleanup
 * runs synchronously and SIGKILLs what it owns. There is no time for a grace period at that point.
 */

const cleanups = new Set<() => void>();
/** Run before `cleanups`: writes that the cleanups (a store's close) must still see. */
const early = new Set<() => void>();
let hooked = false;

function runAll(): void {
  for (const fn of [...early, ...cleanups]) {
    try {
      fn();
    } catch {
      // one failing cleanup must not keep the others from running
    }
  }
  early.clear();
  cleanups.clear();
}

/**
 * Runs `fn` (synchronous) when the process exits; returns a function that unregisters it. With
 * `early`, it runs before every cleanup registered without it (a last write before stores close).
 */
export function onProcessExit(fn: () => void, options: { early?: boolean } = {}): () => void {
  if (!hooked) {
    hooked = true;
    process.on("exit", runAll);
  }
  const set = options.early ? early : cleanups;
  set.add(fn);
  return () => {
    set.delete(fn);
  };
}

/**
 * SIGTERM and SIGHUP end hermes (exit 143 / 129) with the exit cleanups run. Node's default for
 * these signals is to die without running 'exit' listeners, which would leave shells behind. A
 * command that handles the signal itself (the gateway drains running turns) keeps its own handling:
 * this one steps aside whenever another listener is registered.
 */
export function installExitSignals(): void {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    process.on(signal, () => {
      if (process.listenerCount(signal) > 1) return;
      process.exit(code);
    });
  }
}
