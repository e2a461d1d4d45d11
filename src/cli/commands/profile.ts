/**
 * `hermes profile`: several independent homes on one machine. Each profile is a full home under
 * `~/.hermes/profiles/NAME` (config, keys, memory, sessions, skills, gateway); `default` is
 * `~/.hermes` itself. `hermes profile use NAME` makes one sticky (upstream's
 * `~/.hermes/active_profile`), so every later command without `-p` works in it.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { DEFAULT_PROFILE } from "../../config/home.js";
import { aliasDir, aliasesOf } from "../../config/profile-alias.js";
import { readProfileMeta, setProfileDescription } from "../../config/profile-meta.js";
import {
  activeProfile,
  createProfile,
  deleteProfile,
  existingProfile,
  listProfiles,
  type ProfileInfo,
  profileInfo,
  renameProfile,
  setActiveProfile,
} from "../../config/profiles.js";
import { runningGateway } from "../../gateway/pid-file.js";
import { CliFailure, defineCommand } from "../command.js";
import { renderTable } from "../format/table.js";
import { homeFor } from "../home-env.js";
import type { CliIo } from "../io.js";
import { defaultExportPath, exportProfile, importProfile } from "../profiles/archive.js";
import { type InstallFlags, installAction, updateAction } from "../profiles/distribution-actions.js";
import {
  aliasAction,
  aliasAfterCreate,
  aliasesAfterDelete,
  aliasesAfterRename,
  describeAction,
  infoAction,
} from "../profiles/profile-extras.js";

interface Ctx {
  io: CliIo;
  /** Every `hermes` command word (no alias may take one). */
  commandNames: readonly string[];
  /** `-p NAME` given with the command (the home a clone copies from). */
  profile: string | undefined;
  userHome: string;
}

