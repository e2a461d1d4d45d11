import type { ToolRuntime } from "./types.js";

/** Creates the process-wide resource holder that surfaces pass to every agent they build. */
export function createToolRuntime(): ToolRuntime {
  const resources = new Map<string, unknown>();
  const disposers: Array<() => void | Promise<void>> = [];
  const taskCleanups = new Map<string, Array<() => void | Promise<void>>>();
  const runAll = async (fns: Array<() => void | Promise<void>>): Promise<void> => {
    for (const fn of fns.reverse()) {
      try {
        await fn();
      } catch {
        // Disposal is best effort: one failing resource must not keep the others alive.
      }
    }
  };
  return {
    get<T>(key: string, create: () => T): T {
      if (!resources.has(key)) resources.set(key, create());
      return resources.get(key) as T;
    },
    onDispose(fn) {
      disposers.push(fn);
    },
    onTaskRelease(taskId, fn) {
      const list = taskCleanups.get(taskId) ?? [];
      list.push(fn);
      taskCleanups.set(taskId, list);
    },
    async releaseTask(taskId) {
      const fns = taskCleanups.get(taskId) ?? [];
      taskCleanups.delete(taskId);
      for (const key of [...resources.keys()]) if (key.endsWith(`:${taskId}`)) resources.delete(key);
      await runAll(fns);
    },
    async dispose() {
      const tasks = [...taskCleanups.values()].flat();
      taskCleanups.clear();
      await runAll(tasks);
      await runAll(disposers.splice(0));
      resources.clear();
    },
  };
}
