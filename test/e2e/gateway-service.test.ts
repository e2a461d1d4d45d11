/**
 * `hermes gateway install|uninstall|list` through the built CLI, in a fake HOME. There is no
 * systemd running here, so the unit file's content is what is tested: upstream's name, the
 * command it runs, the home, and `systemd-analyze verify` (when installed) accepting it. The
 * launchd property list is checked as rendered.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { launchdPlist, systemdUnit } from "../../src/cli/commands/gateway-service.js";
import { runHermes, tempHome } from "../support/cli.js";

const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

function verify(path: string): { status: number | null; output: string } {
  const r = spawnSync("systemd-analyze", ["verify", path], { encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("hermes gateway as a service", () => {
  it("install writes a user unit per profile that systemd-analyze accepts; list and uninstall find it", async () => {
    const { home, cwd } = tempHome();
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    // HERMES_HOME is the fake HOME here; a named profile lives under it.
    mkdirSync(join(home, ".hermes", "profiles", "work"), { recursive: true });
    const installed = await runHermes(["gateway", "install"], { home, cwd, env });
    expect(installed.code, installed.stderr).toBe(0);
    const unitPath = join(home, ".config", "systemd", "user", "hermes-gateway.service");
    expect(installed.stdout).toContain(unitPath);
    expect(installed.stderr).toMatch(
      /systemctl --user daemon-reload && systemctl --user enable --now hermes-gateway\.service/,
    );
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toMatch(/^ExecStart="[^"]*node[^"]*" "[^"]*" "gateway" "run"$/m);
    expect(unit).toContain(`Environment="HERMES_HOME=${home}"`);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    expect(unit).toMatch(/^WantedBy=default\.target$/m);
    if (hasAnalyze) expect(verify(unitPath)).toMatchObject({ status: 0 });

    const work = await runHermes(["-p", "work", "gateway", "install"], {
      home,
      cwd,
      env: { ...env, HOME: home },
    });
    // `-p work` resolves against $HOME/.hermes/profiles.
    expect(work.code, work.stderr).toBe(0);
    const workUnit = join(home, ".config", "systemd", "user", "hermes-gateway-work.service");
    expect(readFileSync(workUnit, "utf8")).toMatch(/"-p" "work" "gateway" "run"/);
    if (hasAnalyze) expect(verify(workUnit)).toMatchObject({ status: 0 });

    const listed = await runHermes(["gateway", "list"], { home, cwd, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^default\s+stopped\s+\[user service\]/m);
    expect(listed.stdout).toMatch(/^work\s+stopped\s+\[user service\]/m);

    const removed = await runHermes(["gateway", "uninstall"], { home, cwd, env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(unitPath)).toBe(false);
    expect(existsSync(workUnit)).toBe(true);
    const again = await runHermes(["gateway", "uninstall"], { home, cwd, env });
    expect(again.stdout).toMatch(/No gateway service is installed/);
  }, 60_000);

  it("--system without root is refused with the fix, and writes nothing", async () => {
    if (process.getuid?.() === 0) return;
    const { home, cwd } = tempHome();
    const r = await runHermes(["gateway", "install", "--system"], { home, cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run it as root \(sudo hermes gateway install --system\)/);
  });

  it("renders a system unit and a launchd plist with quoting that survives odd paths", () => {
    const spec = {
      home: "/srv/her mes/100%",
      profile: "ops",
      node: "/usr/bin/node",
      bin: '/opt/hermes/bin/"hermes"',
      path: "/usr/bin:/bin",
      system: true,
      user: "hermes",
    };
    const unit = systemdUnit(spec);
    expect(unit).toMatch(/^User=hermes$/m);
    expect(unit).toMatch(/^WantedBy=multi-user\.target$/m);
    expect(unit).toContain(
      'ExecStart="/usr/bin/node" "/opt/hermes/bin/\\"hermes\\"" "-p" "ops" "gateway" "run"',
    );
    expect(unit).toContain('Environment="HERMES_HOME=/srv/her mes/100%%"');
    const plist = launchdPlist({ ...spec, bin: "/opt/a&b/hermes" });
    expect(plist).toContain("<string>ai.hermes.gateway-ops</string>");
    expect(plist).toContain("<string>/opt/a&amp;b/hermes</string>");
    expect(plist).toMatch(
      /<string>-p<\/string>\s*<string>ops<\/string>\s*<string>gateway<\/string>\s*<string>run<\/string>/,
    );
    // Well-formed XML where a parser is at hand.
    const lint = spawnSync("xmllint", ["--noout", "-"], { input: plist });
    if (lint.status !== null && !lint.error) expect(lint.status).toBe(0);
    if (hasAnalyze) {
      // The system unit verifies once its binary exists: render one pointing at this node.
      const dir = tempHome().home;
      const path = join(dir, "hermes-gateway-ops.service");
      execFileSync("sh", ["-c", 'cat > "$1"', "sh", path], {
        input: systemdUnit({ ...spec, node: process.execPath, bin: "/dev/null", home: dir, user: "root" }),
      });
      expect(verify(path)).toMatchObject({ status: 0 });
    }
  });
});
