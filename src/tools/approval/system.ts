/**
 * Checks for commands that act on the system, processes, git history and databases: power
 * (shutdown, reboot, init 0, systemctl poweroff), disks (mkfs, wipefs, partition editors),
 * signals (kill -9 -1, killing Hermes itself), services, git's history-destroying options
 * (abbreviations included), crontab, SQL clients, and `hermes` commands that stop the gateway or
 * rewrite its config.
 */
import { judgePath, unresolvedArgs } from "./effects.js";
import type { Check, Invocation } from "./model.js";
import { GIT_BRANCH_LONG, GIT_CLEAN_LONG, GIT_PUSH_LONG, GIT_RESET_LONG } from "./option-specs.js";
import { resolveLong } from "./options.js";
import type { Finding } from "./types.js";
import type { Field } from "./words.js";

const HERMES_PROCESS = /hermes|gateway|\bnode\b|^node$/i;

function power(what: string): Finding {
  return {
    key: "system_power",
    reason: `${what} shuts down or reboots the machine: never allowed`,
    hardline: true,
  };
}

const shutdownLike: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  if (inv.name === "shutdown" && args.some((a) => a === "-c" || a === "--help")) return;
  if (args.includes("--help") || args.includes("--version")) return;
  inv.out.push(power(inv.name));
};

const initLike: Check = (inv) => {
  const level = inv.args.find((a) => !a.text.startsWith("-"));
  if (!level) return;
  if (level.dynamic) unresolvedArgs(inv, [level]);
  if (/^[06]$/.test(level.text)) inv.out.push(power(`${inv.name} ${level.text}`));
  else if (/^[1sS]$/.test(level.text))
    inv.out.push({
      key: "system_runlevel",
      reason: `${inv.name} ${level.text} drops the machine to single-user mode`,
    });
};

const POWER_VERBS = /^(poweroff|reboot|halt|kexec|soft-reboot)$/;
const POWER_TARGETS = /^(poweroff|reboot|halt|kexec|emergency|rescue)(\.target)?$/;

const systemctl: Check = (inv) => {
  const args = inv.args.filter((a) => !a.text.startsWith("-"));
  const verb = args[0]?.text ?? "";
  const units = args.slice(1).map((a) => a.text);
  if (args.some((a) => a.dynamic)) unresolvedArgs(inv, args);
  if (POWER_VERBS.test(verb) || verb === "emergency" || verb === "rescue") {
    inv.out.push(power(`systemctl ${verb}`));
  } else if (
    /^(isolate|start|restart|reload-or-restart|try-restart)$/.test(verb) &&
    units.some((u) => POWER_TARGETS.test(u))
  ) {
    inv.out.push(power(`systemctl ${verb} ${units.join(" ")}`));
  } else if (/^(suspend|hibernate|hybrid-sleep|suspend-then-hibernate)$/.test(verb)) {
    inv.out.push({ key: "system_power", reason: `systemctl ${verb} suspends the machine` });
  } else if (/^(stop|restart|try-restart|reload-or-restart|disable|mask|kill|isolate)$/.test(verb)) {
    if (units.some((u) => /hermes/i.test(u))) {
      inv.out.push({
        key: "hermes_gateway_stop",
        reason: `systemctl ${verb} ${units.join(" ")} stops Hermes itself`,
      });
    } else
      inv.out.push({
        key: "systemctl_stop",
        reason: `systemctl ${verb} of ${units.join(" ") || "a service"}`,
      });
  }
};

const service: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  if (args.some((a) => /^(stop|restart|force-reload)$/.test(a))) {
    const hermes = args.some((a) => /hermes/i.test(a));
    inv.out.push(
      hermes
        ? { key: "hermes_gateway_stop", reason: `service ${args.join(" ")} stops Hermes itself` }
        : { key: "systemctl_stop", reason: `stopping or restarting the service ${args[0] ?? ""}` },
    );
  }
};

const launchctl: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  if (args[0] === "reboot") inv.out.push(power("launchctl reboot"));
  if (
    /^(unload|stop|bootout|kill|remove|disable)$/.test(args[0] ?? "") &&
    args.some((a) => /hermes/i.test(a))
  ) {
    inv.out.push({ key: "hermes_gateway_stop", reason: `launchctl ${args.join(" ")} stops Hermes itself` });
  }
};

