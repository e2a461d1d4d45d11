/**
 * What shell completion knows about `hermes`, read from the commander declarations themselves
 * (each command's `describe()`), so a new command, subcommand or option completes without anyone
 * editing a completion script. Pure over the commander objects it is given.
 */
import type { Argument, Command, Option } from "commander";

export interface OptionSpec {
  /** `-n`, `--lines` (either may be absent). */
  short?: string;
  long?: string;
  description: string;
  /** Takes a value (`--level <level>`). */
  takesValue: boolean;
  /** The values it accepts, when commander declares them. */
  choices?: string[];
}

export interface CommandSpec {
  name: string;
  aliases: string[];
  description: string;
  options: OptionSpec[];
  subcommands: CommandSpec[];
  /** Values of the first positional argument, when declared (`logs [log]`, `completion <shell>`). */
  argChoices?: string[];
}

export interface ProgramSpec {
  /** `hermes`'s own options (the chat's). */
  options: OptionSpec[];
  commands: CommandSpec[];
}

function optionSpec(option: Option): OptionSpec {
  const choices = (option as Option & { argChoices?: string[] }).argChoices;
  return {
    ...(option.short ? { short: option.short } : {}),
    ...(option.long ? { long: option.long } : {}),
    description: option.description,
    // An optional value (`-c [TITLE]`) is not skipped: the next word may as well be the prompt.
    takesValue: option.required,
    ...(choices ? { choices: [...choices] } : {}),
  };
}

/** The visible options of a command (hidden ones such as the wrapper's `-v` are left out). */
export function optionsOf(command: Command): OptionSpec[] {
  const hidden = (o: Option) => (o as Option & { hidden?: boolean }).hidden === true;
  return command.options.filter((o) => !hidden(o)).map(optionSpec);
}

/** One command and its subcommands, from its commander declaration. */
export function commandSpec(
  command: Command,
  summary?: string,
  aliases: readonly string[] = [],
): CommandSpec {
  const args = (command as Command & { registeredArguments?: readonly Argument[] }).registeredArguments ?? [];
  const choices = args[0]?.argChoices;
  return {
    name: command.name(),
    aliases: [...new Set([...aliases, ...command.aliases()])],
    description: summary ?? command.description(),
    options: optionsOf(command),
    subcommands: command.commands.map((sub) => commandSpec(sub)),
    ...(choices ? { argChoices: [...choices] } : {}),
  };
}

/** Every word that may stand where a command name goes (names and aliases). */
export function commandWords(spec: ProgramSpec): string[] {
  return spec.commands.flatMap((c) => [c.name, ...c.aliases]);
}

/** `-n --lines`: the flags of an option as words. */
export function flagWords(option: OptionSpec): string[] {
  return [option.short, option.long].filter((f): f is string => f !== undefined);
}
