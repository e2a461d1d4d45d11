/**
 * The places an agent must not change on its own: Hermes's guard rails and memory (its config,
 * identity, skills, cron jobs, pairing records, hooks, state.db), its secrets, the user's login
 * (shell start-up files, SSH, credential files) and the system's configuration.
 *
 * One list for every way of writing: the terminal's command analyser, the file tools, execute_code
 * and MCP filesystem servers all ask `pathProtection`. Pure except `guardPaths`, which resolves
 * symlinks so a link cannot carry a write past the check.
 *
 * Two levels:
 * - `secret`: credentials (`.env`, `auth.json`, SSH keys, `.netrc`...). The file tools refuse them
 *   outright; the terminal asks.
 * - `guarded`: everything else on the list. Every writer asks the user (and is refused where no one
 *   can be asked: non-interactive runs, `approvals.cron_mode: deny`, webhooks).
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export type ProtectionLevel = "secret" | "guarded";

export interface PathProtection {
  level: ProtectionLevel;
  /** What the path is, for the model and the user: "the Hermes config (config.yaml)". */
  reason: string;
}

/** The directories the list is relative to. Give each as written and resolved (see `guardRoots`). */
export interface GuardRoots {
  /** The user's home directories. */
  homes: readonly string[];
  /** HERMES_HOME of this run and the default home it may be a profile of. */
  hermesHomes: readonly string[];
}

/** Entries of a Hermes home (or of a profile under `profiles/<name>/`). Directories end in `/`. */
const HERMES_ENTRIES: ReadonlyArray<[string, ProtectionLevel, string]> = [
  [".env", "secret", "the Hermes secrets file (.env)"],
  ["auth.json", "secret", "the Hermes credential store (auth.json)"],
  [".anthropic_oauth.json", "secret", "a Hermes OAuth token file"],
  ["mcp-tokens/", "secret", "Hermes's MCP OAuth tokens"],
  ["config.yaml", "guarded", "the Hermes config (config.yaml)"],
  ["SOUL.md", "guarded", "Hermes's identity file (SOUL.md)"],
  ["memories/", "guarded", "Hermes's memory (use the memory tool)"],
  ["skills/", "guarded", "Hermes's skills (use the skill_manage tool)"],
  ["cron/", "guarded", "Hermes's cron jobs (use the cronjob tool)"],
  ["pairing/", "guarded", "the chat pairing records"],
  ["pending/", "guarded", "writes waiting for the user's approval (pending/)"],
  ["checkpoints/", "guarded", "the checkpoint store behind /rollback"],
  ["plugins/", "guarded", "Hermes's plugins"],
  ["hooks/", "guarded", "Hermes's hooks"],
  ["scripts/", "guarded", "Hermes's cron scripts"],
  ["data/", "guarded", "batch runs' trajectories and checkpoints (data/)"],
  ["shell-hooks-allowlist.json", "guarded", "the shell hook consent list"],
  ["webhook_subscriptions.json", "guarded", "the webhook subscriptions"],
  ["state.db", "guarded", "the session database (state.db)"],
  ["state.db-wal", "guarded", "the session database (state.db)"],
  ["state.db-shm", "guarded", "the session database (state.db)"],
  ["state.db-journal", "guarded", "the session database (state.db)"],
  ["gateway.pid", "guarded", "the gateway's process record"],
  ["gateway.lock", "guarded", "the gateway's lock"],
];

