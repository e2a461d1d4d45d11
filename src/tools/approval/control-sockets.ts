/**
 * Commands and code that reach a Hermes home's control sockets (`gateway.sock`, and any other
 * `*.sock` directly in a home). The gateway's control socket answers approvals and sends messages,
 * so a model that connects to it (`nc -U`, `socat UNIX-CONNECT:`, `curl --unix-socket`, a python or
 * node one-liner, an execute_code script) could approve its own commands. Such commands are a
 * protected change: only the user's own answer allows them, whatever the approval mode.
 *
 * This is the analyser's half of the guard; the gateway also refuses state-changing calls from its
 * tool processes whatever they ran (gateway/control/peer-guard.ts). Pure.
 */
import { isAbsolute, posix } from "node:path";
import type { AnalysisContext, Finding } from "./types.js";

/** The control sockets a home holds. */
export const CONTROL_SOCKET_NAMES: readonly string[] = ["gateway.sock"];

const FINDING: Finding = {
  key: "control_socket",
  reason:
    "reaches Hermes's control socket (gateway.sock), where approvals are answered: only the user may do that",
  protectedPath: true,
};

const GLOB = /[*?[]/;

/** A shell glob (`g*`, `*.so?k`, `[g]ateway.sock`) as an anchored regular expression. */
function globRegex(glob: string): RegExp | undefined {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) return undefined;
      const body = glob
        .slice(i + 1, end)
        .replace(/^!/, "^")
        .replace(/\\/g, "\\\\");
      out += `[${body}]`;
      i = end;
    } else out += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  try {
    return new RegExp(`^${out}$`);
  } catch {
    return undefined;
  }
}

/** Whether a file name (or a glob for one) in a home names one of its control sockets. */
function namesSocket(name: string): boolean {
  if (CONTROL_SOCKET_NAMES.includes(name) || name.endsWith(".sock")) return true;
  if (!GLOB.test(name)) return false;
  const re = globRegex(name);
  return re !== undefined && CONTROL_SOCKET_NAMES.some((s) => re.test(s));
}

function homesOf(ctx: AnalysisContext): string[] {
  const homes = new Set([ctx.hermesHome, ...ctx.roots.hermesHomes]);
  return [...homes].filter((h) => h && isAbsolute(h)).map((h) => posix.normalize(h).replace(/\/+$/, ""));
}

/**
 * Findings for text that names a control socket: the socket's file name anywhere (quoted, inside
 * code), or a path into a home (`$HERMES_HOME/…`, `~/.hermes/…`, the absolute path) whose last
 * part is a `.sock` file or a glob that matches one.
 */
export function controlSocketFindings(text: string, ctx: AnalysisContext): Finding[] {
  if (CONTROL_SOCKET_NAMES.some((name) => text.includes(name))) return [{ ...FINDING }];
  const prefixes = [...homesOf(ctx), "~/.hermes", "$HERMES_HOME", ["$", "{HERMES_HOME}"].join("")];
  for (const prefix of prefixes) {
    let at = text.indexOf(`${prefix}/`);
    while (at >= 0) {
      const rest = text.slice(at + prefix.length).replace(/^\/+/, "");
      const name = /^[^\s'"`;|&)<>/]*/.exec(rest)?.[0] ?? "";
      if (name && namesSocket(name)) return [{ ...FINDING }];
      at = text.indexOf(`${prefix}/`, at + 1);
    }
  }
  return [];
}

/**
 * Findings for one expanded argument: an absolute or relative path (against each directory the
 * command may run in; `undefined` when unknown) into a home that names a control socket or a
 * glob matching one.
 */
export function controlSocketArgument(
  word: string,
  cwds: readonly string[] | undefined,
  ctx: AnalysisContext,
): Finding[] {
  if (!word) return [];
  if (CONTROL_SOCKET_NAMES.some((name) => word.includes(name))) return [{ ...FINDING }];
  // Where the command runs is unknown (`cd "$X"`): any `.sock` file may be in a home.
  if (!cwds) return /\.sock$/.test(word) ? [{ ...FINDING }] : [];
  // socat's address syntax and curl's option join: UNIX-CONNECT:/path, --unix-socket=/path.
  const candidates = [
    word,
    word.replace(/^[A-Za-z-]+:/, "").replace(/,.*$/, ""),
    word.replace(/^[^=]*=/, ""),
  ];
  const homes = homesOf(ctx);
  for (const candidate of candidates) {
    for (const cwd of cwds) {
      const abs = posix.normalize(isAbsolute(candidate) ? candidate : posix.join(cwd, candidate));
      const dir = posix.dirname(abs).replace(/\/+$/, "");
      if (homes.includes(dir) && namesSocket(posix.basename(abs))) return [{ ...FINDING }];
    }
  }
  return [];
}
