/**
 * Finding and signalling the processes below a given pid (POSIX only). Used to stop everything a
 * shell command started without killing the shell itself. Linux reads /proc; elsewhere `ps`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Linux only: the state letter from /proc (`Z` for a zombie waiting to be reaped). */
  state?: string;
}

/** Snapshot of every visible process. Empty when the table cannot be read. */
export function listProcesses(): ProcessInfo[] {
  if (process.platform === "linux") {
    try {
      return listFromProc();
    } catch {
      // fall through to ps
    }
  }
  try {
    const out = execFileSync("ps", ["-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter((f) => f.length === 3 && f.every(Number.isFinite))
      .map(([pid, ppid, pgid]) => ({ pid: pid as number, ppid: ppid as number, pgid: pgid as number }));
  } catch {
    return [];
  }
}

function listFromProc(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readStat("/proc", Number(entry));
    if (info) out.push(info);
  }
  return out;
}

/** One process's line of `<proc>/<pid>/stat`; undefined when it exited while we looked. */
function readStat(proc: string, pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${proc}/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may contain spaces or ')'; fields follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), state: fields[0] };
}

/**
 * Linux: the processes below `root`, found through each thread's `task/<tid>/children` list, so
 * only the subtree's own files are read instead of one per process on the machine. The same
 * parent links the full table gives (a process forking while it is read may be missed by either).
 * Undefined when the kernel has no children lists (built without CONFIG_PROC_CHILDREN).
 */
export function subtreeFromProc(
  root: number,
  skipGroups: ReadonlySet<number> = new Set(),
  proc = "/proc",
): ProcessInfo[] | undefined {
  if (!existsSync(`${proc}/${root}/task/${root}/children`)) {
    // A root that is gone has no subtree; a live one without the file means no support.
    return existsSync(`${proc}/${root}/task/${root}`) ? undefined : [];
  }
  const childrenOf = (pid: number): number[] => {
    let tasks: string[];
    try {
      tasks = readdirSync(`${proc}/${pid}/task`);
    } catch {
      return []; // exited
    }
    const out: number[] = [];
    for (const tid of tasks) {
      let text: string;
      try {
        text = readFileSync(`${proc}/${pid}/task/${tid}/children`, "utf8");
      } catch {
        continue; // the thread ended
      }
      for (const word of text.split(/\s+/)) if (/^\d+$/.test(word)) out.push(Number(word));
    }
    return out;
  };
  const out: ProcessInfo[] = [];
  const queue = [root];
  const seen = new Set<number>([root]);
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const pid of childrenOf(parent)) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      const info = readStat(proc, pid);
      if (!info || skipGroups.has(info.pgid)) continue;
      out.push(info);
      queue.push(pid);
    }
  }
  return out;
}

/**
 * Every descendant of `root` (not `root` itself), children before grandchildren. Subtrees whose
 * process group is in `skipGroups` are left out entirely. Without a `table`, Linux walks only the
 * subtree where the kernel lists children (`subtreeFromProc`); elsewhere the whole table is read.
 */
export function descendants(
  root: number,
  given?: ProcessInfo[],
  skipGroups: ReadonlySet<number> = new Set(),
): ProcessInfo[] {
  if (given === undefined && process.platform === "linux") {
    const walked = subtreeFromProc(root, skipGroups);
    if (walked) return walked;
  }
  const table = given ?? listProcesses();
  const byParent = new Map<number, ProcessInfo[]>();
  for (const p of table) {
    const list = byParent.get(p.ppid) ?? [];
    list.push(p);
    byParent.set(p.ppid, list);
  }
  const out: ProcessInfo[] = [];
  const queue = [root];
  const seen = new Set<number>([root]);
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const child of byParent.get(parent) ?? []) {
      if (seen.has(child.pid) || skipGroups.has(child.pgid)) continue;
      seen.add(child.pid);
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Sends `signal` to a pid or, when negative, a process group; false when it no longer exists. */
export function trySignal(target: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process with this pid exists (zombies count as existing until reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether any process, a zombie included, is in process group `pgid` (one signal 0). */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether any live (non-zombie) process is in one of `groups`. Without a `table`, groups that
 * hold no process at all are answered by a signal 0 each, and the process table (a file read per
 * process on the machine) is read only when one still holds some, to leave zombies out.
 */
export function groupsAlive(groups: Iterable<number>, table?: ProcessInfo[]): boolean {
  const wanted = new Set(groups);
  if (table === undefined) {
    for (const g of wanted) if (!groupExists(g)) wanted.delete(g);
    if (wanted.size === 0) return false;
  }
  if (wanted.size === 0) return false;
  const processes = table ?? listProcesses();
  if (processes.length === 0) return [...wanted].some((g) => trySignal(-g, 0));
  return processes.some((p) => wanted.has(p.pgid) && p.state !== "Z");
}

/** The command line of a process (Linux), for telling the user what was stopped; "" when unknown. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return "";
  }
}
