/**
 * `hermes tools`: which toolsets each platform offers, kept where Python Hermes keeps them
 * (`platform_toolsets.<platform>`, `mcp_servers.<server>.tools.exclude`; see tools/platform-tools.ts).
 * `list [--platform P]`, `enable|disable NAME... [--platform P]` (a toolset such as `web`, or an MCP
 * tool as `server:tool`), and `--summary` for every platform at once. A change applies to the next
 * session started on that platform; `hermes chat` reads platform_toolsets.cli.
 */
import { type Command, Option } from "commander";
import { TOOL_PLATFORMS } from "../../tools/platform-tools.js";
import { changeTools, UnknownPlatformError } from "../../tools/tool-config.js";
import { type ConfigContext, defineCommand, type HomeContext, withConfig } from "../command.js";
import { colorFor, createStyle } from "../tui/style.js";

interface PlatformFlag {
  platform?: string;
}

/** `--platform NAME`: commander checks the name, and completion offers the names. */
const platformOption = () =>
  new Option("--platform <name>", "the platform (default cli)").choices([...TOOL_PLATFORMS]);

function checkPlatform(platform: string): void {
  if (!TOOL_PLATFORMS.includes(platform)) throw new UnknownPlatformError(platform);
}

async function list(ctx: ConfigContext, flags: PlatformFlag, cmd: Command): Promise<number> {
  const { formatToolsList, formatToolsSummary } = await import("../../commands/tools-commands.js");
  const paint = createStyle(colorFor(ctx.io.stdout as { isTTY?: boolean }, ctx.io.env));
  // `hermes tools --summary` arrives here as `tools --summary list`.
  if (cmd.parent?.opts<{ summary?: boolean }>().summary) {
    ctx.io.out(formatToolsSummary(ctx.config, paint).join("\n"));
    return 0;
  }
  const platform = flags.platform ?? "cli";
  checkPlatform(platform);
  ctx.io.out(formatToolsList(ctx.config, platform, paint).join("\n"));
  return 0;
}

async function change(
  ctx: HomeContext,
  action: "enable" | "disable",
  names: string[],
  flags: PlatformFlag,
): Promise<number> {
  const { formatToolChange } = await import("../../commands/tools-commands.js");
  const platform = flags.platform ?? "cli";
  const result = changeTools({ home: ctx.home, platform, names, action });
  const paint = createStyle(colorFor(ctx.io.stderr as { isTTY?: boolean }, ctx.io.env));
  const { done, errors } = formatToolChange(result, action, platform, paint);
  for (const line of errors) ctx.io.err(line);
  for (const line of done) ctx.io.out(line);
  if (done.length > 0) ctx.io.err("It applies to sessions started from now on.");
  // A wrong name fails the command (usage), after the valid ones were applied.
  return errors.length > 0 ? 2 : 0;
}

export const toolsCommand = defineCommand({
  name: "tools",
  description: "which toolsets each platform offers (platform_toolsets in config.yaml)",
  needs: "home",
  defaultSubcommand: "list",
  expected: (error) => (error instanceof UnknownPlatformError ? 2 : undefined),
  parse: (root, run) => {
    root.option("--summary", "one line per platform: how many toolsets it offers and which are off");
    root
      .command("list")
      .description("the toolsets of a platform (✓ enabled, ✗ disabled) and the MCP servers' tool filters")
      .addOption(platformOption())
      .action(run((ctx, flags: PlatformFlag, cmd: Command) => list(withConfig(ctx), flags, cmd)));
    for (const action of ["enable", "disable"] as const) {
      root
        .command(action)
        .description(`${action} toolsets (web, terminal, …) or MCP tools (server:tool) for new sessions`)
        .argument("<names...>", "toolset names, or server:tool for one MCP tool")
        .addOption(platformOption())
        .action(run((ctx, names: string[], flags: PlatformFlag) => change(ctx, action, names, flags)));
    }
  },
});
