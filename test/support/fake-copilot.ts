/**
 * Puts the fake Copilot CLI (`fake-copilot-acp.mjs`, real ACP JSON-RPC on stdio) on a PATH as
 * `copilot`, with a log file of what it was told and did.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FAKE_COPILOT_SCRIPT = fileURLToPath(new URL("./fake-copilot-acp.mjs", import.meta.url));

export interface FakeCopilot {
  /** The directory holding `copilot`; put it first on PATH. */
  binDir: string;
  /** The `copilot` program's path. */
  command: string;
  /** The file the agent appends one JSON line per event to (FAKE_ACP_LOG). */
  logFile: string;
  /** The file the agent writes its environment to at start (FAKE_ACP_ENV_FILE). */
  envFile: string;
  /** The events logged so far. */
  events(): Array<Record<string, unknown>>;
  /** The environment the latest agent process started with. */
  childEnv(): Record<string, string>;
  /** PATH with the fake first. */
  path: string;
}

export function fakeCopilot(): FakeCopilot {
  const root = mkdtempSync(join(tmpdir(), "hermes-fake-copilot-"));
  const binDir = join(root, "bin");
  mkdirSync(binDir);
  const command = join(binDir, "copilot");
  writeFileSync(command, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_COPILOT_SCRIPT}" "$@"\n`);
  chmodSync(command, 0o755);
  const logFile = join(root, "acp.log");
  const envFile = join(root, "env.json");
  return {
    binDir,
    command,
    logFile,
    envFile,
    path: `${binDir}:${process.env["PATH"] ?? ""}`,
    events() {
      if (!existsSync(logFile)) return [];
      return readFileSync(logFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    childEnv() {
      return JSON.parse(readFileSync(envFile, "utf8")) as Record<string, string>;
    },
  };
}
