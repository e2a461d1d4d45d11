/** The `file` toolset: read_file, write_file, patch, search_files. */
import type { ToolDefinition } from "../types.js";
import { patchTool } from "./patch.js";
import { readFileTool } from "./read-file.js";
import { searchFilesTool } from "./search-files.js";
import { writeFileTool } from "./write-file.js";

export { patchTool, readFileTool, searchFilesTool, writeFileTool };

export const fileTools: ToolDefinition[] = [readFileTool, writeFileTool, patchTool, searchFilesTool];
