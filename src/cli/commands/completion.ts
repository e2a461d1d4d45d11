/**
 * `hermes completion bash|zsh|fish`: prints a completion script for the shell, generated from the
 * commands' own declarations (completion/spec.ts, completion/scripts.ts). Every command module is
 * loaded to read its options, which costs a few hundred milliseconds once, when the script is made.
 */
import { Argument, Command } from "commander";
import type { CliCommand } from "../command.js";
import { defineCommand } from "../command.js";
import { completionScript, SHELLS, type Shell } from "../completion/scripts.js";
import { type CommandSpec, commandSpec, optionsOf, type ProgramSpec } from "../completion/spec.js";
import { addChatOptions } from "../flags.js";

/** What completion needs of program.ts's COMMANDS entries. */
export interface CompletableEntry {
  name: string;
  summary: string;
  aliases?: readonly string[];
  load: () => Promise<CliCommand>;
}

/** The whole program as completion sees it: the root's options and every command's tree. */
export async function programSpec(entries: readonly CompletableEntry[]): Promise<ProgramSpec> {
  const commands: CommandSpec[] = [];
  for (const entry of entries) {
    const tree = (await entry.load()).describe();
    commands.push(commandSpec(tree, entry.summary, entry.aliases ?? []));
  }
  return { options: optionsOf(addChatOptions(new Command("hermes"))), commands };
}

/** `hermes completion SHELL`, over the given command list. */
export function completionCommand(entries: readonly CompletableEntry[]): CliCommand {
  return defineCommand({
    name: "completion",
    description: "print a shell completion script (source it, or save it where your shell loads completions)",
    needs: "nothing",
    parse: (cmd) =>
      cmd
        .addArgument(new Argument("<shell>", "the shell").choices([...SHELLS]))
        .addHelpText(
          "after",
          "\nLoad now:  source <(hermes completion bash)   (zsh: the same after compinit;\n" +
            "           fish: hermes completion fish | source)",
        ),
    run: async (ctx, shell: Shell) => {
      ctx.io.stdout.write(completionScript(shell, await programSpec(entries)));
      return 0;
    },
  });
}
