/**
 * Which tool calls change files, for the checkpoint taken before a turn's first mutation
 * (tools/checkpoints/manager.ts): file writes (`write_file`, `patch`), code runs (`execute_code`)
 * and every terminal command the read-only list (tools/approval/read-only.ts) does not clear.
 * Anything else (reads, searches, memory, the web) changes nothing in the working directory.
 */
import type { HermesConfig } from "../config/defaults.js";
import { isReadOnlyCommand } from "../tools/approval/read-only.js";
import { CheckpointSession, checkpointSettings } from "../tools/checkpoints/manager.js";

/** The checkpoint's message for a call that may change files; undefined for one that cannot. */
export function mutationReason(name: string, args: Record<string, unknown>): string | undefined {
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  switch (name) {
    case "write_file":
      return `before write_file ${text(args.path)}`.trim();
    case "patch":
      return `before patch ${text(args.path)}`.trim();
    case "execute_code":
      return "before execute_code";
    case "terminal": {
      const command = text(args.command);
      if (isReadOnlyCommand(command)) return undefined;
      return `before terminal: ${command.length > 80 ? `${command.slice(0, 79)}…` : command}`;
    }
    default:
      return undefined;
  }
}

/** The session's checkpoints when `checkpoints.enabled` (or `--checkpoints`); else undefined. */
export function sessionCheckpoints(
  config: HermesConfig,
  home: string,
  cwd: string,
): CheckpointSession | undefined {
  const settings = checkpointSettings(config);
  return settings.enabled ? new CheckpointSession({ home, workdir: cwd, settings }) : undefined;
}
