/**
 * The MCP client: tools from any MCP server (stdio or HTTP), registered as `mcp_<server>_<tool>`
 * in toolset `mcp-<server>`. Importing this module loads no SDK; starting a server does.
 */
export {
  DEFAULT_CALL_TIMEOUT_S,
  DEFAULT_CONNECT_TIMEOUT_S,
  describeEndpoint,
  type HttpServerConfig,
  hasEnabledMcpServers,
  McpConfigError,
  type McpServerConfig,
  type ParsedMcpServers,
  parseMcpServer,
  parseMcpServers,
  SERVER_NAME_PATTERN,
  type StdioServerConfig,
} from "./config.js";
export { McpConnectError, McpConnection, type McpTransportKind } from "./connection.js";
export { childEnvironment, isInheritedVariable } from "./env.js";
export {
  filterTools,
  type McpManager,
  type McpReloadReport,
  type ServerState,
  type ServerStatus,
  type StartMcpOptions,
  startMcpServers,
} from "./manager.js";
export {
  assignToolNames,
  MAX_TOOL_NAME_LENGTH,
  mcpToolName,
  mcpToolsetName,
  sanitizeNamePart,
} from "./names.js";
export { MCP_TOOLSET_PREFIX, mcpToolsets } from "./toolsets.js";
