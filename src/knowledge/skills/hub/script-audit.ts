/**
 * Whole-file audit of the scripts a skill ships (shell, Python, JavaScript/TypeScript), on top of
 * the line patterns: what a script does across lines. A light taint pass follows variables from a
 * source to a sink within one file:
 *
 * - fetched code run: a value from the network (fetch/axios/requests/urlopen/curl/wget) reaching
 *   eval/exec/new Function/vm/child_process/os.system/`bash -c`;
 * - secrets sent out: a value read from a credentials file (~/.ssh, ~/.aws, ~/.hermes/.env, …,
 *   also when the path is built with homedir()/Path.home()/expanduser) or a secret variable,
 *   reaching a network call;
 * - reverse shells split over lines: a socket connected out plus a shell wired to it;
 * - writes into the agent's own files (~/.hermes config, .env, SOUL.md, memories) from code.
 *
 * Every finding is `critical` (the skill is refused) and names the line of the sink.
 */
import type { ScanFinding } from "./scan-patterns.js";

type Lang = "shell" | "python" | "js";

export function scriptLanguage(file: string, text: string): Lang | undefined {
  const ext = file.toLowerCase().split(".").pop() ?? "";
  const shebang = /^#!.*\b(\w+)/.exec(text)?.[1] ?? "";
  if (["sh", "bash", "zsh", "ksh"].includes(ext) || /^(?:ba|z|k|da)?sh$/.test(shebang)) return "shell";
  if (ext === "py" || shebang.startsWith("python")) return "python";
  if (["js", "mjs", "cjs", "ts", "mts", "cts"].includes(ext) || shebang === "node") return "js";
  return undefined;
}

