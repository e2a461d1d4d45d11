/**
 * The slash-command registry: one table from which parsing, the surface/busy/admin checks, `/help`,
 * tab completion, "did you mean" and the chat platforms' command menus are all derived (as Python
 * Hermes derives everything from its COMMAND_REGISTRY). Pure: no I/O, no surface.
 */
import { editDistance } from "../util/edit-distance.js";
import type { CommandContext, CommandDef, CommandGroup, Paint, Surface } from "./types.js";

export type ParsedInput =
  | { kind: "message"; text: string }
  | { kind: "command"; command: CommandDef; args: string }
  | { kind: "unknown"; name: string; args: string; suggestion: string | null };

/**
 * Whether `text` is meant as a command. It starts with `/` and its first word is a name, not a
 * path: a first word holding another `/` or a `.` is text. So `/help` and `/model gpt-5.1` are
 * commands while `/etc/hosts is empty?`, `/tmp/x`, `//comment`, `/notes.md is long` and a pasted
 * `/Users/me/file.md:12 fix this` are messages.
 */
export function looksLikeCommand(text: string): boolean {
  if (!text.startsWith("/")) return false;
  const first = (text.split(/\s/, 1)[0] ?? "").replace(/@\S*$/, "");
  return !/[/.]/.test(first.slice(1));
}

/** Widest `/name args` the REPL's `/help` lines descriptions up after. */
const HELP_COLUMN = 26;

const GROUP_ORDER: readonly CommandGroup[] = ["Session", "Turn", "Settings", "Info", "Exit"];

/** Whether `command` is offered on `surface`. */
export function offeredOn(command: CommandDef, surface: Surface): boolean {
  const where = command.surfaces ?? "both";
  return where === "both" || where === surface;
}

/** Whether `command` may run while a turn is running on `surface`. */
export function runsWhileBusy(command: CommandDef, surface: Surface): boolean {
  const busy = command.availableWhileRunning;
  return Array.isArray(busy) ? busy.includes(surface) : busy === true;
}

export class CommandRegistry {
  private readonly byName = new Map<string, CommandDef>();

  private readonly commands: CommandDef[];

  constructor(commands: readonly CommandDef[]) {
    this.commands = [...commands];
    for (const command of commands) {
      for (const name of [command.name, ...(command.aliases ?? [])]) {
        const key = name.toLowerCase();
        if (this.byName.has(key)) throw new Error(`Duplicate slash command name: /${key}`);
        this.byName.set(key, command);
      }
    }
  }

  /**
   * Adds a command from outside the built-in table (a plugin's); false, and nothing added, when
   * its name or an alias is taken, so a plugin can never replace a built-in command.
   */
  addIfFree(command: CommandDef): boolean {
    const names = [command.name, ...(command.aliases ?? [])].map((n) => n.toLowerCase());
    if (names.some((n) => this.byName.has(n))) return false;
    for (const name of names) this.byName.set(name, command);
    this.commands.push(command);
    return true;
  }

  /** Every command, or those offered on `surface`. */
  all(surface?: Surface): readonly CommandDef[] {
    return surface ? this.commands.filter((c) => offeredOn(c, surface)) : this.commands;
  }