/** Files in the user's home that log them in, hold credentials or run code at login. */
const HOME_FILES: ReadonlyArray<[string, ProtectionLevel, string]> = [
  [".ssh/", "secret", "the user's SSH keys and config (~/.ssh)"],
  [".netrc", "secret", "a credentials file (~/.netrc)"],
  [".pgpass", "secret", "a credentials file (~/.pgpass)"],
  [".npmrc", "secret", "a credentials file (~/.npmrc)"],
  [".pypirc", "secret", "a credentials file (~/.pypirc)"],
  [".git-credentials", "secret", "a credentials file (~/.git-credentials)"],
  [".aws/", "secret", "the user's AWS credentials (~/.aws)"],
  [".gnupg/", "secret", "the user's GnuPG keys (~/.gnupg)"],
  [".docker/config.json", "secret", "the Docker credentials file"],
  [".kube/config", "secret", "the Kubernetes credentials file"],
  [".config/gh/hosts.yml", "secret", "the GitHub CLI credentials file"],
  [".bashrc", "guarded", "a shell start-up file (~/.bashrc)"],
  [".bash_profile", "guarded", "a shell start-up file (~/.bash_profile)"],
  [".bash_login", "guarded", "a shell start-up file (~/.bash_login)"],
  [".bash_logout", "guarded", "a shell start-up file (~/.bash_logout)"],
  [".profile", "guarded", "a shell start-up file (~/.profile)"],
  [".zshrc", "guarded", "a shell start-up file (~/.zshrc)"],
  [".zshenv", "guarded", "a shell start-up file (~/.zshenv)"],
  [".zprofile", "guarded", "a shell start-up file (~/.zprofile)"],
  [".zlogin", "guarded", "a shell start-up file (~/.zlogin)"],
  [".zlogout", "guarded", "a shell start-up file (~/.zlogout)"],
  [".kshrc", "guarded", "a shell start-up file (~/.kshrc)"],
  [".mkshrc", "guarded", "a shell start-up file (~/.mkshrc)"],
  [".cshrc", "guarded", "a shell start-up file (~/.cshrc)"],
  [".tcshrc", "guarded", "a shell start-up file (~/.tcshrc)"],
  [".inputrc", "guarded", "a shell start-up file (~/.inputrc)"],
  [".xprofile", "guarded", "a login start-up file (~/.xprofile)"],
  [".xinitrc", "guarded", "a login start-up file (~/.xinitrc)"],
  [".pam_environment", "guarded", "the login environment (~/.pam_environment)"],
  [".config/fish/", "guarded", "the fish shell's start-up files"],
  [".config/autostart/", "guarded", "programs started at login (~/.config/autostart)"],
  [".config/systemd/", "guarded", "the user's systemd units"],
  [".config/environment.d/", "guarded", "the login environment (~/.config/environment.d)"],
  [".local/share/systemd/", "guarded", "the user's systemd units"],
  [".gitconfig", "guarded", "the user's git config (~/.gitconfig)"],
  [".config/git/", "guarded", "the user's git config (~/.config/git)"],
];

/** System locations, absolute. Directories end in `/`. */
const SYSTEM_PATHS: ReadonlyArray<[string, ProtectionLevel, string]> = [
  ["/etc/shadow", "secret", "the system password database (/etc/shadow)"],
  ["/etc/gshadow", "secret", "the system group password database"],
  ["/etc/sudoers", "guarded", "the sudo policy (/etc/sudoers)"],
  ["/etc/sudoers.d/", "guarded", "the sudo policy (/etc/sudoers.d)"],
  ["/etc/", "guarded", "system configuration (/etc)"],
  ["/private/etc/", "guarded", "system configuration (/private/etc)"],
  ["/var/spool/cron/", "guarded", "the system's cron tables"],
  ["/var/spool/anacron/", "guarded", "the system's cron tables"],
  ["/var/at/", "guarded", "the system's cron and at tables"],
  ["/private/var/at/", "guarded", "the system's cron and at tables"],
  ["/usr/lib/cron/", "guarded", "the system's cron tables"],
  ["/lib/systemd/system/", "guarded", "systemd units"],
  ["/usr/lib/systemd/system/", "guarded", "systemd units"],
  ["/usr/lib/systemd/user/", "guarded", "systemd units"],
  ["/run/systemd/system/", "guarded", "systemd units"],
  ["/Library/LaunchDaemons/", "guarded", "launchd services"],
  ["/Library/LaunchAgents/", "guarded", "launchd services"],
];