/** `hermes profile`; `commands` are the program's (their names are not free for aliases). */
export const profileCommand = (commands: ReadonlyArray<{ name: string; aliases?: readonly string[] }>) =>
  defineCommand({
    name: "profile",
    description: "profiles: independent homes under ~/.hermes/profiles, one of them sticky",
    // Not "home": `profile use default` must work even when the sticky profile's directory is gone.
    needs: "nothing",
    defaultSubcommand: "list",
    open: ({ io, profile }): Ctx => ({
      io,
      profile,
      userHome: homedir(),
      commandNames: commands.flatMap((c) => [c.name, ...(c.aliases ?? [])]),
    }),
    parse: (root, run) => {
      root
        .command("list")
        .alias("ls")
        .description("every profile, the sticky one marked with *")
        .option("--json", "print JSON")
        .action(run((ctx, flags: { json?: boolean }) => list(ctx, flags.json === true)));

      root
        .command("use")
        .description("make NAME the profile every command uses without -p (default: the root home)")
        .argument("<name>", "a profile name, or default")
        .action(
          run(({ io, userHome }, name: string) => {
            setActiveProfile(name, userHome);
            io.out(
              name === DEFAULT_PROFILE
                ? "Now using the default profile (~/.hermes)."
                : `Now using profile "${name}" (${existingProfile(name, userHome)}). Back to the root home with: hermes profile use default`,
            );
            return 0;
          }),
        );

      root
        .command("create")
        .description("create a profile: empty (with the current model settings), or cloned")
        .argument("<name>", "1-64 lowercase letters, digits, - or _")
        .option("--clone", "copy config.yaml, .env, SOUL.md, memories and skills of the current profile")
        .option("--clone-all", "copy everything but history (sessions, state.db), backups and cron jobs")
        .option("--clone-from <profile>", "clone this profile instead of the current one (implies --clone)")
        .option(
          "--no-alias",
          "do not make the ~/.local/bin/NAME wrapper (made by default when the name is free)",
        )
        .option("--description <text>", "a one-line description of what the profile is for")
        .action(run((ctx, name: string, flags: CreateFlags) => create(ctx, name, flags)));

      root
        .command("delete")
        .alias("rm")
        .description("delete a profile and everything in it")
        .argument("<name>", "the profile")
        .option("-y, --yes", "do not ask for confirmation")
        .action(run((ctx, name: string, flags: { yes?: boolean }) => remove(ctx, name, flags.yes === true)));

      root
        .command("show")
        .description("one profile's home, model and contents (default: the current one)")
        .argument("[name]", "the profile")
        .action(run((ctx, name: string | undefined) => show(ctx, name)));

      root
        .command("rename")
        .description("rename a profile (its directory, and the sticky setting when it names it)")
        .argument("<old>", "the profile")
        .argument("<new>", "its new name")
        .action(
          run((ctx, from: string, to: string) => {
            const { io, userHome } = ctx;
            refuseWhileGatewayRuns(existingProfile(from, userHome), from);
            const { path, wasActive } = renameProfile(from, to, userHome);
            io.out(`Renamed profile "${from}" to "${to}": ${path}`);
            if (wasActive) io.out(`The sticky profile is now "${to}".`);
            aliasesAfterRename(ctx, from, to);
            return 0;
          }),
        );

      root
        .command("alias")
        .description("make (or --remove) the ~/.local/bin wrapper that runs `hermes -p NAME`")
        .argument("<name>", "the profile")
        .option("--remove", "remove the wrapper instead (only a Hermes wrapper is ever removed)")
        .option("--name <alias>", "the wrapper's name (default: the profile's name)")
        .action(
          run((ctx, name: string, flags: { remove?: boolean; name?: string }) =>
            aliasAction(ctx, name, flags),
          ),
        );

      root
        .command("describe")
        .description("show or set a profile's one-line description (profile.yaml)")
        .argument("[name]", "the profile (default: the current one)")
        .option("--text <text>", "set the description to this text (empty clears it)")
        .option("--all", "list every profile's description")
        .option("--auto", "have the profile's auxiliary model write one from its SOUL.md, model and skills")
        .action(
          run((ctx, name: string | undefined, flags: { text?: string; all?: boolean; auto?: boolean }) =>
            describeAction(ctx, currentName(ctx), name, flags),
          ),
        );

      root
        .command("info")
        .description("the distribution a profile was installed from (distribution.yaml)")
        .argument("[name]", "the profile (default: the current one)")
        .action(run((ctx, name: string | undefined) => infoAction(ctx, name ?? currentName(ctx))));

      root
        .command("install")
        .description("install a profile distribution (a directory or git repository with distribution.yaml)")
        .argument(
          "<source>",
          "a directory, a git URL (https, ssh, git@, github.com/user/repo), or a local repository; <repository>#<ref> pins a branch, tag or commit (update keeps the pin)",
        )
        .option("--name <name>", "the profile's name (default: the manifest's name)")
        .option("--alias", "make the ~/.local/bin wrapper for it")
        .option("--force", "install over an existing profile of that name (its user data is kept)")
        .option("-y, --yes", "do not ask for confirmation")
        .action(run((ctx, source: string, flags: InstallFlags) => installAction(ctx, source, flags)));

      root
        .command("update")
        .description(
          "pull an installed distribution again and apply it (memories, sessions, keys kept; a #ref pin is kept)",
        )
        .argument("<name>", "the profile")
        .option("--force-config", "replace config.yaml with the distribution's too")
        .option("-y, --yes", "do not ask for confirmation")
        .action(
          run((ctx, name: string, flags: { forceConfig?: boolean; yes?: boolean }) => {
            refuseWhileGatewayRuns(existingProfile(name, ctx.userHome), name);
            return updateAction(ctx, name, flags);
          }),
        );

      root
        .command("export")
        .description("write a profile to a .tar.gz (without .env and auth.json; secrets in text redacted)")
        .argument("<name>", "the profile, or default")
        .option(
          "-o, --output <file>",
          "where to write it (default: ~/.hermes/profile-exports/NAME-<time>.tar.gz)",
        )
        .action(
          run(async ({ io, userHome }, name: string, flags: { output?: string }) => {
            const output = flags.output ?? defaultExportPath(name, userHome, new Date(io.now() * 1000));
            const count = await exportProfile(name, userHome, output);
            io.out(`Exported profile "${name}" (${count} files) to ${output}`);
            io.out(
              "API keys (.env, auth.json) are not in it; add them in the new home with: hermes auth add",
            );
            return 0;
          }),
        );

      root
        .command("import")
        .description("install a profile from a .tar.gz made by `hermes profile export`")
        .argument("<archive>", "the .tar.gz")
        .option("--name <name>", "the profile's name (default: the archive's top directory)")
        .action(
          run(async (ctx, archive: string, flags: { name?: string }) => {
            const { io, userHome } = ctx;
            const dir = await importProfile(archive, userHome, flags.name);
            const name = dir.split("/").pop() ?? "";
            io.out(`Imported profile "${name}": ${dir}`);
            // As upstream: an imported profile gets its wrapper too when the name is free.
            aliasAfterCreate(ctx, name);
            io.out(`Use it with: hermes -p ${name} chat, or make it sticky with: hermes profile use ${name}`);
            return 0;
          }),
        );
    },
  });

interface CreateFlags {
  clone?: boolean;
  cloneAll?: boolean;
  cloneFrom?: string;
  /** commander's `--no-alias`: false when given. */
  alias?: boolean;
  description?: string;
}

/** The profile a command without NAME means: `-p`, else the sticky one. */
function currentName({ profile, userHome }: Ctx): string {
  return profile ?? activeProfile(userHome);
}

