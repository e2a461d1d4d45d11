/**
 * Slash commands that plugins add (`ctx.registerCommand`) and `/plugins`, which lists the
 * process's plugins. The plugin loader (src/plugins/, a layer above this one) fills the process
 * table below; `createCommandRegistry` reads it, so a REPL or chat opened after the plugins loaded
 * offers their commands. A plugin command never replaces a built-in one: the registry refuses a
 * name it already has.
 */
import type { CommandDef } from "./types.js";

/** One line of `/plugins`: a plugin of this process and what it added. */
export interface PluginSummary {
  name: string;
  version: string;
  /** "loaded", "disabled" (failed in this process), "not enabled", "needs ENV", "broken". */
  status: string;
  detail?: string;
  tools: readonly string[];
  hooks: readonly string[];
  commands: readonly string[];
}

const extra: CommandDef[] = [];
let summaries: () => readonly PluginSummary[] = () => [];

/** Adds a plugin's command to every command registry created from now on. */
export function addPluginCommand(command: CommandDef): void {
  extra.push(command);
}

/** Plugin commands so far (for `createCommandRegistry`). */
export function pluginCommands(): readonly CommandDef[] {
  return extra;
}

/** The loader tells `/plugins` where to read the process's plugins. */
export function setPluginSummaries(source: () => readonly PluginSummary[]): void {
  summaries = source;
}

const pluginsCommand: CommandDef = {
  name: "plugins",
  description: "list plugins: which loaded, what they added, which are disabled and why",
  category: "Info",
  availableWhileRunning: true,
  run(_args, ctx) {
    const s = ctx.paint;
    const list = summaries();
    if (list.length === 0) {
      ctx.reply(
        s.dim(
          "No plugins. Add one with `hermes plugins install <dir|git-url|npm-name|file.tgz>`, then `hermes plugins enable NAME`.",
        ),
      );
      return;
    }
    const lines: string[] = [];
    for (const p of list) {
      const mark =
        p.status === "loaded" ? s.green("✓") : p.status === "not enabled" ? s.dim("·") : s.red("✗");
      lines.push(
        `${mark} ${s.bold(p.name)} ${s.dim(p.version)}  ${p.status}${p.detail ? `: ${p.detail}` : ""}`,
      );
      const added = [
        p.tools.length > 0 ? `tools ${p.tools.join(", ")}` : "",
        p.hooks.length > 0 ? `hooks ${p.hooks.join(", ")}` : "",
        p.commands.length > 0 ? `commands ${p.commands.map((c) => `/${c}`).join(", ")}` : "",
      ].filter(Boolean);
      if (added.length > 0) lines.push(`    ${s.dim(added.join("; "))}`);
    }
    ctx.reply(...lines);
  },
};

export const PLUGIN_COMMANDS: readonly CommandDef[] = [pluginsCommand];
