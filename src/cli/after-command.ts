/**
 * Work that runs after a command has finished and its output is written, just before the process
 * exits (main.ts): never on the start-up path and never in the user's way. A failure here is
 * ignored: the command's own result stands.
 */
const finishers: Array<() => Promise<void>> = [];

/** Registers `fn` to run once the current command has finished. */
export function afterCommand(fn: () => Promise<void>): void {
  finishers.push(fn);
}

/** Runs (and forgets) what was registered, in order. */
export async function runAfterCommand(): Promise<void> {
  for (const fn of finishers.splice(0)) {
    try {
      await fn();
    } catch {
      // Housekeeping must not change the exit code of the command the user ran.
    }
  }
}
