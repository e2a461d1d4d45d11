/**
 * How a Hermes tool call looks to an editor: its ACP kind, title, locations and content. Pure:
 * the caller reads files (the text before and after an edit) and hands them in. Titles follow the
 * CLI's one-line preview, so an editor never shows another summary than the terminal does.
 */
import type { ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind } from "@agentclientprotocol/sdk";
import { previewArgs } from "../agent/tool-display.js";

/** Hermes tool name → ACP tool kind (upstream's table); anything unlisted is "other". */
const KINDS: Readonly<Record<string, ToolKind>> = {
  read_file: "read",
  skill_view: "read",
  skills_list: "read",
  browser_snapshot: "read",
  browser_vision: "read",
  browser_get_images: "read",
  vision_analyze: "read",
  write_file: "edit",
  patch: "edit",
  skill_manage: "edit",
  search_files: "search",
  session_search: "search",
  terminal: "execute",
  process: "execute",
  execute_code: "execute",
  browser_click: "execute",
  browser_type: "execute",
  browser_scroll: "execute",
  browser_press: "execute",
  browser_back: "execute",
  delegate_task: "execute",
  web_search: "fetch",
  web_extract: "fetch",
  browser_navigate: "fetch",
};

/** The ACP kind of a Hermes tool ("other" when it has none). */
export function toolKind(name: string): ToolKind {
  return Object.hasOwn(KINDS, name) ? (KINDS[name] ?? "other") : "other";
}

/** `terminal: ls -la`: the tool name and the CLI's preview of its most telling argument. */
export function toolTitle(name: string, args: Record<string, unknown>): string {
  let preview = "";
  try {
    preview = previewArgs(name, args, 80);
  } catch {
    // A model that ignored the schema must not break the editor's view of the call.
  }
  return preview ? `${name}: ${preview}` : name;
}

/** Files the call names (`path`, with `line`/`offset` when given), for the editor to follow. */
export function toolLocations(args: Record<string, unknown>, paths: readonly string[]): ToolCallLocation[] {
  const line =
    typeof args["line"] === "number"
      ? args["line"]
      : typeof args["offset"] === "number"
        ? args["offset"]
        : undefined;
  return paths.map((path) => (line !== undefined ? { path, line } : { path }));
}

/** One text block of tool-call content. */
export function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

/** Most characters of one text block shown in the editor; the model's result is never cut by this. */
export const MAX_SHOWN_CHARS = 5000;

/** `text`, or its last `max` characters with a note saying how much came before. */
export function tail(text: string, max = MAX_SHOWN_CHARS): string {
  if (text.length <= max) return text;
  return `… (${text.length - max} earlier characters not shown)\n${text.slice(text.length - max)}`;
}

/** `text`, or its first `max` characters with a note saying how much was left out. */
export function head(text: string, max = MAX_SHOWN_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${text.length - max} more characters not shown)`;
}

/** A fence that backticks inside `text` cannot close. */
export function fenced(text: string, language = ""): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

/** The content shown while a call runs (before its result). Empty when the title says it all. */
export function startContent(name: string, args: Record<string, unknown>): ToolCallContent[] {
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : "");
  switch (name) {
    case "terminal":
      return [textContent(fenced(`$ ${str("command")}`, "sh"))];
    case "execute_code":
      return [textContent(fenced(head(str("code"), 1200), "python"))];
    case "read_file":
    case "web_extract":
      return [];
    case "write_file":
    case "patch":
      // The diff follows once the file is written (see editDiffs).
      return [];
    default: {
      const keys = Object.keys(args);
      if (keys.length === 0) return [];
      return [textContent(fenced(head(JSON.stringify(args, null, 2), 1200), "json"))];
    }
  }
}

/** A file's text before and after a call, as the caller read it (`null`: it did not exist). */
export interface FileChange {
  path: string;
  before: string | null;
  after: string | null;
}

/** ACP `diff` blocks for the files a call changed; files it left as they were are skipped. */
export function editDiffs(changes: readonly FileChange[]): ToolCallContent[] {
  const out: ToolCallContent[] = [];
  for (const change of changes) {
    if (change.before === change.after) continue;
    // A deleted file shows as emptied: ACP has no deletion in a diff.
    out.push({ type: "diff", path: change.path, oldText: change.before, newText: change.after ?? "" });
  }
  return out;
}

/** Live output of a running command, shown under its command line. */
export function outputContent(args: Record<string, unknown>, output: string): ToolCallContent[] {
  const command = typeof args["command"] === "string" ? `$ ${args["command"]}\n` : "";
  return [textContent(fenced(`${command}${tail(output)}`, "sh"))];
}

/**
 * Whether a finished call failed: the executor said so, or a structured result reports an error
 * (`success: false`, a non-zero `exit_code`, an `error` without output). Plain text that merely
 * contains "error" is not a failure.
 */
export function resultFailed(ok: boolean, result: string): boolean {
  if (!ok) return true;
  let data: unknown;
  try {
    data = JSON.parse(result);
  } catch {
    return false;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const record = data as Record<string, unknown>;
  if (record["success"] === false || record["ok"] === false) return true;
  const exit = record["exit_code"] ?? record["returncode"];
  if (typeof exit === "number" && exit !== 0) return true;
  return (
    typeof record["error"] === "string" &&
    record["error"] !== "" &&
    record["output"] === undefined &&
    record["content"] === undefined
  );
}

/** The content of a finished call: its diffs for edits, else the result the model read. */
export function endContent(
  name: string,
  args: Record<string, unknown>,
  result: string,
  changes: readonly FileChange[],
): ToolCallContent[] {
  const diffs = editDiffs(changes);
  if (diffs.length > 0) return diffs;
  if (name === "terminal") return outputContent(args, terminalOutput(result));
  if (!result.trim()) return [];
  return [textContent(fenced(head(result)))];
}

/** The `output` of a terminal result (JSON `{output, exit_code}`), else the result itself. */
function terminalOutput(result: string): string {
  try {
    const data = JSON.parse(result) as Record<string, unknown>;
    if (typeof data["output"] === "string") {
      const exit = data["exit_code"];
      return typeof exit === "number" && exit !== 0
        ? `${data["output"]}\n[exit code ${exit}]`
        : data["output"];
    }
  } catch {
    // Not JSON: show it as it is.
  }
  return result;
}

/** The status a finished call shows. */
export function endStatus(ok: boolean, result: string): ToolCallStatus {
  return resultFailed(ok, result) ? "failed" : "completed";
}
