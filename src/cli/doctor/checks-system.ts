/**
 * Doctor checks of the machine: Node's version, the programs the tools call (Chromium for the
 * browser, ripgrep for search, ffmpeg and espeak-ng for voice), and the configured terminal
 * backend's own checks (environments/index.ts `doctorChecks`). A missing optional program is a
 * warning: the tools that need it say so when used, everything else works.
 */
import { doctorChecks } from "../../environments/index.js";
import { findChromium } from "../../tools/browser/settings.js";
import { findExecutable } from "../../tools/sandbox/execute-code.js";
import { scrubEnv } from "../../util/env-scrub.js";
import type { DoctorLine } from "./types.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Hermes needs Node 20 or newer (package.json `engines`). */
export const MIN_NODE_MAJOR = 20;

export function nodeCheck(version: string = process.versions.node): DoctorLine {
  const major = Number(version.split(".")[0]);
  if (Number.isFinite(major) && major >= MIN_NODE_MAJOR) {
    return { group: "System", name: "Node.js", status: "ok", detail: `v${version}` };
  }
  return {
    group: "System",
    name: "Node.js",
    status: "fail",
    detail: `v${version}; Hermes needs ${MIN_NODE_MAJOR} or newer`,
    fix: `Install Node ${MIN_NODE_MAJOR}+ (https://nodejs.org, or nvm install ${MIN_NODE_MAJOR}).`,
  };
}

interface ProgramSpec {
  names: readonly string[];
  label: string;
  usedFor: string;
  install: string;
}

const PROGRAMS: readonly ProgramSpec[] = [
  {
    names: ["rg"],
    label: "ripgrep",
    usedFor: "fast file search (search_files)",
    install: "apt-get install ripgrep (brew install ripgrep on macOS)",
  },
  {
    names: ["ffmpeg"],
    label: "ffmpeg",
    usedFor: "voice messages and audio conversion",
    install: "apt-get install ffmpeg (brew install ffmpeg on macOS)",
  },
  {
    names: ["espeak-ng", "espeak"],
    label: "espeak-ng",
    usedFor: "offline text to speech",
    install: "apt-get install espeak-ng (brew install espeak-ng on macOS)",
  },
];

/** Chromium for the browser tools, then ripgrep, ffmpeg and espeak-ng on PATH. */
export function programChecks(config: Readonly<Record<string, unknown>>, env: Env): DoctorLine[] {
  const lines: DoctorLine[] = [];
  const chromium = findChromium(config, env);
  const cdp = env["BROWSER_CDP_URL"]?.trim();
  if ("path" in chromium) {
    lines.push({ group: "System", name: "Chromium", status: "ok", detail: chromium.path });
  } else {
    lines.push({
      group: "System",
      name: "Chromium",
      status: "warn",
      detail: cdp ? `${chromium.reason} The browser tools use BROWSER_CDP_URL instead.` : chromium.reason,
      fix: "apt-get install chromium (or set browser.executable_path) for the browser tools.",
    });
  }
  for (const program of PROGRAMS) {
    const found = program.names.map((name) => findExecutable(name, env["PATH"])).find((p) => p !== undefined);
    lines.push(
      found
        ? { group: "System", name: program.label, status: "ok", detail: found }
        : {
            group: "System",
            name: program.label,
            status: "warn",
            detail: `not found on PATH; needed for ${program.usedFor}`,
            fix: program.install,
          },
    );
  }
  return lines;
}

/** The configured terminal backend and its runtime (docker, ssh host, sandbox credentials, ...). */
export async function terminalChecks(
  home: string,
  cwd: string,
  config: Readonly<Record<string, unknown>>,
  env: Env,
): Promise<DoctorLine[]> {
  const checks = await doctorChecks({ home, cwd, processEnv: env, childEnv: scrubEnv(env), config });
  return checks.map((check) => ({
    group: "Terminal",
    name: check.name,
    status: check.ok ? "ok" : "fail",
    detail: check.detail,
    ...(check.fix ? { fix: check.fix } : {}),
  }));
}
