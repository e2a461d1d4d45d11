import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  containsProtected,
  type GuardRoots,
  guardPath,
  guardRoots,
  pathProtection,
  realPathOf,
} from "../../../../src/tools/approval/protected-paths.js";

const roots: GuardRoots = { homes: ["/home/u"], hermesHomes: ["/home/u/.hermes"] };
const level = (path: string) => pathProtection(path, roots)?.level ?? "none";

describe("pathProtection", () => {
  it.each([
    // Hermes's secrets.
    ["/home/u/.hermes/.env", "secret"],
    ["/home/u/.hermes/auth.json", "secret"],
    ["/home/u/.hermes/.anthropic_oauth.json", "secret"],
    ["/home/u/.hermes/mcp-tokens/github.json", "secret"],
    ["/home/u/.hermes/profiles/work/.env", "secret"],
    ["/home/u/.hermes/profiles/work/auth.json", "secret"],
    // Hermes's guard rails and memory.
    ["/home/u/.hermes/config.yaml", "guarded"],
    ["/home/u/.hermes/SOUL.md", "guarded"],
    ["/home/u/.hermes/memories", "guarded"],
    ["/home/u/.hermes/memories/MEMORY.md", "guarded"],
    ["/home/u/.hermes/memories/USER.md", "guarded"],
    ["/home/u/.hermes/skills/devops/deploy/SKILL.md", "guarded"],
    ["/home/u/.hermes/skills/..x/SKILL.md", "guarded"],
    ["/home/u/.hermes/cron/jobs.json", "guarded"],
    ["/home/u/.hermes/pairing/telegram.json", "guarded"],
    ["/home/u/.hermes/plugins/p/plugin.yaml", "guarded"],
    ["/home/u/.hermes/hooks/x.sh", "guarded"],
    ["/home/u/.hermes/scripts/job.py", "guarded"],
    // A batch run's output: a prompt's agent works in batch-workspaces/<run>/<i>, never here.
    ["/home/u/.hermes/data/run/checkpoint.json", "guarded"],
    ["/home/u/.hermes/batch-workspaces/run/3/../../../data/run/trajectories.jsonl", "guarded"],
    ["/home/u/.hermes/shell-hooks-allowlist.json", "guarded"],
    ["/home/u/.hermes/webhook_subscriptions.json", "guarded"],
    ["/home/u/.hermes/state.db", "guarded"],
    ["/home/u/.hermes/state.db-wal", "guarded"],
    ["/home/u/.hermes/state.db-shm", "guarded"],
    ["/home/u/.hermes/profiles/work/config.yaml", "guarded"],
    ["/home/u/.hermes/profiles/work/memories/MEMORY.md", "guarded"],
    ["/home/u/.hermes/profiles/work/skills/a/SKILL.md", "guarded"],
    ["/home/u/.hermes/profiles/work/state.db", "guarded"],
    // Spellings of the same places.
    ["/home/u/.hermes/./config.yaml", "guarded"],
    ["/home/u/.hermes//config.yaml", "guarded"],
    ["/home/u/.hermes/sessions/../config.yaml", "guarded"],
    ["/home/u/.hermes/memories/", "guarded"],
    ["/home/u/project/../.hermes/.env", "secret"],
    // The user's login and credentials.
    ["/home/u/.bashrc", "guarded"],
    ["/home/u/.bash_profile", "guarded"],
    ["/home/u/.profile", "guarded"],
    ["/home/u/.zshrc", "guarded"],
    ["/home/u/.zshenv", "guarded"],
    ["/home/u/.config/fish/config.fish", "guarded"],
    ["/home/u/.config/autostart/x.desktop", "guarded"],
    ["/home/u/.config/systemd/user/evil.service", "guarded"],
    ["/home/u/.local/share/systemd/user/x.service", "guarded"],
    ["/home/u/.gitconfig", "guarded"],
    ["/home/u/Library/LaunchAgents/x.plist", "guarded"],
    ["/home/u/.ssh/authorized_keys", "secret"],
    ["/home/u/.ssh/id_ed25519", "secret"],
    ["/home/u/.ssh/known_hosts", "secret"],
    ["/home/u/.netrc", "secret"],
    ["/home/u/.pgpass", "secret"],
    ["/home/u/.git-credentials", "secret"],
    ["/home/u/.aws/credentials", "secret"],
    ["/home/u/.docker/config.json", "secret"],
    ["/home/u/.kube/config", "secret"],
    ["/home/u/.config/gh/hosts.yml", "secret"],
    // The system.
    ["/etc/passwd", "guarded"],
    ["/etc/hosts", "guarded"],
    ["/etc", "guarded"],
    ["/etc/profile.d/evil.sh", "guarded"],
    ["/etc/shadow", "secret"],
    ["/etc/gshadow", "secret"],
    ["/etc/sudoers", "guarded"],
    ["/etc/sudoers.d/90-agent", "guarded"],
    ["/private/etc/hosts", "guarded"],
    ["/private/etc/sudoers", "guarded"],
    ["/etc/cron.d/job", "guarded"],
    ["/etc/crontab", "guarded"],
    ["/etc/cron.daily/x", "guarded"],
    ["/var/spool/cron/crontabs/u", "guarded"],
    ["/var/spool/anacron/cron.daily", "guarded"],
    ["/var/at/tabs/u", "guarded"],
    ["/usr/lib/cron/tabs/u", "guarded"],
    ["/etc/systemd/system/evil.service", "guarded"],
    ["/lib/systemd/system/ssh.service", "guarded"],
    ["/usr/lib/systemd/system/x.service", "guarded"],
    ["/usr/lib/systemd/user/x.service", "guarded"],
    ["/run/systemd/system/x.service", "guarded"],
    ["/Library/LaunchDaemons/x.plist", "guarded"],
  ])("%s is %s", (path, expected) => {
    expect(level(path)).toBe(expected);
  });

  it.each([
    ["/home/u/.hermes"],
    ["/home/u/.hermes-notes/config.yaml"],
    ["/home/u/.hermes.bak/config.yaml"],
    ["/home/u/project/config.yaml"],
    ["/home/u/project/.env"],
    ["/home/u/project/SOUL.md"],
    ["/home/u/project/.bashrc"],
    ["/home/u/.hermes/sessions/20250101_abc.json"],
    ["/home/u/.hermes/logs/agent.log"],
    ["/home/u/.hermes/batch-workspaces/run/3/out.txt"],
    ["/home/u/.hermes/cache/images/a.png"],
    ["/home/u/.hermes/config.yaml.bak"],
    ["/home/u/.hermes/memories-old/MEMORY.md"],
    ["/home/u/.hermes/skillsets/x"],
    ["/home/u/.hermes/profiles"],
    ["/home/u/.hermes/profiles/work"],
    ["/home/u/.hermes/profiles/work/sessions/x.json"],
    ["/home/u/.hermes/profiles/config.yaml"],
    ["/home/u/.bashrc.d-notes"],
    ["/home/u/.ssh-backup/notes"],
    ["/home/u/.config/other/x"],
    ["/etcetera/x"],
    ["/etc.d/x"],
    ["/var/tmp/x"],
    ["/var/spool/mail/u"],
    ["/tmp/config.yaml"],
    ["/home/other/.bashrc"],
  ])("%s is not protected", (path) => {
    expect(level(path)).toBe("none");
  });

  it("says what the path is, for the model and the user", () => {
    expect(pathProtection("/home/u/.hermes/config.yaml", roots)?.reason).toBe(
      "the Hermes config (config.yaml)",
    );
    expect(pathProtection("/home/u/.hermes/memories/x", roots)?.reason).toMatch(/memory tool/);
    expect(pathProtection("/etc/hosts", roots)?.reason).toMatch(/\/etc/);
  });
});