const NETWORK_READ: Record<Lang, RegExp> = {
  shell: /\$\(\s*(?:curl|wget)\b|`\s*(?:curl|wget)\b/,
  python:
    /\b(?:requests|httpx)\.(?:get|post|request)\s*\(|\burlopen\s*\(|\burllib\.request\.\w+\s*\(|\bhttpx\.\w+Client\b/,
  js: /\bfetch\s*\(|\baxios(?:\.\w+)?\s*\(|\bhttps?\.get\s*\(|\bgot\s*\(|\bundici\.request\s*\(/,
};
const NETWORK_SEND: Record<Lang, RegExp> = {
  shell: /\b(?:curl|wget|nc|ncat|netcat|scp|rsync|sendmail)\b/,
  python:
    /\b(?:requests|httpx)\.\w+\s*\(|\burlopen\s*\(|\bRequest\s*\(|\b\w*(?:sock|conn)\w*\.send(?:all|to)?\s*\(|\bsmtplib\b/,
  js: /\bfetch\s*\(|\baxios(?:\.\w+)?\s*\(|\bhttps?\.request\s*\(|\b\w*(?:sock|conn|client|ws)\w*\.(?:write|send)\s*\(|\bnew\s+WebSocket\b/,
};
const EXEC_SINK: Record<Lang, RegExp> = {
  shell: /\beval\b|\b(?:ba|z)?sh\s+-c\b|\bsource\b|(?:^|[\s;&|])\.\s/,
  python: /\b(?:exec|eval|compile)\s*\(|\bos\.system\s*\(|\bsubprocess\.\w+\s*\(|\bos\.popen\s*\(/,
  js: /\beval\s*\(|\bnew\s+Function\s*\(|\bvm\.\w+\s*\(|\b(?:exec|execSync|spawn|spawnSync|execFile)\s*\(|\brequire\s*\(\s*["']module["']\s*\)/,
};
const HOME_CALL = String.raw`(?:homedir\(\)|Path\.home\(\)|expanduser\(|getenv\(\s*["']HOME|environ\[\s*["']HOME|environ\.get\(\s*["']HOME|process\.env\.HOME|\$HOME|~)`;
const SECRET_DIR = String.raw`\.(?:ssh|aws|gnupg|kube|docker|netrc|git-credentials|npmrc|pypirc|pgpass|config/gcloud)\b|\.hermes\b[^\n]{0,40}\.env\b|\.hermes/(?:\.env|auth\.json)|auth\.json|id_(?:rsa|ed25519|ecdsa)\b(?!\.pub)|/etc/shadow`;
const SECRET_READ = new RegExp(`${HOME_CALL}[^\\n]{0,120}(?:${SECRET_DIR})|(?:${SECRET_DIR})`, "i");
const SECRET_ENV =
  /\$\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)\b|(?:environ(?:\.get)?\s*[[(]\s*|getenv\(\s*|process\.env\.?\[?\s*)["']?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)/;
const AGENT_WRITE = /\.hermes\b[^\n]{0,60}(?:config\.yaml|\.env|SOUL\.md|memories|auth\.json)/;
const WRITE_CALL =
  /\bwriteFile(?:Sync)?\s*\(|\bappendFile(?:Sync)?\s*\(|\bopen\s*\([^)]*["'][wa]|\.write_text\s*\(|>>?\s*\S/;

const ASSIGN: Record<Lang, RegExp> = {
  shell: /^\s*(?:export\s+|local\s+)?([A-Za-z_]\w*)=(.*)$/,
  python: /^\s*([A-Za-z_]\w*)(?:\s*,\s*\w+)*\s*=(?!=)\s*(.*)$/,
  js: /^\s*(?:(?:const|let|var)\s+)?([A-Za-z_$][\w$]*)\s*=(?!=)\s*(.*)$/,
};

/** Variables whose value comes from `seed` (directly, or through other such variables). */
function tainted(lines: readonly string[], lang: Lang, seed: (rhs: string) => boolean): Set<string> {
  const names = new Set<string>();
  for (let pass = 0; pass < 3; pass++) {
    const before = names.size;
    for (const line of lines) {
      const m = ASSIGN[lang].exec(line);
      if (m?.[1] && !names.has(m[1])) {
        const rhs = m[2] ?? "";
        if (seed(rhs) || mentionsAny(rhs, names, lang)) names.add(m[1]);
      }
      // `with open(path) as f:` style bindings are followed too.
      const bind = /\bas\s+([A-Za-z_]\w*)\s*:/.exec(line);
      if (bind?.[1] && !names.has(bind[1]) && (seed(line) || mentionsAny(line, names, lang)))
        names.add(bind[1]);
    }
    if (names.size === before) break;
  }
  return names;
}

/** The variable names a piece of code reads (`$x`/`${x}` in shell; bare identifiers elsewhere). */
function identifiers(text: string, lang: Lang): string[] {
  if (lang === "shell") return [...text.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1] ?? "");
  return [...text.matchAll(/(?<![\w$.])[A-Za-z_$][\w$]*/g)].map((m) => m[0]);
}

/** Whether `text` reads any of `names`; linear in the text, whatever the number of names. */
function mentionsAny(text: string, names: ReadonlySet<string>, lang: Lang): boolean {
  return names.size > 0 && identifiers(text, lang).some((id) => names.has(id));
}

/** The cross-line findings for one script. */
export function auditScript(file: string, text: string): ScanFinding[] {
  const lang = scriptLanguage(file, text);
  if (!lang) return [];
  const lines = text.split(/\r\n|\n|\r/);
  const out: ScanFinding[] = [];
  const add = (line: number, id: string, category: string, description: string) => {
    if (out.some((f) => f.id === id)) return;
    const match = (lines[line - 1] ?? "").trim();
    out.push({
      file,
      line,
      id,
      severity: "critical",
      category,
      description,
      match: match.length > 120 ? `${match.slice(0, 117)}...` : match,
    });
  };
  const fetched = tainted(lines, lang, (rhs) => NETWORK_READ[lang].test(rhs));
  const secrets = tainted(lines, lang, (rhs) => SECRET_READ.test(rhs) || SECRET_ENV.test(rhs));
  lines.forEach((line, i) => {
    if (EXEC_SINK[lang].test(line)) {
      const direct = NETWORK_READ[lang].test(line) && /\b(?:eval|exec|Function)\b/.test(line);
      if (direct || mentionsAny(line, fetched, lang)) {
        add(
          i + 1,
          "script_exec_fetched_code",
          "remote_execution",
          "runs code it downloaded (fetched text reaches eval/exec)",
        );
      }
    }
    if (NETWORK_SEND[lang].test(line) && !/https?:\/\/(?:localhost|127\.0\.0\.1)/.test(line)) {
      if (mentionsAny(line, secrets, lang) || (SECRET_READ.test(line) && lang !== "shell")) {
        add(
          i + 1,
          "script_secret_exfil",
          "exfiltration",
          "sends secrets it read (credentials file or secret variable) over the network",
        );
      }
    }
    if (AGENT_WRITE.test(line) && WRITE_CALL.test(line)) {
      add(
        i + 1,
        "script_agent_file_write",
        "persistence",
        "writes into the agent's own config, secrets or memory",
      );
    }
  });
  const socketOut =
    lang === "python"
      ? (/\bsocket\.socket\s*\(|\bsocket\.create_connection\s*\(/.test(text) &&
          /\.connect\s*\(/.test(text)) ||
        /\bcreate_connection\s*\(/.test(text)
      : lang === "js"
        ? /\bnet\.(?:connect|createConnection)\s*\(|\bnew\s+net\.Socket\s*\(/.test(text)
        : false;
  const shellWired =
    lang === "python"
      ? /\bos\.dup2\s*\(|\bpty\.spawn\s*\(|subprocess\.\w+\([^)]*(?:\/bin\/(?:ba)?sh|["'](?:ba)?sh["'])[^)]*std(?:in|out)\s*=/.test(
          text,
        )
      : lang === "js"
        ? /\b(?:spawn|exec)\s*\(\s*["'`](?:\/bin\/)?(?:ba|z)?sh|cmd\.exe/.test(text) &&
          /\.pipe\s*\(/.test(text)
        : false;
  if (socketOut && shellWired) {
    const at = lines.findIndex((l) =>
      /\.connect\s*\(|net\.(?:connect|createConnection)|new\s+net\.Socket|create_connection/.test(l),
    );
    add(
      at + 1,
      "script_reverse_shell",
      "network",
      "connects a socket out and wires a shell to it (reverse shell)",
    );
  }
  return out;
}
