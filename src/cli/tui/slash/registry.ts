/**
 * The slash-command registry: one table of commands from which parsing, dispatch checks, `/help`,
 * tab completion and "did you mean" are all derived (as Python Hermes derives everything from its
 * COMMAND_REGISTRY). Generic over the context handlers receive, so it stays pure and testable.
 */
import { editDistance } from "../../../util/edit-distance.js";

export type SlashCategory = "Session" | "Turn" | "Settings" | "Info" | "Exit";

export interface SlashCommand<C> {
  /** Without the slash, lower case. */
  name: string;
  aliases?: readonly string[];
  /** Shown after the name in help, e.g. `[title]` or `<text>`. */
  args?: string;
  description: string;
  category: SlashCategory;
  /** May run while a turn is running (default false: the user is told to wait or /stop). */
  availableWhileRunning?: boolean;
  /** Candidates for the argument being typed (`prefix` is what is typed so far). */
  completeArgs?: (prefix: string, context: C) => string[] | Promise<string[]>;
  run(args: string, context: C): void | Promise<void>;
}

export type ParsedInput<C> =
  | { kind: "message"; text: string }
  | { kind: "command"; command: SlashCommand<C>; args: string }
  | { kind: "unknown"; name: string; suggestion: string | null };

/**
 * Whether `text` is meant as a command. As upstream decides it: it starts with `/` and its first word
 * has no further `/`. So `/help` is a command while `/tmp/x is big`, `//comment` and a pasted
 * `/Users/me/file.md:12 fix this` are messages.
 */
export function looksLikeCommand(text: string): boolean {
  if (!text.startsWith("/")) return false;
  const first = text.split(/\s/, 1)[0] ?? "";
  return !first.slice(1).includes("/");
}

const CATEGORY_ORDER: readonly SlashCategory[] = ["Session", "Turn", "Settings", "Info", "Exit"];

export class SlashRegistry<C> {
  private readonly byName = new Map<string, SlashCommand<C>>();

  constructor(private readonly commands: readonly SlashCommand<C>[]) {
    for (const command of commands) {
      for (const name of [command.name, ...(command.aliases ?? [])]) {
        const key = name.toLowerCase();
        if (this.byName.has(key)) throw new Error(`Duplicate slash command name: /${key}`);
        this.byName.set(key, command);
      }
    }
  }

  all(): readonly SlashCommand<C>[] {
    return this.commands;
  }

  /** The command called `name` (case-insensitive, aliases included). */
  get(name: string): SlashCommand<C> | undefined {
    return this.byName.get(name.replace(/^\//, "").toLowerCase());
  }

  /** Classifies one submitted input. */
  parse(text: string): ParsedInput<C> {
    const trimmed = text.trim();
    if (!looksLikeCommand(trimmed)) return { kind: "message", text };
    const match = /^\/(\S*)\s*([\s\S]*)$/.exec(trimmed);
    const name = (match?.[1] ?? "").toLowerCase();
    const args = (match?.[2] ?? "").trim();
    const command = this.byName.get(name);
    if (command) return { kind: "command", command, args };
    return { kind: "unknown", name, suggestion: this.suggest(name) };
  }

  /** The closest command name for a typo (`/hlep` → `help`), or null when nothing is close. */
  suggest(name: string): string | null {
    const wanted = name.toLowerCase();
    if (wanted === "") return null;
    const names = [...this.byName.keys()];
    const prefixed = names.filter((n) => n.startsWith(wanted));
    if (prefixed.length > 0) return prefixed.sort((a, b) => a.length - b.length)[0] ?? null;
    let best: string | null = null;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const candidate of names) {
      const d = editDistance(wanted, candidate);
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    const allowed = wanted.length <= 3 ? 1 : 2;
    return bestDistance <= allowed ? best : null;
  }

  /**
   * Tab completion for readline: command names while the first word is typed, then the command's
   * own argument candidates. Returns `[candidates, the text they replace]`.
   */
  async complete(line: string, context: C): Promise<[string[], string]> {
    if (!line.startsWith("/")) return [[], line];
    const space = line.search(/\s/);
    if (space === -1) {
      const prefix = line.slice(1).toLowerCase();
      const hits = [...this.byName.entries()]
        .filter(([name]) => name.startsWith(prefix))
        .map(([name, command]) => `/${name}${command.args && name === command.name ? " " : ""}`)
        .sort();
      return [hits, line];
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

  /** `/help`: commands grouped by category, with argument hints and aliases. */
  helpLines(paint: { bold: (s: string) => string; dim: (s: string) => string }): string[] {
    const rows = this.commands.map((c) => ({
      command: c,
      usage: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
    }));
    const width = Math.max(...rows.map((r) => r.usage.length)) + 2;
    const lines: string[] = [];
    for (const category of CATEGORY_ORDER) {
      const group = rows.filter((r) => r.command.category === category);
      if (group.length === 0) continue;
      lines.push(paint.bold(category));
      for (const { command, usage } of group) {
        const aliases = command.aliases?.length
          ? paint.dim(` (also ${command.aliases.map((a) => `/${a}`).join(", ")})`)
          : "";
        lines.push(`  ${usage.padEnd(width)}${command.description}${aliases}`);
      }
    }
    return lines;
  }
}
