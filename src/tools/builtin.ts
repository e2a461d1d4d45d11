import { browserTools } from "./browser/index.js";
import { clarifyTool } from "./clarify.js";
import { cronjobTool } from "./cronjob.js";
import { delegateTaskTool } from "./delegate.js";
import { fileTools } from "./file/index.js";
import { homeAssistantTools } from "./homeassistant.js";
import { mediaTools } from "./media/index.js";
import { memoryTool } from "./memory.js";
import { mixtureOfAgentsTool } from "./moa.js";
import { ToolRegistry } from "./registry.js";
import { sandboxTools } from "./sandbox/index.js";
import { sessionSearchTool } from "./session-search.js";
import { skillTools } from "./skills/index.js";
import { terminalTools } from "./terminal/index.js";
import { todoTool } from "./todo.js";
import { webTools } from "./web/index.js";

/** A registry holding every tool built into Hermes-TS. Each call makes a fresh registry. */
export function createBuiltinRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.registerAll([
    ...fileTools,
    ...terminalTools,
    todoTool,
    clarifyTool,
    sessionSearchTool,
    memoryTool,
    ...skillTools,
    ...sandboxTools,
    delegateTaskTool,
    cronjobTool,
    ...webTools,
    ...browserTools,
    ...mediaTools,
    ...homeAssistantTools,
    mixtureOfAgentsTool,
  ]);
  return registry;
}