describe("containsProtected", () => {
  const contains = (path: string) => containsProtected(path, roots)?.level ?? "none";
  it.each([
    ["/", "secret"],
    ["/home", "secret"],
    ["/home/u", "secret"],
    ["/home/u/.hermes", "secret"],
    ["/home/u/.hermes/profiles", "guarded"],
    ["/home/u/.hermes/profiles/work", "secret"],
    ["/home/u/.hermes/skills", "guarded"],
    ["/home/u/.hermes/mcp-tokens", "secret"],
    ["/home/u/.hermes/memories", "guarded"],
    ["/home/u/.ssh", "secret"],
    ["/home/u/.config", "secret"],
    ["/home/u/.local", "guarded"],
    ["/home/u/Library", "guarded"],
    ["/etc", "secret"],
    ["/etc/sudoers.d", "guarded"],
    ["/private", "guarded"],
    ["/var", "guarded"],
    ["/var/spool", "guarded"],
    ["/usr", "guarded"],
    ["/usr/lib", "guarded"],
    ["/run", "guarded"],
  ])("deleting or moving %s as a whole takes a protected path with it (strictest: %s)", (path, expected) => {
    expect(contains(path)).toBe(expected);
  });

  it.each([
    ["/home/u/project"],
    ["/home/u/.hermes/sessions"],
    ["/home/u/.hermes/logs"],
    ["/home/u/.hermes/cache"],
    ["/home/u/.hermes/profiles/work/sessions"],
    ["/home/u/.hermes-notes"],
    ["/home/other"],
    ["/tmp"],
    ["/var/tmp"],
    ["/etcetera"],
  ])("%s holds nothing protected", (path) => {
    expect(contains(path)).toBe("none");
  });
});

