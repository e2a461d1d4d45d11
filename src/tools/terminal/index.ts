/** The `terminal` toolset: terminal, process. */
import type { ToolDefinition } from "../types.js";
import { processTool } from "./process.js";
import { terminalTool } from "./terminal.js";

export { processTool, terminalTool };

export const terminalTools: ToolDefinition[] = [terminalTool, processTool];
