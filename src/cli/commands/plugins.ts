/**
 * `hermes plugins`: list | install <dir|git-url|npm-name|file.tgz> [--force] | enable NAME |
 * disable NAME | remove NAME | update [NAME]. Plugins live in `<home>/plugins/<name>/`; only
 * those named in config.yaml's `plugins.enabled` load (installing never enables). Loading happens
 * in chats, not here: `list` reads manifests only.
 */
import { ConfigError } from "../../config/errors.js";
import { discoverPlugins } from "../../plugins/discover.js";
import {
  installedDir,
  installPlugin,
  PluginInstallError,
  readInstallRecord,
  removePlugin,
  updatePlugin,
} from "../../plugins/install.js";
import {
  applyPluginChoice,
  forgetPlugin,
  readPluginLists,
  writePluginLists,
} from "../../plugins/plugin-config.js";
import { CliFailure, defineCommand, type HomeContext } from "../command.js";

function list(ctx: HomeContext, flags: { json?: boolean }): number {
  const lists = readPluginLists(ctx.home);
  const plugins = discoverPlugins(ctx.home, { plugins: lists });
  const disabled = new Set(lists.disabled);
  const rows = plugins.map((p) => ({
    name: p.name,
    version: p.manifest?.version ?? null,
    description: p.manifest?.description ?? null,
    status: p.error ? "broken" : p.enabled ? "enabled" : disabled.has(p.name) ? "disabled" : "not enabled",
    source: readInstallRecord(p.dir)?.source ?? null,
    ...(p.error ? { error: p.error } : {}),
  }));
  if (flags.json) {
    ctx.io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    ctx.io.out(`No plugins in ${ctx.home}/plugins.`);
    ctx.io.err("Install one with: hermes plugins install <dir|git-url|npm-name|file.tgz>");
    return 0;
  }
  for (const row of rows) {
    const mark = row.status === "enabled" ? "✓" : row.status === "broken" ? "✗" : "·";
    ctx.io.out(
      `${mark} ${row.name.padEnd(20)} ${(row.version ?? "?").padEnd(10)} ${row.status.padEnd(12)} ${row.description ?? row.error ?? ""}`.trimEnd(),
    );
  }
  const missing = lists.enabled.filter((n) => !plugins.some((p) => p.name === n));
  for (const name of missing) ctx.io.err(`warning: plugins.enabled names "${name}", which is not installed.`);
  return 0;
}

async function install(
  ctx: HomeContext,
  spec: string,
  flags: { force?: boolean; enable?: boolean },
): Promise<number> {
  ctx.io.err(`Installing ${spec}…`);
  const installed = await installPlugin({
    home: ctx.home,
    spec,
    cwd: process.cwd(),
    ...(flags.force ? { force: true } : {}),
  });
  const m = installed.manifest;
  ctx.io.out(`${installed.replaced ? "Replaced" : "Installed"} ${m.name} ${m.version} in ${installed.dir}`);
  if (flags.enable) return setEnabled(ctx, installed.name, true);
  const lists = readPluginLists(ctx.home);
  if (!lists.enabled.includes(installed.name) || lists.disabled.includes(installed.name)) {
    // A plugin runs with every secret the process holds: loading it is the user's separate choice.
    ctx.io.err(`It is not enabled. Review it, then run: hermes plugins enable ${installed.name}`);
  }
  return 0;
}

function setEnabled(ctx: HomeContext, name: string, enable: boolean): number {
  if (enable) installedDir(ctx.home, name);
  writePluginLists(ctx.home, applyPluginChoice(readPluginLists(ctx.home), name, enable));
  ctx.io.out(
    `${enable ? "Enabled" : "Disabled"} ${name} (plugins.${enable ? "enabled" : "disabled"} in config.yaml).`,
  );
  ctx.io.err("It applies to sessions started from now on (a running gateway: restart it).");
  return 0;
}

function remove(ctx: HomeContext, name: string): number {
  const dir = removePlugin(ctx.home, name);
  writePluginLists(ctx.home, forgetPlugin(readPluginLists(ctx.home), name));
  ctx.io.out(`Removed ${name} (${dir}).`);
  return 0;
}

async function update(ctx: HomeContext, name: string | undefined): Promise<number> {
  const names = name
    ? [name]
    : discoverPlugins(ctx.home, { plugins: readPluginLists(ctx.home) })
        .filter((p) => readInstallRecord(p.dir))
        .map((p) => p.name);
  if (names.length === 0) {
    ctx.io.err("No installed plugin to update.");
    return 0;
  }
  let failed = 0;
  for (const each of names) {
    try {
      const installed = await updatePlugin({ home: ctx.home, name: each });
      ctx.io.out(`Updated ${each} to ${installed.manifest.version}.`);
    } catch (error) {
      if (!(error instanceof PluginInstallError) || names.length === 1) throw error;
      ctx.io.err(`hermes plugins: ${each}: ${error.message}`);
      failed++;
    }
  }
  return failed > 0 ? 1 : 0;
}

export const pluginsCommand = defineCommand({
  name: "plugins",
  description: "plugins in <home>/plugins: list | install | enable | disable | remove | update",
  needs: "home",
  defaultSubcommand: "list",
  expected: (error) =>
    error instanceof PluginInstallError
      ? 1
      : error instanceof ConfigError || error instanceof CliFailure
        ? 2
        : undefined,
  parse: (root, run) => {
    root
      .command("list")
      .alias("ls")
      .description("installed plugins: enabled, not enabled, disabled or broken")
      .option("--json", "JSON on stdout")
      .action(run((ctx, flags: { json?: boolean }) => list(ctx, flags)));
    root
      .command("install")
      .description("install from a folder, a git URL, an npm package (hermes-plugin-*) or a .tgz file")
      .argument("<source>", "folder, git URL, npm name or .tgz")
      .option("--force", "replace an installed plugin of the same name")
      .option("--enable", "enable it at once (it runs with every secret the process holds)")
      .action(
        run((ctx, spec: string, flags: { force?: boolean; enable?: boolean }) => install(ctx, spec, flags)),
      );
    root
      .command("enable")
      .description("load the plugin in sessions started from now on (plugins.enabled)")
      .argument("<name>")
      .action(run((ctx, name: string) => setEnabled(ctx, name, true)));
    root
      .command("disable")
      .description("stop loading the plugin (plugins.disabled)")
      .argument("<name>")
      .action(run((ctx, name: string) => setEnabled(ctx, name, false)));
    root
      .command("remove")
      .aliases(["rm", "uninstall"])
      .description("delete the plugin's folder and forget it in config.yaml")
      .argument("<name>")
      .action(run((ctx, name: string) => remove(ctx, name)));
    root
      .command("update")
      .description("re-install a plugin (or every installed one) from where it came from")
      .argument("[name]")
      .action(run((ctx, name: string | undefined) => update(ctx, name)));
  },
});
