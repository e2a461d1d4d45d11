/**
 * Who is on the other end of an accepted Unix socket, on Linux, without a native addon.
 *
 * Node exposes no SO_PEERCRED, so the accepted socket is lent (as fd 3) to a short helper that
 * asks the kernel: perl (Essential on Debian and Ubuntu), else python3. When neither runs, `ss`
 * (iproute2) pairs the socket's inode with its peer's through the kernel's socket diagnostics and
 * /proc/<pid>/fd names the process. The kernel records the pid at connect(), so a client cannot
 * claim another's. Everything here fails closed: any doubt answers `undefined`.
 *
 * `descendsFrom` walks /proc/<pid>/stat parent links. A process that has already exited, or one
 * that cannot be read, is reported as unknown, never as a stranger.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { Socket } from "node:net";

const HELPER_TIMEOUT_MS = 5000;

/** The ways of asking, in the order tried. */
export type PeerLookup = "perl" | "python3" | "ss";
export const PEER_LOOKUPS: readonly PeerLookup[] = ["perl", "python3", "ss"];

const PERL = [
  "-MSocket",
  "-e",
  'open(my $s, "+<&=3") or exit 2; my $c = getsockopt($s, SOL_SOCKET, SO_PEERCRED) or exit 3; print unpack("l", $c);',
];
const PYTHON = [
  "-c",
  "import socket,struct\ns=socket.socket(fileno=3)\nprint(struct.unpack('3i',s.getsockopt(socket.SOL_SOCKET,socket.SO_PEERCRED,12))[0],end='')\ns.detach()",
];

/** Runs `command` with the socket as fd 3; its stdout as a pid, or undefined. */
function askHelper(command: string, args: readonly string[], socket: Socket): Promise<number | undefined> {
  return new Promise((resolve) => {
    let out = "";
    let settled = false;
    const done = (pid: number | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Lending a socket to a child stops Node reading it: read on, or later requests would hang.
      if (!socket.destroyed) socket.resume();
      resolve(pid);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, [...args], {
        stdio: ["ignore", "pipe", "ignore", socket],
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", LC_ALL: "C" },
      });
    } catch {
      resolve(undefined);
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      done(undefined);
    }, HELPER_TIMEOUT_MS);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.on("error", () => done(undefined));
    child.on("close", (code) => {
      const pid = Number(out.trim());
      done(code === 0 && Number.isInteger(pid) && pid > 0 ? pid : undefined);
    });
  });
}

/** The socket's file descriptor in this process (Node keeps it on the internal handle). */
function socketFd(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

function socketInode(link: string): string | undefined {
  return /^socket:\[(\d+)\]$/.exec(link)?.[1];
}

/** The pid holding socket `inode` (other than this process), by /proc/<pid>/fd. */
export function pidHoldingSocket(inode: string, except = process.pid): number | undefined {
  const target = `socket:[${inode}]`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === except) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${entry}/fd/${fd}`) === target) return Number(entry);
      } catch {
        // The descriptor closed while we looked.
      }
    }
  }
  return undefined;
}

/** The peer's pid through `ss -x` (the kernel's socket diagnostics pair the inodes). */
function askSs(socket: Socket): Promise<number | undefined> {
  const fd = socketFd(socket);
  if (fd === undefined) return Promise.resolve(undefined);
  let own: string | undefined;
  try {
    own = socketInode(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return Promise.resolve(undefined);
  }
  if (!own) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let out = "";
    const child = spawn("ss", ["-xan"], { stdio: ["ignore", "pipe", "ignore"], env: { LC_ALL: "C" } });
    const timer = setTimeout(() => child.kill("SIGKILL"), HELPER_TIMEOUT_MS);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.on("error", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on("close", () => {
      clearTimeout(timer);
      // "u_str ESTAB 0 0 /home/me/.hermes/gateway.sock 5502394 * 5502395"
      for (const line of out.split("\n")) {
        const cols = line.trim().split(/\s+/);
        const at = cols.indexOf(own as string);
        if (at < 0 || cols[at + 1] !== "*") continue;
        const peer = cols[at + 2];
        if (peer && /^\d+$/.test(peer) && peer !== "0") {
          resolve(pidHoldingSocket(peer));
          return;
        }
      }
      resolve(undefined);
    });
  });
}

/**
 * The pid of the process that connected `socket` (an accepted Unix socket), or undefined when no
 * way of asking the kernel works here.
 */
export async function unixPeerPid(
  socket: Socket,
  ways: readonly PeerLookup[] = PEER_LOOKUPS,
): Promise<number | undefined> {
  if (process.platform !== "linux") return undefined;
  for (const way of ways) {
    const pid =
      way === "perl"
        ? await askHelper("perl", PERL, socket)
        : way === "python3"
          ? await askHelper("python3", PYTHON, socket)
          : await askSs(socket);
    if (pid !== undefined) return pid;
  }
  return undefined;
}

export interface ProcessIds {
  ppid: number;
  /** Process group and session: inherited by children, kept when a child is orphaned. */
  pgrp: number;
  sid: number;
}

/** The parent, process group and session of `pid` from /proc/<pid>/stat; undefined when unreadable. */
export function processIds(pid: number): ProcessIds | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and ")"; it ends at the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [ppid, pgrp, sid] = [fields[1], fields[2], fields[3]].map(Number) as [number, number, number];
  if (![ppid, pgrp, sid].every((n) => Number.isInteger(n) && n >= 0)) return undefined;
  return { ppid, pgrp, sid };
}

/** The parent pid of `pid`, or undefined when it cannot be read. */
export function parentPid(pid: number): number | undefined {
  return processIds(pid)?.ppid;
}

/**
 * Whether `pid` runs under `ancestor` (a child, grandchild...): true, false, or undefined when the
 * chain cannot be read (the process exited, /proc is hidden).
 */
export function descendsFrom(pid: number, ancestor: number): boolean | undefined {
  let current = pid;
  for (let hops = 0; hops < 4096; hops++) {
    const parent = parentPid(current);
    if (parent === undefined) return undefined;
    if (parent === ancestor) return true;
    if (parent <= 1) return false;
    current = parent;
  }
  return undefined;
}
