/** The REPL's slash commands, in the order `/help` lists them within each category. */
import { BROWSER_COMMANDS } from "./browser-commands.js";
import type { SlashContext } from "./context.js";
import { CONTROL_COMMANDS } from "./control-commands.js";
import { KNOWLEDGE_COMMANDS } from "./knowledge-commands.js";
import { MCP_COMMANDS } from "./mcp-commands.js";
import { SlashRegistry } from "./registry.js";
import { SESSION_COMMANDS } from "./session-commands.js";

export function createSlashRegistry(): SlashRegistry<SlashContext> {
  return new SlashRegistry<SlashContext>([
    ...SESSION_COMMANDS,
    ...KNOWLEDGE_COMMANDS,
    ...MCP_COMMANDS,
    ...BROWSER_COMMANDS,
    ...CONTROL_COMMANDS,
  ]);
}