const mkfs: Check = (inv) => {
  if (inv.args.some((a) => a.text === "--help" || a.text === "-V" || a.text === "--version")) return;
  inv.out.push({ key: "mkfs", reason: `${inv.name} erases a filesystem: never allowed`, hardline: true });
};

const partition: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  if (args.some((a) => /^(-l|--list|-s|--show|print|-p|--print|--help|-V|--version)$/.test(a))) return;
  if (args.some((a) => a.startsWith("/dev/"))) {
    inv.out.push({
      key: "partition_table",
      reason: `${inv.name} rewrites a disk's partition table: never allowed`,
      hardline: true,
    });
  } else if (args.length > 0)
    inv.out.push({ key: "partition_table", reason: `${inv.name} edits a partition table` });
};

/** Where a signal's target process ids come from, when they point at Hermes. */
function hermesPid(f: Field, inv: Invocation): boolean {
  if (/\$\{?PPID\b/.test(f.raw)) return true;
  if (!f.dynamic) return false;
  const source = f.raw + [...inv.scope.vars.values()].map((v) => v.source ?? "").join(" ");
  return (
    /pgrep|pidof|gateway\.pid|hermes|gateway/i.test(f.raw) ||
    (/\$\{?\w+/.test(f.raw) &&
      /pgrep[^|;]*(hermes|gateway|node)|pidof\s+(node|hermes)|gateway\.pid/i.test(source))
  );
}

const kill: Check = (inv) => {
  const args = inv.args;
  if (args.some((a) => /^-(l|L)$|^--(list|table)$/.test(a.text))) return;
  let signal: string | undefined;
  const pids: Field[] = [];
  let ended = false;
  for (let k = 0; k < args.length; k++) {
    const a = (args[k] as Field).text;
    if (ended) pids.push(args[k] as Field);
    else if (a === "--") ended = true;
    else if (a === "-s" || a === "-n" || a === "--signal") signal = args[++k]?.text ?? "";
    else if (a.startsWith("--signal=")) signal = a.slice(9);
    else if (signal === undefined && pids.length === 0 && /^-[A-Za-z0-9+]+$/.test(a)) signal = a.slice(1);
    else pids.push(args[k] as Field);
  }
  if (inv.argsFromStdin) {
    const via = inv.stdin && inv.stdin.kind !== "text" ? inv.stdin.via : "";
    inv.out.push(
      /hermes|gateway|node/i.test(via)
        ? { key: "kill_hermes", reason: `kill of the processes ${via} lists, which are Hermes's own` }
        : {
            key: "unresolved_args",
            reason: "could not analyse kill: which processes it signals comes from standard input",
          },
    );
  }
  for (const p of pids) {
    if (p.text === "-1") {
      inv.out.push({
        key: "kill_all",
        reason: `kill ${signal ? `-${signal} ` : ""}-1 signals every process the user owns: never allowed`,
        hardline: true,
      });
    } else if (hermesPid(p, inv)) {
      inv.out.push({ key: "kill_hermes", reason: `kill ${p.raw} signals Hermes's own processes` });
    } else if (p.dynamic && /\$\(|`/.test(p.raw)) {
      inv.out.push({
        key: "unresolved_args",
        reason: `could not analyse kill ${p.raw}: which processes it signals is only known at run time`,
      });
    } else if (p.text === "0" || p.text === "-0") {
      inv.out.push({ key: "kill_hermes", reason: "kill 0 signals the shell's whole process group" });
    }
  }
};

const pkill: Check = (inv) => {
  const args = inv.args;
  const force = args.some(
    (a, k) =>
      /^-(9|KILL|SIGKILL)$|^--signal=(9|KILL|SIGKILL)$/i.test(a.text) ||
      (/^(--signal|-s)$/.test(a.text) && /^(9|KILL|SIGKILL)$/i.test(args[k + 1]?.text ?? "")),
  );
  const patterns = args.filter((a) => !a.text.startsWith("-"));
  if (patterns.some((a) => HERMES_PROCESS.test(a.text) || a.dynamic)) {
    inv.out.push({
      key: "kill_hermes",
      reason: `${inv.name} ${patterns.map((p) => p.raw).join(" ")} may kill Hermes itself`,
    });
  }
  if (inv.name === "pkill" && force)
    inv.out.push({ key: "pkill_force", reason: "force-killing processes by name" });
  if (inv.name === "killall") inv.out.push({ key: "killall", reason: "killing every process with a name" });
  if (inv.name === "killall5")
    inv.out.push({
      key: "kill_all",
      reason: "killall5 signals every process: never allowed",
      hardline: true,
    });
};

/** git config keys whose values git runs as programs. */
const GIT_EXEC_KEYS =
  /^(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|.*\.(textconv|clean|smudge|process|command|cmd|helper|program|tool)|diff\.external|sequence\.editor|gpg\..*program|uploadpack\.packobjectshook|protocol\..*\.allow)$/i;

const git: Check = (inv) => {
  const args = inv.args;
  let k = 0;
  while (k < args.length && (args[k] as Field).text.startsWith("-")) {
    const a = (args[k] as Field).text;
    if (a === "-c" || a.startsWith("--config-env")) {
      const kv = a === "-c" ? (args[k + 1]?.text ?? "") : a;
      const key = kv.replace(/^--config-env=?/, "").split("=")[0] ?? "";
      if (GIT_EXEC_KEYS.test(key))
        inv.out.push({ key: "git_config_exec", reason: `git -c ${kv} makes git run a program` });
    }
    k += /^(-C|-c|--git-dir|--work-tree|--namespace|--exec-path|--super-prefix|--config-env)$/.test(a)
      ? 2
      : 1;
  }
  const subField = args[k];
  const sub = subField?.text;
  const rest = args.slice(k + 1);
  if (subField?.dynamic) unresolvedArgs(inv, [subField]);
  const longs = (table: Readonly<Record<string, 0 | 1 | 2>>): Set<string> => {
    const seen = new Set<string>();
    for (const a of rest) {
      if (a.text.startsWith("--"))
        for (const n of resolveLong(a.text.slice(2).split("=")[0] ?? "", table)) seen.add(n);
    }
    return seen;
  };
  const shortHas = (letter: string): boolean =>
    rest.some((a) => /^-[a-zA-Z]+$/.test(a.text) && a.text.includes(letter));
  const risky = () =>
    unresolvedArgs(
      inv,
      rest.filter((a, i) => a.dynamic && !/^(-m|--message|-F|--file)$/.test(rest[i - 1]?.text ?? "")),
    );
  switch (sub) {
    case "reset":
      if (longs(GIT_RESET_LONG).has("hard"))
        inv.out.push({ key: "git_reset_hard", reason: "git reset --hard discards uncommitted work" });
      risky();
      return;
    case "push": {
      const l = longs(GIT_PUSH_LONG);
      if (
        shortHas("f") ||
        l.has("force") ||
        l.has("force-with-lease") ||
        l.has("mirror") ||
        rest.some((a) => /^\+\S/.test(a.text))
      ) {
        inv.out.push({ key: "git_force_push", reason: "git force push rewrites remote history" });
      }
      risky();
      return;
    }
    case "clean": {
      const l = longs(GIT_CLEAN_LONG);
      const dry = shortHas("n") || l.has("dry-run");
      if ((shortHas("f") || l.has("force")) && !dry)
        inv.out.push({ key: "git_clean", reason: "git clean -f deletes untracked files" });
      risky();
      return;
    }
    case "branch": {
      const l = longs(GIT_BRANCH_LONG);
      const del = shortHas("d") || l.has("delete");
      if (shortHas("D") || (del && (shortHas("f") || l.has("force")))) {
        inv.out.push({ key: "git_branch_delete", reason: "git branch -D deletes an unmerged branch" });
      }
      risky();
      return;
    }
    case "config": {
      const scope = rest.find(
        (a) =>
          /^--(global|system)$/.test(a.text) ||
          (a.text.startsWith("--") &&
            ["global", "system"].some((s) => s.startsWith(a.text.slice(2)) && a.text.length > 3)),
      );
      const reading = rest.some((a) =>
        /^(--get|--get-all|--get-regexp|--list|-l|--show-origin|get|list)/.test(a.text),
      );
      if (scope && !reading) {
        inv.out.push({
          key: "protected_write",
          reason: `git config ${scope.text} writes ${scope.text === "--system" ? "/etc/gitconfig" : "the user's git config (~/.gitconfig)"}; only the user can approve changing it`,
          protectedPath: true,
        });
      }
      const key = rest.find((a) => !a.text.startsWith("-"))?.text ?? "";
      if (!reading && GIT_EXEC_KEYS.test(key))
        inv.out.push({ key: "git_config_exec", reason: `git config ${key} makes git run a program` });
      return;
    }
  }
};

const crontab: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  if (
    args.length > 0 &&
    args.every((a) => /^(-l|-u|-T)$/.test(a) || !a.startsWith("-")) &&
    args.includes("-l")
  )
    return;
  inv.out.push({
    key: "protected_write",
    reason: "crontab changes the user's cron table; only the user can approve changing it",
    protectedPath: true,
  });
};

const hermes: Check = (inv) => {
  const args = inv.args.map((a) => a.text);
  const gw = args.indexOf("gateway");
  const verb = gw >= 0 ? args[gw + 1] : undefined;
  if (verb !== undefined && /^(stop|restart|uninstall)$/.test(verb)) {
    inv.out.push({ key: "hermes_gateway_stop", reason: `hermes gateway ${verb} stops the Hermes gateway` });
  }
  // Approving a staged memory or skill write is the user's decision, never the agent's.
  const sub = args.findIndex((a) => a === "memory" || a === "skills");
  const decision = sub >= 0 ? args[sub + 1] : undefined;
  if (decision !== undefined && /^(approve|apply|reject|deny|drop)$/.test(decision)) {
    inv.out.push({
      key: "protected_write",
      reason: `hermes ${args[sub]} ${decision} decides on a write waiting for the user's approval; only the user can run it`,
      protectedPath: true,
    });
  }
  const cfg = args.indexOf("config");
  if (cfg >= 0 && /^(set|edit|unset|reset|migrate)$/.test(args[cfg + 1] ?? "")) {
    inv.out.push({
      key: "protected_write",
      reason: `hermes config ${args[cfg + 1]} changes the Hermes config (config.yaml); only the user can approve changing it`,
      protectedPath: true,
    });
  }
  dashboardCheck(inv, args);
};

/** Flags of `hermes dashboard` that start nothing and print no token. */
const DASHBOARD_READ_ONLY = /^(--status|--hash-password|-h|--help)$/;

/**
 * `hermes dashboard` prints a URL whose token opens the user's config, staged writes, approvals
 * and pairing to whoever holds it, so an agent that started one could approve its own writes
 * through the API: only the user starts it. `--stop` ends the user's dashboard (asked, like
 * stopping the gateway); `--status` and `--hash-password` stay free (neither shows a token).
 */
function dashboardCheck(inv: Invocation, args: readonly string[]): void {
  let i = 0;
  while (i < args.length) {
    const word = args[i] ?? "";
    if (word === "-p" || word === "--profile") i += 2;
    else if (word.startsWith("-")) i += 1;
    else break;
  }
  if (args[i] !== "dashboard") return;
  const flags = args.slice(i + 1);
  if (flags.includes("--stop")) {
    inv.out.push({
      key: "hermes_dashboard_stop",
      reason: "hermes dashboard --stop stops the user's dashboard",
    });
    return;
  }
  if (flags.length > 0 && flags.every((f) => DASHBOARD_READ_ONLY.test(f))) return;
  inv.out.push({
    key: "protected_write",
    reason:
      "hermes dashboard prints a URL whose token can change the config and approve staged writes; only the user can start it",
    protectedPath: true,
  });
}

/**
 * `npx hermes …`, `bunx hermes …`, `pnpm dlx hermes …`: a package runner starting Hermes gets the
 * same checks as `hermes …` (approving staged writes, changing the config, stopping the gateway).
 */
const packageRunner: Check = (inv) => {
  const words = inv.args.map((a) => a.text);
  let i = 0;
  if (inv.name === "pnpm" || inv.name === "yarn") {
    const verb = words.findIndex((w) => !w.startsWith("-"));
    if (verb < 0 || !/^(dlx|exec|run)$/.test(words[verb] ?? "")) return;
    i = verb + 1;
  }
  for (; i < words.length; i++) {
    const word = words[i] ?? "";
    if (word === "-p" || word === "--package" || word === "-c" || word === "--call") {
      i++;
      continue;
    }
    if (word === "--") continue;
    if (word.startsWith("-")) continue;
    break;
  }
  const pkg = (words[i] ?? "").split("/").pop() ?? "";
  if (/^hermes(-agent)?(@.*)?$/.test(pkg)) hermes({ ...inv, args: inv.args.slice(i + 1) });
};

/** SQL that drops, truncates or deletes every row. */
export function checkSql(text: string, out: Finding[]): void {
  if (!/\b(drop|truncate|delete)\b/i.test(text)) return;
  if (/\bdrop\s+(table|database|schema|view|index|user|role)\b/i.test(text))
    out.push({ key: "sql_drop", reason: "SQL DROP" });
  if (/\btruncate\s+(table\s+)?[\w."`[]+/i.test(text))
    out.push({ key: "sql_truncate", reason: "SQL TRUNCATE" });
  for (const statement of text.split(";")) {
    if (/\bdelete\s+from\s+\S+/i.test(statement) && !/\bwhere\b/i.test(statement)) {
      out.push({ key: "sql_delete_all", reason: "SQL DELETE without WHERE" });
      break;
    }
  }
}

export const SQL_CLIENTS = new Set(
  "psql mysql mariadb sqlite3 sqlcmd duckdb clickhouse-client cqlsh".split(" "),
);

const sql: Check = (inv) => {
  checkSql(inv.args.map((a) => a.text).join(" "), inv.out);
  if (inv.stdin?.kind === "text") checkSql(inv.stdin.text, inv.out);
  // sqlite3 on a Hermes state.db with a write statement.
  if (inv.name === "sqlite3") {
    const db = inv.args.find((a) => !a.text.startsWith("-"));
    const text = [
      inv.args.map((a) => a.text).join(" "),
      inv.stdin?.kind === "text" ? inv.stdin.text : "",
    ].join(" ");
    if (db && /\b(insert|update|delete|drop|alter|create|replace|vacuum)\b/i.test(text))
      judgePath(inv, db, "append", { verb: "sqlite3 (writing)" });
  }
};

export const SYSTEM_CHECKS: Readonly<Record<string, Check>> = {
  shutdown: shutdownLike,
  reboot: shutdownLike,
  poweroff: shutdownLike,
  halt: shutdownLike,
  init: initLike,
  telinit: initLike,
  systemctl,
  service,
  launchctl,
  mkfs,
  mke2fs: mkfs,
  mkswap: mkfs,
  wipefs: mkfs,
  mkntfs: mkfs,
  mkdosfs: mkfs,
  blkdiscard: mkfs,
  fdisk: partition,
  sfdisk: partition,
  sgdisk: partition,
  gdisk: partition,
  cfdisk: partition,
  parted: partition,
  kill,
  pkill,
  killall: pkill,
  killall5: pkill,
  git,
  crontab,
  hermes,
  npx: packageRunner,
  bunx: packageRunner,
  pnpx: packageRunner,
  pnpm: packageRunner,
  yarn: packageRunner,
  ...Object.fromEntries([...SQL_CLIENTS].map((n) => [n, sql])),
};

/** Checks by name pattern (mkfs.ext4, mkfs.xfs...). */
export function systemCheckFor(name: string): Check | undefined {
  if (Object.hasOwn(SYSTEM_CHECKS, name)) return SYSTEM_CHECKS[name];
  if (/^mkfs\.\w+$|^mkfs\.?/.test(name)) return mkfs;
  return undefined;
}