/**
 * macOS and Windows file systems ignore case by default: `CONFIG.yaml` there is `config.yaml`, so
 * comparisons fold case on those platforms (a false match on a case-sensitive volume only asks).
 */
const FOLD_CASE = process.platform === "darwin" || process.platform === "win32";
const fold = (p: string): string => (FOLD_CASE ? p.toLowerCase() : p);

/**
 * Whether `path` is `dir` or lies inside it. Both are absolute and normalised (every caller passes
 * `resolve`/`join` output), so a prefix ending in a separator decides it: `..name` is a child
 * called "..name", never a way out. This runs for every entry of the list on every path a command
 * names, so it stays a string comparison.
 */
function within(path: string, dir: string): boolean {
  const a = fold(path);
  const b = fold(dir);
  return a === b || a.startsWith(b.endsWith(sep) ? b : b + sep);
}

/** One entry of the list as an absolute path, with what it is. */
interface Entry {
  path: string;
  dir: boolean;
  level: ProtectionLevel;
  reason: string;
}

function entry(base: string, [name, level, reason]: readonly [string, ProtectionLevel, string]): Entry {
  const dir = name.endsWith("/");
  return { path: join(base, dir ? name.slice(0, -1) : name), dir, level, reason };
}

function matches(path: string, e: Entry): boolean {
  return e.dir ? within(path, e.path) : fold(path) === fold(e.path);
}

/**
 * The list made absolute for one set of roots, in the order entries are tried (Hermes's homes,
 * the user's homes, the system). Built once per roots object: a command's analysis asks about
 * every path it names, and deletes ask about every entry.
 */
const compiledLists = new WeakMap<GuardRoots, Entry[]>();
function compiled(roots: GuardRoots): Entry[] {
  let list = compiledLists.get(roots);
  if (list) return list;
  list = [];
  for (const home of roots.hermesHomes) for (const e of HERMES_ENTRIES) list.push(entry(home, e));
  for (const home of roots.homes) {
    for (const e of HOME_FILES) list.push(entry(home, e));
    // Launch agents on macOS run code at login too.
    list.push(entry(home, ["Library/LaunchAgents/", "guarded", "the user's launchd agents"]));
  }
  for (const e of SYSTEM_PATHS) list.push(entry("/", e));
  compiledLists.set(roots, list);
  return list;
}

/**
 * Why `abs` (an absolute, normalised path) is protected, or undefined. Pure. A path inside a
 * protected directory is protected; so is a `state.db` sibling such as `state.db-wal`.
 */
export function pathProtection(abs: string, roots: GuardRoots): PathProtection | undefined {
  const path = resolve(abs);
  for (const home of roots.hermesHomes) {
    for (const base of profileBase(path, home)) {
      for (const e of HERMES_ENTRIES) {
        const inProfile = entry(base, e);
        if (matches(path, inProfile)) return { level: inProfile.level, reason: inProfile.reason };
      }
    }
  }
  for (const e of compiled(roots)) if (matches(path, e)) return { level: e.level, reason: e.reason };
  return undefined;
}

/** `<home>/profiles/<name>` when `path` lies in a profile of `home`. */
function profileBase(path: string, home: string): string[] {
  const profiles = join(home, "profiles");
  if (!within(path, profiles) || fold(path) === fold(profiles)) return [];
  const name = relative(profiles, path).split(sep)[0];
  return name ? [join(profiles, name)] : [];
}

/**
 * Whether deleting, moving or changing the mode of directory `abs` as a whole would take a
 * protected path with it: `rm -r ~/.hermes`, `mv ~/.ssh /tmp`. Returns the strictest protection
 * found at or inside it (`secret` when it holds credentials). Pure.
 */
