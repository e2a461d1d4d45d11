/** The web tool family: `web_search` and `web_extract`, both offered without any key. */
import { webExtractTool } from "./extract.js";
import { webSearchTool } from "./search.js";

export { createWebExtractTool, webExtractTool } from "./extract.js";
export { createWebSearchTool, webSearchTool } from "./search.js";

export const webTools = [webSearchTool, webExtractTool];
