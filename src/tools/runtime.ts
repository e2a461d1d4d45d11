import type { ToolRuntime } from "./types.js";

/** Creates the process-wide resource holder that surfaces pass to every agent they build. */
export function createToolRuntime(): ToolRuntime {
  const resources = new Map<string, unknown>();
  const disposers: Array<() => void | Promise<void>> = [];
  return {
    get<T>(key: string, create: () => T): T {
      if (!resources.has(key)) resources.set(key, create());
      return resources.get(key) as T;
    },
    onDispose(fn) {
      disposers.push(fn);
    },
    async dispose() {
      const pending = disposers.splice(0).reverse();
      for (const fn of pending) {
        try {
          await fn();
        } catch {
          // Disposal is best effort: one failing resource must not keep the others alive.
        }
      }
      resources.clear();
    },
  };
}
