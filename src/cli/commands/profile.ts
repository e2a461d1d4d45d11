/**
 * `hermes profile`: several independent homes on one machine. Each profile is a full home under
 * `~/.hermes/profiles/NAME` (config, keys, memory, sessions, skills, gateway); `default` is
 * `~/.hermes` itself. `hermes profile use NAME` makes one sticky (upstream's
 * `~/.hermes/active_profile`), so every later command without `-p` works in it.
 */
import { homedir } from "node:os";
import { createInterface } from "node:readline/promises";
import { DEFAULT_PROFILE } from "../../config/home.js";
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

interface Ctx {
  io: CliIo;
  /** `-p NAME` given with the command (the home a clone copies from). */
  profile: string | undefined;
  userHome: string;
}

export const profileCommand = defineCommand({
  name: "profile",
  description: "profiles: independent homes under ~/.hermes/profiles, one of them sticky",
  // Not "home": `profile use default` must work even when the sticky profile's directory is gone.
  needs: "nothing",
  defaultSubcommand: "list",
  open: ({ io, profile }): Ctx => ({ io, profile, userHome: homedir() }),
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
        run(({ io, userHome }, from: string, to: string) => {
          refuseWhileGatewayRuns(existingProfile(from, userHome), from);
          const { path, wasActive } = renameProfile(from, to, userHome);
          io.out(`Renamed profile "${from}" to "${to}": ${path}`);
          if (wasActive) io.out(`The sticky profile is now "${to}".`);
          return 0;
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
          io.out("API keys (.env, auth.json) are not in it; add them in the new home with: hermes auth add");
          return 0;
        }),
      );

    root
      .command("import")
      .description("install a profile from a .tar.gz made by `hermes profile export`")
      .argument("<archive>", "the .tar.gz")
      .option("--name <name>", "the profile's name (default: the archive's top directory)")
      .action(
        run(async ({ io, userHome }, archive: string, flags: { name?: string }) => {
          const dir = await importProfile(archive, userHome, flags.name);
          const name = dir.split("/").pop() ?? "";
          io.out(`Imported profile "${name}": ${dir}`);
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
}

function create({ io, profile, userHome }: Ctx, name: string, flags: CreateFlags): number {
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
  if (created.strippedChannels.length > 0) {
    io.out(
      `Left out messaging settings (${created.strippedChannels.join(", ")}): one bot cannot serve two gateways. ` +
        `Set the new profile's own with: hermes -p ${name} config edit`,
    );
  }
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

async function remove({ io, userHome }: Ctx, name: string, yes: boolean): Promise<number> {
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
  io.out(
    [
      `Profile:  ${info.name}${info.isActive ? " (sticky)" : ""}`,
      `Home:     ${info.path}`,
      `Model:    ${describeModel(info) || "(not set; run: hermes -p " + info.name + " model)"}`,
      `.env:     ${info.hasEnv ? "present" : "none"}`,
      `Skills:   ${info.skillCount}`,
      `Gateway:  ${gateway ? `running (pid ${gateway.pid})` : "not running"}`,
    ].join("\n"),
  );
  return 0;
}

function describeModel(p: ProfileInfo): string {
  if (!p.model) return "";
  return p.provider ? `${p.model} (${p.provider})` : p.model;
}
