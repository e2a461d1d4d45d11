/**
 * The REPL's welcome banner. The text of `/usage`, `/status`, `/sessions` and the resume recap
 * lives with the commands (`commands/format.ts`) and is re-exported here for the TUI.
 */
import type { Style } from "./style.js";

export {
  formatCost,
  formatCount,
  formatRecap,
  formatSessionCost,
  formatSessionList,
  formatStatus,
  formatUsage,
  relativeTime,
  type StatusInfo,
} from "../../commands/format.js";

export interface BannerInfo {
  version: string;
  model: string;
  provider: string;
  sessionId: string;
  resumed: boolean;
  title: string | null;
  messages: number;
}

/** The short welcome: name, version, model, session (or what was resumed), and the key hints. */
export function formatBanner(info: BannerInfo, style: Style): string[] {
  const model = info.provider ? `${info.model} ${style.dim(`(${info.provider})`)}` : info.model;
  const session = info.resumed
    ? `resumed ${info.title ? `“${info.title}”` : info.sessionId} ${style.dim(`· ${info.messages} messages`)}`
    : style.dim(`session ${info.sessionId}`);
  const head = `${style.bold(style.magenta("⚕ Hermes"))} ${style.dim(info.version)} · ${model} · ${session}`;
  const hint = style.dim("/help for commands, Ctrl+C to interrupt, Ctrl+D to exit");
  return [head, hint];
}
