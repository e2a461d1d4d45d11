/** The `browser` toolset: a real Chromium (local, CDP or Browserbase), one per task. */
import type { ToolDefinition } from "../types.js";
import { browserConsoleTool, browserGetImagesTool, browserVisionTool } from "./inspect.js";
import {
  browserAvailable,
  browserBackTool,
  browserClickTool,
  browserCloseTool,
  browserNavigateTool,
  browserPressTool,
  browserScrollTool,
  browserSnapshotTool,
  browserTypeTool,
} from "./tools.js";

export { BrowserSessions, type BrowserSessionsOptions, browserSessions } from "./session.js";
export { INSTALL_HINT, readBrowserSettings } from "./settings.js";
export {
  browserAvailable,
  browserBackTool,
  browserClickTool,
  browserCloseTool,
  browserConsoleTool,
  browserGetImagesTool,
  browserNavigateTool,
  browserPressTool,
  browserScrollTool,
  browserSnapshotTool,
  browserTypeTool,
  browserVisionTool,
};

export const browserTools: ToolDefinition[] = [
  browserNavigateTool,
  browserSnapshotTool,
  browserClickTool,
  browserTypeTool,
  browserPressTool,
  browserScrollTool,
  browserBackTool,
  browserGetImagesTool,
  browserConsoleTool,
  browserVisionTool,
  browserCloseTool,
];
