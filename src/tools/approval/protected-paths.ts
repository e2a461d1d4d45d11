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
import { realpathSync } from "node:fs";
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
  ["plugins/", "guarded", "Hermes's plugins"],
  ["hooks/", "guarded", "Hermes's hooks"],
  ["scripts/", "guarded", "Hermes's cron scripts"],
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
  ["/lib/systemd/system/", "guarded", "systemd units"],
  ["/usr/lib/systemd/system/", "guarded", "systemd units"],
  ["/usr/lib/systemd/user/", "guarded", "systemd units"],
  ["/run/systemd/system/", "guarded", "systemd units"],
  ["/Library/LaunchDaemons/", "guarded", "launchd services"],
  ["/Library/LaunchAgents/", "guarded", "launchd services"],
];

function within(path: string, dir: string): boolean {
  if (path === dir) return true;
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

function matchEntry(path: string, base: string, entry: string): boolean {
  if (entry.endsWith("/")) return within(path, join(base, entry.slice(0, -1)));
  return path === join(base, entry);
}

/**
 * Why `abs` (an absolute, normalised path) is protected, or undefined. Pure. A path inside a
 * protected directory is protected; so is a `state.db` sibling such as `state.db-wal`.
 */
export function pathProtection(abs: string, roots: GuardRoots): PathProtection | undefined {
  const path = resolve(abs);
  for (const home of roots.hermesHomes) {
    for (const base of [home, ...profileBase(path, home)]) {
      for (const [entry, level, reason] of HERMES_ENTRIES) {
        if (matchEntry(path, base, entry)) return { level, reason };
      }
    }
  }
  for (const home of roots.homes) {
    for (const [entry, level, reason] of HOME_FILES) {
      if (matchEntry(path, home, entry)) return { level, reason };
    }
    // Launch agents on macOS run code at login too.
    if (within(path, join(home, "Library/LaunchAgents"))) {
      return { level: "guarded", reason: "the user's launchd agents" };
    }
  }
  for (const [entry, level, reason] of SYSTEM_PATHS) {
    if (entry.endsWith("/") ? within(path, entry.slice(0, -1)) : path === entry) return { level, reason };
  }
  if (/^\/etc\/cron[^/]*(\/|$)/.test(path)) return { level: "guarded", reason: "the system's cron tables" };
  return undefined;
}

/** `<home>/profiles/<name>` when `path` lies in a profile of `home`. */
function profileBase(path: string, home: string): string[] {
  const profiles = join(home, "profiles");
  if (!within(path, profiles) || path === profiles) return [];
  const name = relative(profiles, path).split(sep)[0];
  return name ? [join(profiles, name)] : [];
}

/**
 * Whether deleting, moving or changing the mode of directory `abs` as a whole would take a
 * protected path with it: `rm -r ~/.hermes`, `mv ~/.ssh /tmp`. Returns the first protected
 * location inside it. Pure.
 */
export function containsProtected(abs: string, roots: GuardRoots): PathProtection | undefined {
  const dir = resolve(abs);
  const own = pathProtection(dir, roots);
  if (own) return own;
  const candidates: Array<[string, string]> = [];
  for (const home of roots.hermesHomes) {
    candidates.push([home, "Hermes's home (config, memory, skills, sessions)"]);
  }
  for (const home of roots.homes) {
    for (const [entry] of HOME_FILES) candidates.push([join(home, entry), "the user's home"]);
  }
  for (const [entry] of SYSTEM_PATHS) candidates.push([entry.replace(/\/$/, ""), "system configuration"]);
  for (const [location, what] of candidates) {
    // Hermes's home itself counts (it holds config, memory, skills); a listed file equal to `dir`
    // was already answered by pathProtection above.
    if (within(location, dir)) {
      return pathProtection(location, roots) ?? { level: "guarded", reason: what };
    }
  }
  return undefined;
}

/** `path` with symlinks resolved as far as it exists (the missing tail is appended as written). */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPathOf(parent), basename(path));
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
