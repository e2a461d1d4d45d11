/**
 * Names of MCP tools as the model sees them: `mcp_<server>_<tool>`, each part with every character
 * outside `[A-Za-z0-9_]` turned into `_` (hyphens included, as Python Hermes names them, so a
 * session recorded there resumes here with the same tool names), at most 64 characters.
 */
import { createHash } from "node:crypto";

/** The longest tool name providers accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** `my-server.v2` → `my_server_v2`. */
export function sanitizeNamePart(value: string): string {
  return value.replace(/[^A-Za-z0-9_]/g, "_");
}

/** The toolset holding a server's tools: `mcp-<server>` (the configured name, unchanged). */
export function mcpToolsetName(server: string): string {
  return `mcp-${server}`;
}

/** The plain name of a server's tool, before length limits and collisions are dealt with. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp_${sanitizeNamePart(server)}_${sanitizeNamePart(tool)}`;
}

/**
 * Registry names for a server's tools. A name that is too long, or already `taken` (by another
 * server's tool) or claimed by an earlier tool of this batch, gets a stable 8-character hash of the
 * server and tool name in place of its tail. Tools are named in sorted order, so the same list
 * always gives the same names. Returns server tool name → registry name.
 */
export function assignToolNames(
  server: string,
  tools: readonly string[],
  taken: (name: string) => boolean = () => false,
): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const tool of [...new Set(tools)].sort()) {
    const plain = mcpToolName(server, tool);
    let name = plain;
    if (name.length > MAX_TOOL_NAME_LENGTH || taken(name) || used.has(name)) {
      const tag = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8);
      name = `${plain.slice(0, MAX_TOOL_NAME_LENGTH - tag.length - 1)}_${tag}`;
      for (let n = 2; taken(name) || used.has(name); n++) {
        const suffix = `_${tag}${n}`;
        name = `${plain.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
      }
    }
    used.add(name);
    names.set(tool, name);
  }
  return names;
}
