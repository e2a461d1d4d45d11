import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvIsolation } from "../../../src/environments/types.js";
import { analyseInEnvironment, usesDockerSocket } from "../../../src/tools/approval/environment.js";
import { guardRoots } from "../../../src/tools/approval/protected-paths.js";
import type { AnalysisContext } from "../../../src/tools/approval/types.js";
import { useEnvironment } from "../../../src/tools/environment.js";
import { guardWrite, hostTargetOf } from "../../../src/tools/file/write-guard.js";
import { terminalTool } from "../../../src/tools/terminal/terminal.js";
import type { ApprovalRequest } from "../../../src/tools/types.js";
import { fakeEnvironment } from "../../support/fake-environment.js";
import { makeToolContext } from "../../support/tool-context.js";

const HOST_HOME = "/home/me";
const HERMES = "/home/me/.hermes";
const PROJECT = "/home/me/proj";

function ctx(cwd: string): AnalysisContext {
  return {
    cwd,
    home: "/root",
    hermesHome: HERMES,
    roots: guardRoots(HERMES, { HOME: HOST_HOME }),
    // Pure: nothing of the test machine's filesystem is consulted.
    realPath: (p) => p,
  };
}

const bare: EnvIsolation = { isolation: "isolated", mounts: [], dockerSocket: false };
const mounted: EnvIsolation = {
  isolation: "isolated",
  mounts: [
    { hostPath: PROJECT, envPath: "/workspace", readOnly: false },
    { hostPath: HERMES, envPath: "/hermes", readOnly: false },
  ],
  dockerSocket: false,
};
const socket: EnvIsolation = { ...bare, dockerSocket: true };

function judge(command: string, isolation: EnvIsolation, cwd = "/workspace") {
  return analyseInEnvironment(command, ctx(cwd), isolation);
}

describe("approval in an isolated environment without host mounts", () => {
  it.each([
    "rm -rf /tmp/build",
    "rm -rf node_modules dist",
    "pkill -9 python",
    "killall -9 node",
    "systemctl stop nginx",
    "chmod -R 777 /srv",
    "git reset --hard",
    "echo x > /etc/hosts",
    "echo 'export X=1' >> ~/.bashrc",
  ])("asks nothing for %s: it endangers only the container", (command) => {
    expect(judge(command, bare).dangerous).toBe(false);
  });

  it.each(["rm -rf /", "rm -rf --no-preserve-root /", ":(){ :|:& };:", "dd if=/dev/zero of=/dev/sda"])(
    "still refuses the hardline %s",
    (command) => {
      const v = judge(command, bare);
      expect(v.dangerous).toBe(true);
      expect(v.hardline).toBe(true);
    },
  );

  it("refuses kill -9 -1 (hardline) even there", () => {
    expect(judge("kill -9 -1", bare).hardline).toBe(true);
  });

  it("still asks about what reaches beyond the machine (a force push)", () => {
    expect(judge("git push --force origin main", bare).patternKey).toBe("git_force_push");
  });
});