describe("guardRoots", () => {
  it("includes the user's home, HERMES_HOME, the default ~/.hermes and, for a profile, its parent home", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "hermes-roots-")));
    const user = join(base, "user");
    const got = guardRoots(join(user, ".hermes", "profiles", "work"), { HOME: user });
    expect(got.homes).toContain(user);
    expect(got.hermesHomes).toEqual(
      expect.arrayContaining([join(user, ".hermes", "profiles", "work"), join(user, ".hermes")]),
    );
    // A profile's own config is protected as a profile entry, and the parent home's too.
    expect(pathProtection(join(user, ".hermes", "config.yaml"), got)?.level).toBe("guarded");
    expect(pathProtection(join(user, ".hermes", "profiles", "work", "SOUL.md"), got)?.level).toBe("guarded");
  });

  it("adds the resolved form of a symlinked home, so either spelling is caught", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "hermes-roots-")));
    mkdirSync(join(base, "real-home"));
    symlinkSync(join(base, "real-home"), join(base, "home-link"));
    const got = guardRoots(join(base, "home-link"), { HOME: join(base, "user") });
    expect(got.hermesHomes).toEqual(
      expect.arrayContaining([join(base, "home-link"), join(base, "real-home")]),
    );
    expect(pathProtection(join(base, "real-home", "config.yaml"), got)?.level).toBe("guarded");
  });
});

describe("guardPath and realPathOf through symlinks", () => {
  function tree() {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "hermes-guard-")));
    const home = join(base, "home", ".hermes");
    const work = join(base, "work");
    mkdirSync(join(home, "memories"), { recursive: true });
    mkdirSync(work);
    writeFileSync(join(home, "config.yaml"), "model: x\n");
    writeFileSync(join(home, ".env"), "K=v\n");
    const r = guardRoots(home, { HOME: join(base, "home") });
    return { base, home, work, r };
  }

  it("catches a link to config.yaml, a link to .env and a chain of relative links", () => {
    const t = tree();
    symlinkSync(join(t.home, "config.yaml"), join(t.work, "cfg"));
    symlinkSync(join(t.home, ".env"), join(t.work, "env"));
    symlinkSync("../home/.hermes/config.yaml", join(t.work, "rel"));
    symlinkSync("rel", join(t.work, "chain"));
    expect(guardPath(join(t.work, "cfg"), t.r)?.level).toBe("guarded");
    expect(guardPath(join(t.work, "env"), t.r)?.level).toBe("secret");
    expect(guardPath(join(t.work, "chain"), t.r)?.reason).toMatch(/config\.yaml/);
    expect(pathProtection(join(t.work, "cfg"), t.r)).toBeUndefined();
  });

  it("follows a dangling link to where a write would create the file", () => {
    const t = tree();
    symlinkSync(join(t.home, "SOUL.md"), join(t.work, "soul"));
    symlinkSync(join(t.home, "cron", "jobs.json"), join(t.work, "jobs"));
    expect(realPathOf(join(t.work, "soul"))).toBe(join(t.home, "SOUL.md"));
    expect(guardPath(join(t.work, "soul"), t.r)?.level).toBe("guarded");
    expect(guardPath(join(t.work, "jobs"), t.r)?.reason).toMatch(/cron/);
  });

  it("catches a symlinked parent folder, and a protected link name pointing anywhere", () => {
    const t = tree();
    symlinkSync(t.home, join(t.work, "link-dir"));
    expect(guardPath(join(t.work, "link-dir", "config.yaml"), t.r)?.level).toBe("guarded");
    expect(guardPath(join(t.work, "link-dir", "memories", "new.md"), t.r)?.level).toBe("guarded");
    expect(guardPath(join(t.work, "link-dir", ".env"), t.r)?.level).toBe("secret");
    expect(guardPath(join(t.work, "link-dir", "sessions", "s.json"), t.r)).toBeUndefined();
    // config.yaml itself turned into a link to a harmless file is still config.yaml.
    writeFileSync(join(t.work, "harmless.txt"), "");
    symlinkSync(join(t.work, "harmless.txt"), join(t.home, "SOUL.md"));
    expect(guardPath(join(t.home, "SOUL.md"), t.r)?.level).toBe("guarded");
  });

  it("leaves ordinary paths and links alone, and survives a symlink loop", () => {
    const t = tree();
    writeFileSync(join(t.work, "a.txt"), "");
    symlinkSync(join(t.work, "a.txt"), join(t.work, "b.txt"));
    expect(guardPath(join(t.work, "b.txt"), t.r)).toBeUndefined();
    expect(guardPath(join(t.work, "new", "deep", "file.txt"), t.r)).toBeUndefined();
    symlinkSync("loop2", join(t.work, "loop1"));
    symlinkSync("loop1", join(t.work, "loop2"));
    expect(guardPath(join(t.work, "loop1"), t.r)).toBeUndefined();
  });
});
