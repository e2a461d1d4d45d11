/**
 * The slash commands of every surface, in the order `/help` lists them within each group. The REPL
 * and the gateway both build their registry here and dispatch with `dispatchInput`.
 */
import { AGENTS_COMMANDS } from "./agents-commands.js";
import { BROWSER_COMMANDS } from "./browser-commands.js";
import { CHAT_COMMANDS } from "./chat-commands.js";
import { CHECKPOINT_COMMANDS } from "./checkpoint-commands.js";
import { CONTROL_COMMANDS } from "./control-commands.js";
import { DISPLAY_COMMANDS } from "./display-commands.js";
import { INPUT_COMMANDS } from "./input-commands.js";
import { KNOWLEDGE_COMMANDS } from "./knowledge-commands.js";
import { LEARN_COMMANDS } from "./learn-commands.js";
import { LEARNING_COMMANDS } from "./learning-commands.js";
import { MCP_COMMANDS } from "./mcp-commands.js";
import { PLUGIN_COMMANDS, pluginCommands } from "./plugin-commands.js";
import { PROFILE_COMMANDS } from "./profile-commands.js";
import { CommandRegistry } from "./registry.js";
import { SESSION_COMMANDS } from "./session-commands.js";
import { VOICE_COMMANDS } from "./voice-commands.js";
import { WRITE_APPROVAL_COMMANDS } from "./write-approval-commands.js";

export { type DispatchOptions, type DispatchOutcome, dispatchInput, permitted } from "./dispatch.js";
export {
  addPluginCommand,
  type PluginSummary,
  setPluginSummaries,
} from "./plugin-commands.js";
export { CommandRegistry, looksLikeCommand, offeredOn, runsWhileBusy } from "./registry.js";
export type * from "./types.js";
export { VOICE_WORDS } from "./voice-commands.js";

export function createCommandRegistry(): CommandRegistry {
  const registry = new CommandRegistry([
    ...SESSION_COMMANDS,
    ...KNOWLEDGE_COMMANDS,
    ...LEARNING_COMMANDS,
    ...WRITE_APPROVAL_COMMANDS,
    ...LEARN_COMMANDS,
    ...MCP_COMMANDS,
    ...BROWSER_COMMANDS,
    ...CONTROL_COMMANDS,
    ...DISPLAY_COMMANDS,
    ...VOICE_COMMANDS,
    ...CHECKPOINT_COMMANDS,
    ...AGENTS_COMMANDS,
    ...CHAT_COMMANDS,
    ...INPUT_COMMANDS,
    ...PROFILE_COMMANDS,
    ...PLUGIN_COMMANDS,
  ]);
  // Commands plugins added (loaded before this registry): a name already taken stays built-in.
  for (const command of pluginCommands()) registry.addIfFree(command);
  return registry;
}
