/**
 * Line patterns the skills scanner looks for. Two tables:
 *
 * - {@link EVERYWHERE}: things no skill needs, in any text file including SKILL.md (which tells the
 *   agent what to run): destructive or remote-code shell, reverse shells, miners, SSH-key and
 *   sudoers persistence, secrets read and sent to the network, security tools switched off.
 * - {@link SCRIPT_ONLY}: things ordinary scripts do but a user should know about before installing
 *   (network calls, sudo, chmod +x, package installs, secret environment variables). Checked only in
 *   scripts, since a SKILL.md that shows `pip install foo` is documentation.
 *
 * Severity: `critical` makes a skill dangerous (refused even with --force), `high` makes it caution
 * (needs --force or a yes on a terminal), `medium` and `low` are informational.
 */

export type Severity = "critical" | "high" | "medium" | "low";
export type Verdict = "safe" | "caution" | "dangerous";

/** One finding of the scanner: where, what, how bad. */
export interface ScanFinding {
  /** Path inside the skill (`SKILL.md`, `scripts/run.sh`). */
  file: string;
  /** 1-based line; 0 when the finding is about the whole file. */
  line: number;
  id: string;
  severity: Severity;
  category: string;
  description: string;
  /** The offending line, trimmed and cut to 120 characters ("" for whole-file findings). */
  match: string;
}

export interface LinePattern {
  id: string;
  severity: Severity;
  category: string;
  description: string;
  /** A regex tested against one line, or a predicate for checks a regex cannot say alone. */
  test: RegExp | ((line: string) => boolean);
}

const NET_TOOL = String.raw`\b(?:curl|wget|nc|ncat|netcat|scp|rsync|sftp|ftp|telnet|sendmail)\b|\bhttps?(?=\s)`;
const NET_CODE = String.raw`(?:\b(?:requests|httpx|aiohttp|axios)\.\w+\s*\(|\burlopen\s*\(|\burllib\.request\b|\bfetch\s*\(|\bhttps?\.request\s*\()`;
const NET_ANY = new RegExp(`${NET_TOOL}|${NET_CODE}`, "i");
/** Piped into a shell, or into an interpreter that reads its program from stdin (`python -`). */
const RUNS_STDIN =
  String.raw`\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|k|da|fi|c|tc)?sh|pwsh|powershell)\b(?![\w.-])` +
  String.raw`|\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:python[\d.]*|perl|ruby|node|php)\s*(?:-\s*)?(?=$|[;&|)\x60'"])`;

/** Credential stores: SSH and cloud keys, netrc-style files, Hermes's own secrets. */
const CREDENTIAL_FILE = new RegExp(
  String.raw`(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root|\bhome\(\))/\.(?:ssh|aws|gnupg|kube|docker|azure|config/gcloud|netrc|git-credentials|npmrc|pypirc|pgpass)\b` +
    String.raw`|\.hermes/(?:\.env|auth\.json)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|/etc/shadow\b|\.aws/credentials\b`,
  "i",
);
/** Files the agent itself loads as instructions, config, secrets or memory. */
const AGENT_FILES = String.raw`(?:\.hermes/(?:config\.yaml|SOUL\.md|\.env|auth\.json|memories/)|AGENTS\.md|CLAUDE\.md|\.cursorrules)\b`;

/** A credential store named on the line; public keys (`*.pub`) do not count. */
function readsCredentials(line: string): boolean {
  return CREDENTIAL_FILE.test(line.replace(/\S+\.pub\b/g, " "));
}