function create(ctx: Ctx, name: string, flags: CreateFlags): number {
  const { io, profile, userHome } = ctx;
  const cloning = flags.clone === true || flags.cloneAll === true || flags.cloneFrom !== undefined;
  // The current home: -p, else HERMES_HOME, else the sticky profile, else ~/.hermes.
  const current = (): string => homeFor(io.env, profile);
  const source = flags.cloneFrom !== undefined ? existingProfile(flags.cloneFrom, userHome) : undefined;
  const created = createProfile({
    name,
    userHome,
    cloneFrom: cloning ? (source ?? current()) : undefined,
    cloneAll: flags.cloneAll === true,
    seedModelFrom: cloning ? undefined : safely(current),
  });
  io.out(`Created profile "${name}": ${created.path}`);
  if (flags.description !== undefined && flags.description.trim() !== "") {
    io.out(`Description: ${setProfileDescription(created.path, flags.description)}`);
  }
  if (created.strippedChannels.length > 0) {
    io.out(
      `Left out messaging settings (${created.strippedChannels.join(", ")}): one bot cannot serve two gateways. ` +
        `Set the new profile's own with: hermes -p ${name} config edit`,
    );
  }
  if (flags.alias !== false) aliasAfterCreate(ctx, name);
  io.out(`Use it with: hermes -p ${name} chat, or make it sticky with: hermes profile use ${name}`);
  return 0;
}

/** The current home, or undefined when it cannot be resolved (a fresh profile then starts without a model). */
function safely(current: () => string): string | undefined {
  try {
    return current();
  } catch {
    return undefined;
  }
}

async function remove(ctx: Ctx, name: string, yes: boolean): Promise<number> {
  const { io, userHome } = ctx;
  const info = profileInfo(name, userHome);
  if (!info.isDefault) refuseWhileGatewayRuns(info.path, name);
  if (!yes) {
    if (io.stdin.isTTY !== true) {
      throw new CliFailure(
        `deleting "${name}" needs confirmation and stdin is not a terminal; pass -y to confirm.`,
        2,
      );
    }
    io.err(
      `Profile: ${name}\nPath:    ${info.path}\nThis deletes its config, API keys, memories, sessions, skills and cron jobs.`,
    );
    const rl = createInterface({ input: io.stdin, output: io.stderr });
    const answer = await rl.question(`Type '${name}' to confirm: `).finally(() => rl.close());
    if (answer.trim() !== name) {
      io.err("Cancelled; nothing was deleted.");
      return 1;
    }
  }
  const { path, wasActive } = deleteProfile(name, userHome);
  io.out(`Deleted profile "${name}" (${path}).`);
  aliasesAfterDelete(ctx, name);
  if (wasActive) io.out("It was the sticky profile; commands now use the default profile (~/.hermes).");
  return 0;
}

function refuseWhileGatewayRuns(home: string, name: string): void {
  const gateway = runningGateway(home);
  if (gateway) {
    throw new CliFailure(
      `a gateway is running in profile "${name}" (pid ${gateway.pid}); stop it first: hermes -p ${name} gateway stop`,
    );
  }
}

function list({ io, userHome }: Ctx, json: boolean): number {
  const profiles = listProfiles(userHome);
  if (json) {
    io.out(
      JSON.stringify(
        profiles.map((p) => ({ ...p, gatewayRunning: runningGateway(p.path) !== null })),
        null,
        2,
      ),
    );
    return 0;
  }
  const rows = profiles.map((p) => [
    p.isActive ? "*" : "",
    p.name,
    describeModel(p),
    runningGateway(p.path) ? "running" : "",
    String(p.skillCount),
    p.path,
  ]);
  const columns = [
    { header: "" },
    { header: "PROFILE" },
    { header: "MODEL", max: 40 },
    { header: "GATEWAY" },
    { header: "SKILLS", align: "right" as const },
    { header: "PATH", flex: true },
  ];
  io.out(renderTable(columns, rows, io.width !== undefined ? { width: io.width } : {}).join("\n"));
  if (activeProfile(userHome) === DEFAULT_PROFILE && profiles.length === 1) {
    io.out("\nOnly the default profile exists. Create another with: hermes profile create NAME");
  }
  return 0;
}

function show({ io, profile, userHome }: Ctx, name: string | undefined): number {
  const target = name ?? profile ?? activeProfile(userHome);
  const info = profileInfo(target, userHome);
  const gateway = runningGateway(info.path);
  const aliases = aliasesOf(info.name, userHome);
  const meta = readProfileMeta(info.path);
  io.out(
    [
      `Profile:  ${info.name}${info.isActive ? " (sticky)" : ""}`,
      `Home:     ${info.path}`,
      `Model:    ${describeModel(info) || "(not set; run: hermes -p " + info.name + " model)"}`,
      `.env:     ${info.hasEnv ? "present" : "none"}`,
      `Skills:   ${info.skillCount}`,
      `Gateway:  ${gateway ? `running (pid ${gateway.pid})` : "not running"}`,
      `Alias:    ${aliases.length > 0 ? aliases.map((a) => join(aliasDir(userHome), a)).join(", ") : "none"}`,
      ...(meta.description ? [`About:    ${meta.description}`] : []),
    ].join("\n"),
  );
  return 0;
}

function describeModel(p: ProfileInfo): string {
  if (!p.model) return "";
  return p.provider ? `${p.model} (${p.provider})` : p.model;
}