  /**
   * The command called `name` (case-insensitive, aliases included). `_` stands for `-`, because
   * chat menus (Telegram) allow no hyphen: `/reload_mcp` is `/reload-mcp`.
   */
  get(name: string): CommandDef | undefined {
    const key = name.replace(/^\//, "").toLowerCase();
    return this.byName.get(key) ?? this.byName.get(key.replace(/_/g, "-"));
  }

  /**
   * Classifies one submitted input. `surface` limits the suggestions for an unknown name to what
   * that surface offers. A chat's `/cmd@botname` names the command `cmd`.
   */
  parse(text: string, surface?: Surface): ParsedInput {
    const trimmed = text.trim();
    if (!looksLikeCommand(trimmed)) return { kind: "message", text };
    const match = /^\/(\S*)\s*([\s\S]*)$/.exec(trimmed);
    const name = (match?.[1] ?? "").replace(/@\S*$/, "").toLowerCase();
    const args = (match?.[2] ?? "").trim();
    const command = this.get(name);
    if (command) return { kind: "command", command, args };
    return { kind: "unknown", name, args, suggestion: this.suggest(name, surface) };
  }

  /** The closest command name for a typo (`/hlep` → `help`), or null when nothing is close. */
  suggest(name: string, surface?: Surface): string | null {
    return this.closest(name, surface, 1)[0] ?? null;
  }

  /**
   * Up to `limit` command names close to `name`, best first: names it begins, then names within a
   * small edit distance (1 for short words, 2 otherwise).
   */
  closest(name: string, surface?: Surface, limit = 3): string[] {
    const wanted = name.toLowerCase();
    if (wanted === "") return [];
    const names = [...this.byName.entries()]
      .filter(([, command]) => !surface || offeredOn(command, surface))
      .map(([n]) => n);
    const prefixed = names.filter((n) => n.startsWith(wanted)).sort((a, b) => a.length - b.length);
    const allowed = wanted.length <= 3 ? 1 : 2;
    const near = names
      .map((n) => ({ n, d: editDistance(wanted, n) }))
      .filter(({ n, d }) => d <= allowed && !prefixed.includes(n))
      .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
      .map(({ n }) => n);
    return [...prefixed, ...near].slice(0, limit);
  }

  /**
   * Tab completion for the REPL: command names while the first word is typed, then the command's
   * own argument candidates. `extraNames` (skill names) complete as commands too. Returns
   * `[candidates, the text they replace]`.
   */
  async complete(
    line: string,
    context: CommandContext,
    extraNames: () => readonly string[] | Promise<readonly string[]> = () => [],
  ): Promise<[string[], string]> {
    if (!line.startsWith("/")) return [[], line];
    const space = line.search(/\s/);
    const surface = context.surface.kind;
    if (space === -1) {
      const prefix = line.slice(1).toLowerCase();
      const hits = [...this.byName.entries()]
        .filter(([name, command]) => name.startsWith(prefix) && offeredOn(command, surface))
        .map(([name, command]) => `/${name}${command.args && name === command.name ? " " : ""}`);
      let extra: readonly string[] = [];
      try {
        extra = await extraNames();
      } catch {
        // A skill folder that cannot be read must not break completing commands.
      }
      const skills = extra
        .filter((n) => n.toLowerCase().startsWith(prefix) && !this.byName.has(n.toLowerCase()))
        .map((n) => `/${n} `);
      return [[...new Set([...hits, ...skills])].sort(), line];
    }
    const command = this.get(line.slice(0, space));
    if (!command?.completeArgs) return [[], line];
    const prefix = line.slice(space).replace(/^\s+/, "");
    try {
      const candidates = await command.completeArgs(prefix, context);
      const lower = prefix.toLowerCase();
      return [candidates.filter((c) => c.toLowerCase().startsWith(lower)), prefix];
    } catch {
      return [[], prefix];
    }
  }

  /**
   * `/help`: the commands `surface` offers, grouped, with argument hints and aliases; `locked`
   * marks the ones this user may not run (admin-only commands for a chat user who is not one).
   */
  helpLines(
    paint: Pick<Paint, "bold" | "dim">,
    surface: Surface = "repl",
    options: { locked?: (command: CommandDef) => boolean } = {},
  ): string[] {
    const rows = this.all(surface).map((c) => ({
      command: c,
      usage: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
    }));
    // A usage longer than the column (`/curator [status|run …]`) gets a row of its own, so one
    // long entry does not push every description off a normal terminal.
    const width = Math.min(HELP_COLUMN, Math.max(...rows.map((r) => r.usage.length))) + 2;
    const lines: string[] = [];
    for (const group of GROUP_ORDER) {
      const members = rows.filter((r) => r.command.category === group);
      if (members.length === 0) continue;
      lines.push(paint.bold(group));
      for (const { command, usage } of members) {
        const aliases = command.aliases?.length
          ? paint.dim(` (also ${command.aliases.map((a) => `/${a}`).join(", ")})`)
          : "";
        // A chat has no fixed-width columns to align to.
        const locked = options.locked?.(command) ? " 🔒 admins only" : "";
        const text = `${command.description}${aliases}${locked}`;
        if (surface !== "repl") lines.push(`${usage} — ${text}`);
        else if (usage.length + 2 > width) lines.push(`  ${usage}`, `  ${" ".repeat(width)}${text}`);
        else lines.push(`  ${usage.padEnd(width)}${text}`);
      }
    }
    return lines;
  }

  /**
   * A chat platform's command menu: name and one line of help for each command the chat surface
   * offers, in help order. Names use `_` for `-` (Telegram allows only `[a-z0-9_]`).
   */
  menu(): Array<{ name: string; description: string }> {
    const ordered = GROUP_ORDER.flatMap((g) => this.all("chat").filter((c) => c.category === g));
    return ordered.map((c) => ({
      name: c.name.replace(/-/g, "_"),
      description: c.description.charAt(0).toUpperCase() + c.description.slice(1),
    }));
  }
}