describe("approval with host directories mounted", () => {
  it.each([
    ["rm -rf /workspace/src", "a mounted tree by its path"],
    ["rm -rf src", "a relative path in the mounted cwd"],
    ["cd /tmp && rm -rf ../workspace/src", "a path that walks back into the mount"],
    ["ln -s /workspace /tmp/w; rm -rf /tmp/w/", "a symlink into the mount made by the same command"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${W}, not a template placeholder
    ["W=/work; rm -rf ${W}space/src", "a path assembled from variables"],
    ["find /workspace -delete", "find -delete"],
    ["git clean -fdx", "git clean in the mounted repository"],
  ])("asks about %s (%s)", (command) => {
    const v = judge(command, mounted);
    expect(v.dangerous).toBe(true);
  });

  it("refuses deleting the mount root outright", () => {
    const v = judge("rm -rf /workspace", mounted);
    expect(v.dangerous).toBe(true);
  });

  it("judges a mounted Hermes home by its host path: protected", () => {
    const v = judge("echo 'model: x' > /hermes/config.yaml", mounted);
    expect(v.dangerous).toBe(true);
    expect(v.protectedPath).toBe(true);
  });

  it("drops findings about the container's own processes", () => {
    expect(judge("pkill -9 python", mounted).dangerous).toBe(false);
    expect(judge("systemctl stop nginx", mounted).dangerous).toBe(false);
  });

  it("judges the whole command as on the host when it touches network policy", () => {
    expect(judge("pkill -9 python", bare).dangerous).toBe(false);
    expect(judge("iptables -F; pkill -9 python", bare).dangerous).toBe(true);
  });
});

describe("approval with the docker socket mounted", () => {
  it.each([
    "docker run --rm -v /:/host alpine rm -rf /host/home",
    "d''ocker ps",
    '"doc"ker run -it --privileged alpine',
    "d\\ocker ps",
    "$'\\x64ocker' ps",
    "curl --unix-socket /var/run/docker.sock http://localhost/containers/json",
    "DOCKER_HOST=unix:///run/docker.sock python3 deploy.py",
    "podman run alpine",
  ])("asks about %s", (command) => {
    const v = judge(command, socket, "/root");
    expect(v.dangerous).toBe(true);
    expect(v.findings.map((f) => f.key)).toContain("docker_socket");
  });

  it("judges everything else as on the host too (the socket is root on the host)", () => {
    expect(judge("pkill -9 python", socket, "/root").dangerous).toBe(true);
    expect(judge("ls -la", socket, "/root").dangerous).toBe(false);
  });

  it("does not mistake look-alikes for the engine", () => {
    expect(usesDockerSocket("cat dockerfile-notes.txt")).toBe(false);
    expect(usesDockerSocket("ls mydocker")).toBe(false);
  });
});

describe("approval on the host (local, ssh)", () => {
  it("is the analyser's verdict unchanged", () => {
    const host: EnvIsolation = { isolation: "host", mounts: [], dockerSocket: false };
    expect(judge("pkill -9 python", host).dangerous).toBe(true);
    expect(judge("rm -rf /tmp/build", host).dangerous).toBe(true);
  });
});

describe("the terminal tool in an isolated environment (run for real)", () => {
  const disposers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const d of disposers.splice(0)) await d();
  });

  function setup(mountCwd: boolean) {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-envapproval-")));
    mkdirSync(join(cwd, "build"));
    writeFileSync(join(cwd, "build", "out.o"), "x");
    const env = fakeEnvironment({
      cwd,
      mounts: mountCwd ? [{ hostPath: cwd, envPath: cwd, readOnly: false }] : [],
    });
    const tool = makeToolContext({ cwd });
    useEnvironment(tool.runtime, env);
    disposers.push(() => tool.runtime.dispose());
    return { cwd, tool };
  }

  it("runs a recursive delete of a container path without asking", async () => {
    const { cwd, tool } = setup(false);
    const out = (await terminalTool.handler({ command: "rm -rf build" }, tool)) as string;
    expect(out).toContain("exit code 0");
    expect(tool.approvals).toHaveLength(0);
    expect(existsSync(join(cwd, "build"))).toBe(false);
  });

  it("asks before deleting in the mounted cwd, and a denial leaves it in place", async () => {
    const { cwd, tool } = setup(true);
    await expect(terminalTool.handler({ command: "rm -rf build" }, tool)).rejects.toThrow(/denied/);
    expect(tool.approvals.map((a: ApprovalRequest) => a.patternKey)).toContain("recursive_delete");
    expect(existsSync(join(cwd, "build", "out.o"))).toBe(true);
  });
});

describe("the write guard in an isolated environment", () => {
  it("maps a mounted path to the host path behind it, following the environment's symlinks", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-envguard-")));
    const hostHermes = join(root, "host-hermes");
    const envDir = join(root, "env");
    mkdirSync(hostHermes);
    mkdirSync(envDir);
    // In the environment, /…/env/h is where the host's Hermes home is mounted; a link elsewhere points into it.
    const env = fakeEnvironment({
      cwd: envDir,
      mounts: [{ hostPath: hostHermes, envPath: join(envDir, "h"), readOnly: false }],
    });
    mkdirSync(join(envDir, "h"));
    symlinkSync(join(envDir, "h"), join(envDir, "sneaky"));
    expect(await hostTargetOf(join(envDir, "sneaky", "config.yaml"), env)).toBe(
      join(hostHermes, "config.yaml"),
    );
    expect(await hostTargetOf(join(envDir, "elsewhere.txt"), env)).toBeUndefined();

    const tool = makeToolContext({ cwd: envDir, home: hostHermes });
    await expect(
      guardWrite(tool, join(envDir, "sneaky", "config.yaml"), "write_file", undefined, env),
    ).rejects.toThrow(/Not written/);
    expect(tool.approvals).toHaveLength(1);
    await guardWrite(tool, join(envDir, "notes.txt"), "write_file", undefined, env);
    expect(tool.approvals).toHaveLength(1);
  });

  it("needs no guard for container paths when nothing is mounted", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-envguard-")));
    const env = fakeEnvironment({ cwd });
    expect(await hostTargetOf("/root/.bashrc", env)).toBeUndefined();
  });
});
