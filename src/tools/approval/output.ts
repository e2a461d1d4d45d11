/**
 * Static evaluation of what a command prints, for the commands whose output follows from their
 * arguments and input alone: echo, printf, cat, the decoders (base64 -d, xxd -r -p, rev, tr,
 * gzip -d, openssl base64 -d) and a few path helpers (pwd, mktemp, which, basename, dirname).
 * `echo cm0gLXJmIH4= | base64 -d | bash` is judged as `rm -rf ~` this way. Pure.
 */

import { createRequire } from "node:module";
import { basename, dirname } from "node:path";
import type * as Zlib from "node:zlib";
import type { CodeSource } from "./model.js";
import type { Field } from "./words.js";

// node:zlib loads for the first `gzip -d` judged, not with the analyser every start loads.
let zlibLib: typeof Zlib | undefined;
const zlib = () => (zlibLib ??= createRequire(import.meta.url)("node:zlib") as typeof Zlib);

/** Commands that download. */
export const FETCHERS = new Set(
  "curl wget wget2 fetch aria2c http https xh curlie lwp-request lwp-download GET POST nc ncat netcat socat telnet ftp tftp".split(
    " ",
  ),
);

/** Whether a stage turns encoded input into something else: its output hides what it carries. */
export function isDecoder(name: string, args: readonly string[]): boolean {
  switch (name) {
    case "base64":
    case "base32":
    case "basenc":
      return args.some((a) => /^-[a-zA-Z]*[dD]|^--decode$/.test(a));
    case "xxd":
      return args.some((a) => /^-[a-z]*r/.test(a) || a === "-revert");
    case "openssl":
      return args.some(
        (a) => a === "-d" || a === "-a" || a === "-base64" || a === "enc" || a === "base64" || a === "-A",
      );
    case "gzip":
    case "bzip2":
    case "xz":
    case "zstd":
    case "lz4":
    case "brotli":
      return args.some((a) => /^-[a-zA-Z]*d|^--decompress$|^--stdout$|^-c$/.test(a));
    case "gunzip":
    case "zcat":
    case "bunzip2":
    case "bzcat":
    case "unxz":
    case "xzcat":
    case "zstdcat":
    case "unzstd":
    case "uudecode":
    case "rev":
    case "tr":
    case "gpg":
    case "age":
    case "iconv":
    case "dd":
    case "od":
    case "hexdump":
      return true;
    case "perl":
    case "python":
    case "python3":
    case "ruby":
    case "node":
    case "sed":
    case "awk":
      return false;
  }
  return false;
}