/** A shell variable whose name says it holds a secret. */
const SECRET_VAR = /\$\{?[A-Za-z_]\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b/;
/** The same in code: os.environ / getenv / process.env / ENV[] with a secret-looking name. */
const SECRET_CODE =
  /\b(?:os\.environ(?:\.get)?\s*[([]\s*["'][^"']*|os\.getenv\s*\(\s*["'][^"']*|process\.env(?:\.|\[\s*["'])\w*|ENV\[\s*["'][^"']*)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;
const LOOPBACK = /https?:\/\/(?:localhost|127\.\d+\.\d+\.\d+|\[::1\])(?=[:/\s"']|$)/i;
const HEADER_ARG = /(?:-H|--header)\s*(?:"[^"]*"|'[^']*'|\S+)|\s-u\s+(?:"[^"]*"|'[^']*'|\S+)/g;
const HEADER_CODE = /\bheaders?\s*[=:]|\bAuthorization\b|\bBearer\b|\bX-Api-Key\b/i;

/** A secret leaving in a request. Header use (an API call with its key) is judged separately. */
function sendsSecret(line: string): boolean {
  if (!NET_ANY.test(line) || LOOPBACK.test(line)) return false;
  return SECRET_VAR.test(line) || SECRET_CODE.test(line);
}

/** Whether every secret on a sending line sits in an HTTP header (`-H`, `headers=`, Bearer). */
export function secretOnlyInHeader(line: string): boolean {
  const withoutHeaders = line.replace(HEADER_ARG, " ");
  if (SECRET_VAR.test(line) && !SECRET_VAR.test(withoutHeaders)) return true;
  return SECRET_CODE.test(line) && HEADER_CODE.test(line) && !SECRET_VAR.test(withoutHeaders);
}

/** `chmod` giving an execute bit (`+x`, `755`, `u=rwx`). */
function chmodExec(line: string): boolean {
  for (const m of line.matchAll(/\bchmod\s+(?:-\w+\s+)*(\S+)/g)) {
    const mode = m[1] ?? "";
    if (/^[0-7]{3,4}$/.test(mode) && (Number.parseInt(mode, 8) & 0o111) !== 0) return true;
    if (/^[ugoa]*[+=][rwxXst]*x/.test(mode)) return true;
  }
  return false;
}

function chmodWorldWritable(line: string): boolean {
  for (const m of line.matchAll(/\bchmod\s+(?:-\w+\s+)*(\S+)/g)) {
    const mode = m[1] ?? "";
    if (/^[0-7]{3,4}$/.test(mode) && (Number.parseInt(mode, 8) & 0o002) !== 0) return true;
    if (/^(?:[ugoa]*o|a)[+=][rwxX]*w/.test(mode)) return true;
  }
  return false;
}

export const EVERYWHERE: readonly LinePattern[] = [
  // Destructive
  {
    id: "destructive_rm_root",
    severity: "critical",
    category: "destructive",
    description: "recursively deletes / or the home directory",
    test: /\brm\s+(?:-{1,2}[\w-]+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-{1,2}[\w-]+\s+)*["']?(?:\/|~|\$HOME|\$\{HOME\})\/?\*?["']?(?=$|[\s;&|)`])/,
  },
  {
    id: "rm_no_preserve_root",
    severity: "critical",
    category: "destructive",
    description: "deletes with --no-preserve-root",
    test: /--no-preserve-root\b/,
  },
  {
    id: "disk_wipe",
    severity: "critical",
    category: "destructive",
    description: "formats or overwrites a disk, or forks without limit",
    test: /\bmkfs(?:\.\w+)?\s+\/dev\/|\bdd\s+[^\n]*\bof=\/dev\/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)|>\s*\/dev\/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z])\b|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/,
  },
  // Remote code execution
  {
    id: "remote_pipe_shell",
    severity: "critical",
    category: "remote_execution",
    description: "pipes a download into a shell or interpreter",
    test: new RegExp(String.raw`\b(?:curl|wget)\b[^\n]*?(?:${RUNS_STDIN})`, "i"),
  },
  {
    id: "remote_exec_substitution",
    severity: "critical",
    category: "remote_execution",
    description: "runs a downloaded script through command or process substitution",
    test: /(?:\b(?:ba|z)?sh|\bsource|(?:^|[\s;&|])\.|\beval)\s+(?:-c\s+)?["']?(?:<\(|\$\(|`)\s*(?:curl|wget)\b/i,
  },
  {
    id: "eval_remote",
    severity: "critical",
    category: "remote_execution",
    description: "evaluates code fetched from the network",
    test: /\b(?:exec|eval)\s*\([^\n]{0,160}\b(?:urlopen|requests\.get|httpx\.get|fetch|urllib\.request)\b|\b(?:iex|Invoke-Expression)\b[^\n]*\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n]*\|\s*(?:iex|Invoke-Expression)\b/i,
  },
  {
    id: "decode_exec",
    severity: "critical",
    category: "obfuscation",
    description: "decodes a hidden payload and runs it",
    test: new RegExp(
      String.raw`(?:\bbase64\b[^\n|]*\s(?:-d|--decode|-D)\b|\bxxd\b[^\n|]*\s-r\b|\bopenssl\b[^\n|]*\s-d\b)[^\n]*?(?:${RUNS_STDIN})` +
        String.raw`|\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|zlib\.decompress|bytes\.fromhex|marshal\.loads|atob|Buffer\.from)\b`,
      "i",
    ),
  },
  // Reverse shells and miners
  {
    id: "reverse_shell",
    severity: "critical",
    category: "network",
    description: "opens a reverse shell",
    test: /\/dev\/(?:tcp|udp)\/[\w.$-]+\/\S+|\b(?:nc|ncat|netcat)\b[^\n]*(?:\s-[a-zA-Z]*e\s|\s--exec\b|\s--sh-exec\b|\s-c\s+["']?(?:\/bin\/)?(?:ba)?sh\b)|\bsocat\b[^\n]*\bexec:|\bmkfifo\b[^\n]*\b(?:nc|ncat|netcat)\b|\bos\.dup2\s*\([^\n]*fileno\(\)|\bpty\.spawn\s*\([^\n]*sh\b[^\n]*socket|socket[^\n]*\bpty\.spawn\b/i,
  },
  {
    id: "crypto_miner",
    severity: "critical",
    category: "mining",
    description: "runs or configures a cryptocurrency miner",
    test: /\b(?:xmrig|xmr-stak|minerd|cpuminer|cgminer|bfgminer|ethminer|nbminer|phoenixminer|nanominer)\b|stratum\+(?:tcp|ssl|tls):\/\/|\b(?:coinhive|cryptonight|nicehash)\b/i,
  },
  // Persistence and privilege
  {
    id: "ssh_authorized_keys",
    severity: "critical",
    category: "persistence",
    description: "writes to ~/.ssh/authorized_keys",
    test: /(?:>>?|\btee\b(?:\s+-a)?)\s*\S*authorized_keys\b|\b(?:cp|mv|ln|install)\s+(?:-\S+\s+)*\S+\s+\S*authorized_keys\b|\bopen\s*\([^\n)]*authorized_keys[^\n)]*,\s*["'][aw]/,
  },
  {
    id: "sudoers",
    severity: "critical",
    category: "privilege_escalation",
    description: "grants passwordless root (sudoers, NOPASSWD)",
    test: /\bNOPASSWD\b|(?:>>?|\btee\b(?:\s+-a)?)\s*\/etc\/sudoers/,
  },
  {
    id: "setuid_bit",
    severity: "critical",
    category: "privilege_escalation",
    description: "sets the setuid or setgid bit",
    test: /\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s\b|[4-7][0-7]{3}\b)/,
  },
  {
    id: "system_file_write",
    severity: "critical",
    category: "persistence",
    description: "overwrites a system file under /etc",
    test: /(?:>>?|\btee\b(?:\s+-a)?)\s*\/etc\/(?:passwd|shadow|group|hosts|crontab|profile|bash\.bashrc|ld\.so\.preload|rc\.local|systemd\/|cron\.d\/|init\.d\/)|\/etc\/ld\.so\.preload/,
  },
  {
    id: "agent_config_write",
    severity: "critical",
    category: "persistence",
    description: "rewrites the agent's own config, secrets or memory",
    test: new RegExp(
      String.raw`(?:>>?|\btee\b(?:\s+-a)?)\s*\S*${AGENT_FILES}|\bsed\s+-i\S*\s[^\n]*${AGENT_FILES}|\b(?:cp|mv)\s+(?:-\S+\s+)*\S+\s+\S*${AGENT_FILES}`,
    ),
  },
  // Secrets leaving the machine
  {
    id: "credential_file_exfil",
    severity: "critical",
    category: "exfiltration",
    description: "reads a credentials file and sends it over the network",
    test: (line) => readsCredentials(line) && NET_ANY.test(line) && !LOOPBACK.test(line),
  },
  {
    id: "secret_env_exfil",
    severity: "critical",
    category: "exfiltration",
    description: "sends a secret environment variable over the network",
    test: (line) => sendsSecret(line) && !secretOnlyInHeader(line),
  },
  {
    id: "secret_in_request_header",
    severity: "high",
    category: "exfiltration",
    description: "sends a secret environment variable as a request header (check where it goes)",
    test: (line) => sendsSecret(line) && secretOnlyInHeader(line),
  },
  {
    id: "env_dump_exfil",
    severity: "critical",
    category: "exfiltration",
    description: "sends the whole environment over the network",
    test: /\b(?:printenv|env|export\s+-p|set)\s*\|[^\n]*\b(?:curl|wget|nc|ncat|netcat)\b|(?:os\.environ|process\.env)\b(?!\s*(?:\.get\b|\[|\.\w))[^\n]*\b(?:requests|httpx|urlopen|fetch|axios)\b/,
  },
  // Security tools
  {
    id: "disable_security",
    severity: "critical",
    category: "defense_evasion",
    description: "switches off a firewall, SELinux, AppArmor, antivirus or audit logging",
    test: /\bsetenforce\s+0\b|\bufw\s+disable\b|\bsystemctl\s+(?:stop|disable|mask)\s+(?:firewalld|ufw|apparmor|auditd|clamav\S*|falcon-sensor|osqueryd|wazuh\S*)|\biptables\s+(?:-F|--flush)\b|\bSet-MpPreference\b[^\n]*-Disable\w+|\bspctl\s+--master-disable\b|\bcsrutil\s+disable\b|\baa-teardown\b|\bauditctl\s+-e\s*0\b/i,
  },
  // Obfuscation
  {
    id: "base64_blob",
    severity: "high",
    category: "obfuscation",
    description: "carries a long base64 blob (a hidden payload?)",
    test: (line) => {
      for (const m of line.matchAll(/[A-Za-z0-9+/]{200,}={0,2}/g)) {
        const before = line.slice(Math.max(0, (m.index ?? 0) - 40), m.index ?? 0);
        if (!/;base64,$/i.test(before)) return true;
      }
      return false;
    },
  },
  {
    id: "hex_escaped_payload",
    severity: "high",
    category: "obfuscation",
    description: "carries a long hex-escaped string (a hidden payload?)",
    test: /(?:\\x[0-9a-fA-F]{2}){24,}/,
  },
];

export const SCRIPT_ONLY: readonly LinePattern[] = [
  {
    id: "network_call",
    severity: "high",
    category: "network",
    description: "makes network calls",
    test: new RegExp(
      `(?:${NET_TOOL})(?=\\s)|${NET_CODE}|\\bsocket\\.(?:socket|create_connection)\\b|\\bnew\\s+WebSocket\\b|\\bInvoke-(?:WebRequest|RestMethod)\\b|\\bNet\\.WebClient\\b`,
      "i",
    ),
  },
  {
    id: "sudo",
    severity: "high",
    category: "privilege_escalation",
    description: "runs commands with sudo",
    test: /(?:^|[\s;&|(`])sudo\s/,
  },
  {
    id: "chmod_exec",
    severity: "high",
    category: "execution",
    description: "makes files executable (chmod +x)",
    test: chmodExec,
  },
  {
    id: "chmod_world_writable",
    severity: "high",
    category: "permissions",
    description: "makes files world-writable",
    test: chmodWorldWritable,
  },
  {
    id: "package_install",
    severity: "high",
    category: "supply_chain",
    description: "installs packages",
    test: /\b(?:pip[\d.]*|pipx|uv\s+pip|python[\d.]*\s+-m\s+pip)\s+install\b|\bnpm\s+(?:i|install|add)\b|\b(?:yarn|pnpm|bun)\s+(?:add|install)\b|\bnpx\s+\S|\bgem\s+install\b|\bcargo\s+install\b|\bgo\s+(?:install|get)\b|\b(?:apt|apt-get|yum|dnf|apk|brew|zypper|choco|winget)\s+(?:-\S+\s+)*(?:install|add)\b|\bpacman\s+-S/,
  },
  {
    id: "secret_env_read",
    severity: "high",
    category: "credentials",
    description: "reads a secret from the environment",
    test: (line) => SECRET_VAR.test(line) || SECRET_CODE.test(line),
  },
  {
    id: "credential_file_read",
    severity: "high",
    category: "credentials",
    description: "reads a credentials file",
    test: readsCredentials,
  },
  {
    id: "env_dump",
    severity: "high",
    category: "credentials",
    description: "reads the whole environment",
    test: /\bprintenv\s*(?:$|[|;>&])|(?:^|[\s;&|(])env\s*(?:$|\|)|\bos\.environ\.(?:items|copy|keys|values)\(\)|\bdict\(\s*os\.environ\s*\)|JSON\.stringify\(\s*process\.env\s*\)/,
  },
  {
    id: "persistence",
    severity: "high",
    category: "persistence",
    description: "installs itself to run later (cron, shell profile, service)",
    test: /\bcrontab\s+(?!-l\b)\S|(?:>>?|\btee\b(?:\s+-a)?)\s*\S*\.(?:bashrc|zshrc|bash_profile|profile|zprofile|zshenv)\b|\bsystemctl\s+(?:--user\s+)?enable\b|\blaunchctl\s+(?:load|bootstrap)\b/,
  },
  {
    id: "cover_tracks",
    severity: "high",
    category: "defense_evasion",
    description: "clears or disables shell history",
    test: /\bunset\s+HISTFILE\b|\bHISTFILE=\/dev\/null|\bhistory\s+-c\b|\bHISTSIZE=0\b/,
  },
  {
    id: "dynamic_eval",
    severity: "medium",
    category: "execution",
    description: "evaluates a string as code",
    test: /\b(?:eval|exec)\s*\(\s*["'`]|\bnew\s+Function\s*\(/,
  },
];

export function matches(pattern: LinePattern, line: string): boolean {
  return typeof pattern.test === "function" ? pattern.test(line) : pattern.test.test(line);
}
