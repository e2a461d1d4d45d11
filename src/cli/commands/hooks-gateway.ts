/**
 * `hermes hooks folders|enable NAME|disable NAME`: the gateway's hook folders
 * (`<home>/hooks/<name>/HOOK.yaml` + a JS handler) and `gateway_hooks.enabled`, which names the
 * ones that run. Enabling refuses a folder that is a symbolic link or whose files link out of it,
 * and says why; a running gateway picks the change up when it restarts.
 */
import type { Command } from "commander";
import { type Action, CliFailure, type ConfigContext } from "../command.js";

export function registerGatewayHookCommands(root: Command, run: Action<ConfigContext>): void {
  root
    .command("folders")
    .alias("gateway")
    .description("the gateway's hook folders (<home>/hooks/<name>/HOOK.yaml) and which are enabled")
    .action(run((ctx: ConfigContext) => listFolders(ctx)));
  root
    .command("enable")
    .description("let the gateway run the hook folder NAME (gateway_hooks.enabled); restart the gateway")
    .argument("<name>", "a folder under <home>/hooks/")
    .action(run((ctx: ConfigContext, name: string) => toggle(ctx, name, true)));
  root
    .command("disable")
    .description("stop running the hook folder NAME (takes it out of gateway_hooks.enabled)")
    .argument("<name>", "a folder under <home>/hooks/")
    .action(run((ctx: ConfigContext, name: string) => toggle(ctx, name, false)));
}

async function listFolders(ctx: ConfigContext): Promise<number> {
  const { discoverGatewayHooks, enabledGatewayHooks, gatewayHooksDir } = await import(
    "../../gateway/hooks/discover.js"
  );
  const folders = discoverGatewayHooks(ctx.home, ctx.config);
  const enabled = enabledGatewayHooks(ctx.config);
  if (folders.length === 0) {
    ctx.io.out(
      `No gateway hook folders in ${gatewayHooksDir(ctx.home)} (each is <name>/HOOK.yaml + handler.js).`,
    );
  } else {
    ctx.io.out(`Gateway hook folders (${gatewayHooksDir(ctx.home)}):`);
    for (const folder of folders) {
      const state = folder.error ? "broken" : folder.enabled ? "enabled" : "not enabled";
      ctx.io.out(`  ${folder.name}  ${state}  ${folder.events.join(", ")}`);
      if (folder.description) ctx.io.out(`      ${folder.description}`);
      if (folder.error) ctx.io.out(`      ${folder.error}`);
    }
  }
  const found = new Set(folders.map((f) => f.name.toLowerCase()));
  for (const name of enabled.filter((n) => !found.has(n))) {
    ctx.io.out(`  ${name}  enabled, but there is no such folder (hermes hooks disable ${name})`);
  }
  if (folders.some((f) => !f.enabled)) ctx.io.out("Enable one with: hermes hooks enable NAME");
  return 0;
}

async function toggle(ctx: ConfigContext, name: string, on: boolean): Promise<number> {
  const { HookFolderError, setHookEnabled } = await import("../../gateway/hooks/manage.js");
  let changed: boolean;
  try {
    changed = setHookEnabled(ctx.home, name, on);
  } catch (error) {
    if (error instanceof HookFolderError)
      throw new CliFailure(`cannot enable "${name}": ${error.message}.`, 1);
    throw error;
  }
  if (!changed) {
    ctx.io.out(`${name} is already ${on ? "enabled" : "not enabled"}.`);
    return 0;
  }
  ctx.io.out(
    on
      ? `Enabled the gateway hook ${name}. Its handler runs inside the gateway, with every secret the gateway holds.`
      : `Disabled the gateway hook ${name}.`,
  );
  ctx.io.out("A running gateway picks this up when it restarts (hermes gateway restart).");
  return 0;
}
