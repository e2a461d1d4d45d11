/**
 * Docker for tests: makes sure dockerd (Debian's docker.io) runs — starting it when we are root
 * and it does not — and builds the test image once per machine. No registry is reachable, so the
 * image is a `docker import` of a rootfs made here: Debian's busybox-static for the coreutils,
 * this host's bash with the libraries ldd names, an /etc/os-release naming a distro no host has
 * ("Hermes Test Linux", so `cat /etc/os-release` proves where a command ran), and /etc/passwd
 * with root and a user `hermes` (uid 1000).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const TEST_IMAGE = "hermes-test-distro:1";
export const TEST_DISTRO = "Hermes Test Linux";

function docker(
  args: string[],
  input?: Buffer | string,
  binary: "docker" | "podman" = "docker",
): { ok: boolean; out: string; err: string } {
  const r = spawnSync(binary, args, { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { ok: r.status === 0, out: r.stdout ?? "", err: `${r.stderr ?? ""}${r.error?.message ?? ""}` };
}

function which(program: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${program}`]).status === 0;
}

function daemonUp(): boolean {
  return docker(["info", "--format", "{{.ServerVersion}}"]).ok;
}

let ready: string | undefined | null = null;

/**
 * Undefined when docker is usable (the daemon runs, the test image exists); otherwise why the
 * docker tests are skipped. Only a missing docker.io is a reason to skip; a daemon that will not
 * start is an error.
 */
export async function dockerReady(): Promise<string | undefined> {
  if (ready !== null) return ready;
  ready = await prepare();
  return ready;
}

async function prepare(): Promise<string | undefined> {
  if (!which("docker") || !which("dockerd")) return "docker.io is not installed (apt-get install docker.io)";
  if (!daemonUp()) {
    if (process.getuid?.() !== 0) return "dockerd is not running and these tests are not root to start it";
    const log = join(tmpdir(), "hermes-test-dockerd.log");
    const child = spawn("sh", ["-c", `exec dockerd >>${log} 2>&1`], { detached: true, stdio: "ignore" });
    child.unref();
    const deadline = Date.now() + 60_000;
    while (!daemonUp()) {
      if (Date.now() > deadline) throw new Error(`dockerd did not come up within 60 s; see ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  ensureTestImage();
  return undefined;
}

/**
 * podman's own ulimit defaults exceed what this (nested, unprivileged) host lets a container
 * raise; these are the limits the podman tests ask for, through terminal.docker_extra_args.
 */
export const PODMAN_ULIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"];

let podmanState: string | undefined | null = null;

/**
 * Undefined when podman is usable with the test image (imported into podman's own store);
 * otherwise why the podman tests are skipped: podman or catatonit (its --init) is not installed.
 */
export function podmanReady(): string | undefined {
  if (podmanState !== null) return podmanState;
  if (!which("podman")) podmanState = "podman is not installed (apt-get install podman catatonit)";
  else if (!spawnSync("sh", ["-c", "test -x /usr/libexec/podman/catatonit || command -v catatonit"]).status) {
    ensureTestImage(TEST_IMAGE, "podman");
    podmanState = undefined;
  } else podmanState = "catatonit (podman's --init) is not installed (apt-get install catatonit)";
  return podmanState;
}

/** Builds the test image unless the tag exists (one build per machine and CLI). */
export function ensureTestImage(tag = TEST_IMAGE, binary: "docker" | "podman" = "docker"): void {
  if (docker(["image", "inspect", tag], undefined, binary).ok) return;
  const root = mkdtempSync(join(tmpdir(), "hermes-rootfs-"));
  try {
    for (const d of [
      "bin",
      "sbin",
      "usr/bin",
      "usr/sbin",
      "etc",
      "tmp",
      "root",
      "home/hermes",
      "workspace",
      "proc",
      "dev",
      "sys",
    ]) {
      mkdirSync(join(root, d), { recursive: true });
    }
    chmodSync(join(root, "tmp"), 0o1777);
    copyFileSync("/bin/busybox", join(root, "bin/busybox"));
    chmodSync(join(root, "bin/busybox"), 0o755);
    const applets = execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
    for (const applet of applets) {
      if (applet === "busybox" || applet === "bash" || applet === "sh") continue;
      symlinkSync("busybox", join(root, "bin", applet));
    }
    symlinkSync("busybox", join(root, "bin/sh"));
    // bash and the libraries it links (with the loader), at the same paths as here.
    copyFileSync("/bin/bash", join(root, "bin/bash"));
    chmodSync(join(root, "bin/bash"), 0o755);
    const ldd = execFileSync("ldd", ["/bin/bash"], { encoding: "utf8" });
    for (const m of ldd.matchAll(/(\/\S+\.so[^\s]*)/g)) {
      const lib = m[1] as string;
      mkdirSync(join(root, dirname(lib)), { recursive: true });
      copyFileSync(lib, join(root, lib));
    }
    writeFileSync(
      join(root, "etc/os-release"),
      `NAME="${TEST_DISTRO}"\nID=hermestest\nPRETTY_NAME="${TEST_DISTRO} 1"\nVERSION_ID="1"\n`,
    );
    writeFileSync(
      join(root, "etc/passwd"),
      "root:x:0:0:root:/root:/bin/bash\nhermes:x:1000:1000:hermes:/home/hermes:/bin/bash\nnobody:x:65534:65534:nobody:/:/bin/sh\n",
    );
    writeFileSync(join(root, "etc/group"), "root:x:0:\nhermes:x:1000:\nnogroup:x:65534:\n");
    const tar = spawnSync("tar", ["-C", root, "-c", "."], { maxBuffer: 512 * 1024 * 1024 });
    if (tar.status !== 0) throw new Error(`tar of the test rootfs failed: ${tar.stderr}`);
    const imported = docker(
      [
        "import",
        "--change",
        "ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "--change",
        'CMD ["/bin/sh"]',
        "-",
        tag,
      ],
      tar.stdout,
      binary,
    );
    if (!imported.ok) throw new Error(`${binary} import of the test image failed: ${imported.err}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Removes containers a test left behind (by label). */
export function removeTestContainers(label: string): void {
  const ids = docker(["ps", "-aq", "--filter", `label=${label}`])
    .out.split("\n")
    .filter(Boolean);
  if (ids.length > 0) docker(["rm", "-f", ...ids]);
}
