/** The `code_execution` toolset: execute_code. */
import type { ToolDefinition } from "../types.js";
import { executeCodeTool } from "./execute-code.js";

export { buildChildEnv, filterChildEnv, RPC_SOCKET_ENV } from "./child-env.js";
export { SANDBOX_ALLOWED_TOOLS } from "./stubs.js";
export { executeCodeTool };

export const sandboxTools: ToolDefinition[] = [executeCodeTool];