/** What one stage of a pipeline prints, given its standard input; undefined when not static. */
export function stageOutput(
  name: string,
  args: readonly Field[],
  stdin: Buffer | undefined,
  env: { cwd: string | undefined; file: (path: string) => string | undefined },
): Buffer | undefined {
  if (args.some((a) => a.dynamic)) return undefined;
  const a = args.map((f) => f.text);
  switch (name) {
    case "echo":
      return echo(a);
    case "printf":
      return a.length === 0 ? undefined : Buffer.from(printf(a[0] as string, a.slice(1)), "latin1");
    case "cat": {
      const files = a.filter((x) => !x.startsWith("-") || x === "-");
      if (files.length === 0) return stdin;
      const parts = files.map((f) => (f === "-" ? stdin : known(env.file(f))));
      return parts.every((p) => p !== undefined) ? Buffer.concat(parts as Buffer[]) : undefined;
    }
    case "base64":
    case "basenc": {
      if (!a.some((x) => /^-[a-zA-Z]*[dD]|^--decode$/.test(x))) return undefined;
      const input = inputOf(a, stdin, env);
      return input === undefined
        ? undefined
        : Buffer.from(input.toString("latin1").replace(/\s+/g, ""), "base64");
    }
    case "openssl": {
      if (!(a[0] === "base64" || (a[0] === "enc" && a.some((x) => x === "-base64" || x === "-a"))))
        return undefined;
      if (!a.includes("-d") || a.some((x) => /^-(aes|des|bf|cha|cam|k$|kfile|pass)/.test(x)))
        return undefined;
      return stdin === undefined
        ? undefined
        : Buffer.from(stdin.toString("latin1").replace(/\s+/g, ""), "base64");
    }
    case "xxd": {
      if (!a.some((x) => /^-[a-z]*r/.test(x)) || !a.some((x) => /^-[a-z]*p|^-ps$|^-plain$/.test(x)))
        return undefined;
      const input = inputOf(
        a.filter((x) => !x.startsWith("-")),
        stdin,
        env,
      );
      return input === undefined
        ? undefined
        : Buffer.from(input.toString("latin1").replace(/[^0-9a-fA-F]/g, ""), "hex");
    }
    case "rev":
      return stdin === undefined
        ? undefined
        : Buffer.from(
            stdin
              .toString("utf8")
              .split("\n")
              .map((l) => [...l].reverse().join(""))
              .join("\n"),
            "utf8",
          );
    case "tr":
      return stdin === undefined ? undefined : tr(a, stdin);
    case "gunzip":
    case "zcat":
    case "gzip": {
      if (name === "gzip" && !a.some((x) => /^-[a-zA-Z]*d|^--decompress$/.test(x))) return undefined;
      if (stdin === undefined) return undefined;
      try {
        return zlib().gunzipSync(stdin);
      } catch {
        try {
          return zlib().inflateSync(stdin);
        } catch {
          return undefined;
        }
      }
    }
    case "true":
    case "false":
    case ":":
      return Buffer.alloc(0);
    case "pwd":
      return env.cwd === undefined ? undefined : Buffer.from(`${env.cwd}\n`);
    case "basename":
      return a[0] === undefined ? undefined : Buffer.from(`${basename(a[0])}\n`);
    case "dirname":
      return a[0] === undefined ? undefined : Buffer.from(`${dirname(a[0])}\n`);
    case "which":
      return a.length === 1 && /^[\w.+-]+$/.test(a[0] as string)
        ? Buffer.from(`/usr/bin/${a[0]}\n`)
        : undefined;
    case "mktemp": {
      // Not literally known, but it is always a fresh path under the temporary directory.
      const dirOpt =
        a.find((x) => x.startsWith("--tmpdir="))?.slice(9) ??
        (a.includes("-p") ? a[a.indexOf("-p") + 1] : undefined);
      const template = a.filter((x) => !x.startsWith("-") && x !== dirOpt).at(-1);
      const dir = dirOpt ?? (template?.includes("/") ? dirname(template) : "/tmp");
      return Buffer.from(
        `${dir}/${template ? basename(template).replace(/X+$/, "XXXXXX") : "tmp.XXXXXXXXXX"}\n`,
      );
    }
  }
  return undefined;
}

function known(text: string | undefined): Buffer | undefined {
  return text === undefined ? undefined : Buffer.from(text, "latin1");
}

function inputOf(
  args: readonly string[],
  stdin: Buffer | undefined,
  env: { file: (p: string) => string | undefined },
): Buffer | undefined {
  const files = args.filter((x) => !x.startsWith("-"));
  if (files.length === 0) return stdin;
  return known(env.file(files[0] as string));
}

function echo(args: string[]): Buffer {
  let k = 0;
  let newline = true;
  let escapes = false;
  while (k < args.length && /^-[neE]+$/.test(args[k] as string)) {
    const f = args[k] as string;
    if (f.includes("n")) newline = false;
    if (f.includes("e")) escapes = true;
    if (f.includes("E")) escapes = false;
    k++;
  }
  let text = args.slice(k).join(" ");
  if (escapes) {
    const cut = text.indexOf("\\c");
    if (cut >= 0) {
      text = text.slice(0, cut);
      newline = false;
    }
    text = unescapeC(text, true);
  }
  return Buffer.from(newline ? `${text}\n` : text, escapes ? "latin1" : "utf8");
}

