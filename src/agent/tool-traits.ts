/**
 * What the loop needs to know of a registered tool to schedule and store its calls
 * (`ToolTraits`): whether calls may run side by side, whether they talk to the user, whether a
 * call changes nothing outside the session (stored with its result in one commit), and the paths
 * a call touches (calls on the same paths never run side by side).
 */
import type { ToolDefinition } from "../tools/types.js";
import type { ToolTraits } from "./loop-deps.js";

export function traitsOfTool(tool: ToolDefinition, cwd: () => string): ToolTraits {
  const pathScoped = tool.pathScoped?.bind(tool);
  const perCall = tool.sideEffectFreeCall?.bind(tool);
  return {
    parallelSafe: tool.parallelSafe ?? false,
    interactive: tool.interactive ?? false,
    ...(tool.sideEffectFree
      ? { sideEffectFree: () => true }
      : perCall
        ? { sideEffectFree: (args: Record<string, unknown>) => perCall(args) === true }
        : {}),
    ...(pathScoped ? { paths: (args: Record<string, unknown>) => pathScoped(args, cwd()) } : {}),
  };
}