export function containsProtected(abs: string, roots: GuardRoots): PathProtection | undefined {
  const dir = resolve(abs);
  const found: PathProtection[] = [];
  const own = pathProtection(dir, roots);
  if (own) found.push(own);
  for (const e of compiled(roots)) {
    if (within(e.path, dir)) found.push({ level: e.level, reason: e.reason });
  }
  for (const home of roots.hermesHomes) {
    const homes: Array<[string, string]> = [
      [home, "Hermes's home (config, memory, skills, sessions)"],
      // Each profile is a Hermes home of its own: `rm -r ~/.hermes/profiles` takes their configs.
      [join(home, "profiles"), "Hermes's profiles (each with its own config, memory and skills)"],
    ];
    for (const [location, what] of homes) {
      if (within(location, dir))
        found.push(pathProtection(location, roots) ?? { level: "guarded", reason: what });
    }
    for (const base of profileBase(dir, home)) {
      for (const e of HERMES_ENTRIES) {
        const inProfile = entry(base, e);
        if (within(inProfile.path, dir)) found.push({ level: inProfile.level, reason: inProfile.reason });
      }
    }
  }
  return found.find((p) => p.level === "secret") ?? found[0];
}

/**
 * `path` with symlinks resolved as far as it exists (the missing tail is appended as written). A
 * dangling link is followed to the path it names, where a write through it would land.
 */
export function realPathOf(path: string): string {
  return realPathWithin(resolve(path), 0);
}

/** Symlink hops followed before giving up (the kernel's own limit is 40). */
const MAX_LINK_HOPS = 40;

function realPathWithin(path: string, hops: number): string {
  try {
    // `.native` returns the name's case as stored, so `CONFIG.yaml` on macOS resolves to config.yaml.
    return realpathSync.native(path);
  } catch {
    // Missing (or unreadable): resolve the parent, then follow the last component if it is a
    // dangling link, since writing through one creates the file it names.
    const parent = dirname(path);
    if (parent === path) return path;
    const here = join(realPathWithin(parent, hops), basename(path));
    if (hops >= MAX_LINK_HOPS) return here;
    try {
      if (lstatSync(here).isSymbolicLink()) {
        return realPathWithin(resolve(dirname(here), readlinkSync(here)), hops + 1);
      }
    } catch {
      // Nothing there: the missing tail is kept as written.
    }
    return here;
  }
}

/**
 * The roots for a run: the user's home (from `env.HOME` and the OS) and HERMES_HOME, each as given
 * and with symlinks resolved; when HERMES_HOME is a profile (`…/profiles/<name>`), its parent home
 * too; and `~/.hermes`, the default home a profile run still lives beside.
 */
export function guardRoots(
  hermesHome: string,
  env: Readonly<Record<string, string | undefined>>,
): GuardRoots {
  const homes = new Set<string>();
  for (const h of [env.HOME, homedir()]) {
    if (h && isAbsolute(h)) {
      homes.add(resolve(h));
      homes.add(realPathOf(resolve(h)));
    }
  }
  const hermes = new Set<string>();
  const addHermes = (h: string) => {
    hermes.add(resolve(h));
    hermes.add(realPathOf(resolve(h)));
  };
  addHermes(hermesHome);
  if (basename(dirname(resolve(hermesHome))) === "profiles") addHermes(dirname(dirname(resolve(hermesHome))));
  for (const h of [...homes]) addHermes(join(h, ".hermes"));
  return { homes: [...homes], hermesHomes: [...hermes] };
}

/**
 * The protection that applies to writing `abs`: the path as written (so replacing a symlink is
 * caught) and the file it resolves to (so writing through a symlink is caught). The stricter
 * level wins. Reads the filesystem to resolve links.
 */
export function guardPath(abs: string, roots: GuardRoots): PathProtection | undefined {
  const found = [pathProtection(abs, roots), pathProtection(realPathOf(abs), roots)].filter(
    (p): p is PathProtection => p !== undefined,
  );
  return found.find((p) => p.level === "secret") ?? found[0];
}