/** Backslash escapes of echo -e and printf %b / the format string. */
function unescapeC(s: string, echoStyle: boolean): string {
  return s.replace(/\\(0[0-7]{0,3}|[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|.)/gs, (_m, e: string) => {
    const simple: Record<string, string> = {
      n: "\n",
      t: "\t",
      r: "\r",
      a: "\x07",
      b: "\b",
      e: "\x1b",
      f: "\f",
      v: "\v",
      "\\": "\\",
    };
    if (e in simple) return simple[e] as string;
    if (/^0[0-7]*$/.test(e)) return String.fromCharCode(Number.parseInt(e.slice(1) || "0", 8) & 0xff);
    if (/^[0-7]+$/.test(e)) return echoStyle ? `\\${e}` : String.fromCharCode(Number.parseInt(e, 8) & 0xff);
    if (e.startsWith("x")) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (e.startsWith("u"))
      return Buffer.from(String.fromCodePoint(Number.parseInt(e.slice(1), 16)), "utf8").toString("latin1");
    return `\\${e}`;
  });
}

/** printf FORMAT ARGS...: %s %b %c %d %i %u %x %o %%, reused while arguments remain. */
export function printf(format: string, args: string[]): string {
  let out = "";
  let k = 0;
  do {
    let consumed = false;
    out += unescapeC(format, false).replace(
      /%([-+ #0]*\d*(?:\.\d+)?)([sbcdiuxXo%q])/g,
      (_m, _flags: string, conv: string) => {
        if (conv === "%") return "%";
        const arg = args[k++] ?? "";
        consumed = true;
        switch (conv) {
          case "b":
            return unescapeC(arg, true);
          case "c":
            return arg.charAt(0);
          case "d":
          case "i":
          case "u":
            return String(Number.parseInt(arg, 10) || 0);
          case "x":
            return (Number.parseInt(arg, 10) || 0).toString(16);
          case "X":
            return (Number.parseInt(arg, 10) || 0).toString(16).toUpperCase();
          case "o":
            return (Number.parseInt(arg, 10) || 0).toString(8);
          default:
            return arg;
        }
      },
    );
    if (!consumed) break;
  } while (k < args.length);
  return out;
}

function trSet(spec: string): string | undefined {
  if (/\[:|\[=|\[.\*/.test(spec)) return undefined;
  const s = unescapeC(spec, false);
  let out = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i + 1] === "-" && i + 2 < s.length) {
      const a = s.charCodeAt(i);
      const b = s.charCodeAt(i + 2);
      if (b < a) return undefined;
      for (let c = a; c <= b; c++) out += String.fromCharCode(c);
      i += 2;
    } else out += s[i];
  }
  return out;
}

function tr(args: string[], stdin: Buffer): Buffer | undefined {
  const flags = args.filter((a) => /^-[cdsCt]+$/.test(a)).join("");
  const sets = args.filter((a) => !/^-[cdsCt]+$/.test(a));
  if (/[cCs]/.test(flags)) return undefined;
  const s1 = trSet(sets[0] ?? "");
  if (s1 === undefined) return undefined;
  const text = stdin.toString("latin1");
  if (flags.includes("d")) return Buffer.from([...text].filter((c) => !s1.includes(c)).join(""), "latin1");
  const s2 = trSet(sets[1] ?? "");
  if (s2 === undefined || s2 === "") return undefined;
  const map = new Map<string, string>();
  [...s1].forEach((c, i) => {
    map.set(c, s2[Math.min(i, s2.length - 1)] as string);
  });
  return Buffer.from([...text].map((c) => map.get(c) ?? c).join(""), "latin1");
}

/** What a stage's unknown output carries, judged from the stages that produce it. */
export function classify(
  stages: ReadonlyArray<{ name: string; args: readonly string[]; raw: string; remote?: boolean }>,
): CodeSource {
  const remote = stages.find((s) => s.remote || FETCHERS.has(s.name));
  if (remote) return { kind: "remote", via: remote.raw };
  const decoder = stages.find((s) => isDecoder(s.name, s.args));
  if (decoder) return { kind: "decoded", via: decoder.raw };
  return { kind: "opaque", via: stages.map((s) => s.raw).join(" | ") || "standard input" };
}
