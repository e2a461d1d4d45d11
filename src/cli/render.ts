/**
 * Turns agent events into terminal output: the answer on stdout, progress (tool lines, warnings)
 * on stderr. Colours only on a TTY and never with NO_COLOR.
 */
import pc from "picocolors";
import type { AgentEvent } from "../agent/events.js";
import { createStyle } from "./tui/style.js";
import { formatToolLine } from "./tui/tool-line.js";

export type OutputMode = "normal" | "quiet" | "oneshot";

export interface RendererOptions {
  mode: OutputMode;
  verbose: boolean;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  color: boolean;
  emojiFor?: (tool: string) => string | undefined;
}

export { previewArgs } from "./tui/tool-line.js";

export class Renderer {
  private readonly starts = new Map<string, { name: string; args: Record<string, unknown> }>();
  private textOpen = false;
  /** The last warning, so a turn that ends on it (a guardrail stop) can say why under -q/-z. */
  private lastWarning = "";
  finalText = "";

  constructor(private readonly options: RendererOptions) {}

  private paint(fn: (s: string) => string, s: string): string {
    return this.options.color ? fn(s) : s;
  }

  private progress(line: string): void {
    if (this.options.mode !== "normal") return;
    this.closeText();
    this.options.stderr.write(`${line}\n`);
  }

  private closeText(): void {
    if (this.textOpen) {
      this.options.stdout.write("\n");
      this.textOpen = false;
    }
  }

  handle(event: AgentEvent): void {
    const { mode, verbose } = this.options;
    switch (event.type) {
      case "text_delta":
        if (mode !== "oneshot") {
          this.options.stdout.write(event.text);
          this.textOpen = !event.text.endsWith("\n");
        }
        break;
      case "tool_start":
        this.starts.set(event.callId, { name: event.name, args: event.args });
        if (verbose) this.progress(this.paint(pc.dim, `  → ${event.name} ${JSON.stringify(event.args)}`));
        break;
      case "tool_progress":
        if (verbose) this.progress(this.paint(pc.dim, `    ${event.name}: ${event.message}`));
        break;
      case "tool_end": {
        const start = this.starts.get(event.callId);
        this.starts.delete(event.callId);
        const line = formatToolLine(
          { name: event.name, args: start?.args, ok: event.ok, durationMs: event.durationMs },
          createStyle(this.options.color),
          this.options.emojiFor ? { emojiFor: this.options.emojiFor } : {},
        );
        // Calls made by a script (execute_code) sit under the call that ran it.
        this.progress(event.parentCallId ? `  ↳ ${line}` : line);
        if (verbose) this.progress(this.paint(pc.dim, indent(event.result.slice(0, 2000))));
        break;
      }
      case "subagent":
        if (event.state !== "progress") {
          const what =
            event.state === "start"
              ? event.goal
              : `${event.detail}${event.durationMs !== undefined ? ` in ${(event.durationMs / 1000).toFixed(1)}s` : ""}: ${event.goal}`;
          this.progress(this.paint(pc.dim, `  ↳ [${event.index + 1}] ${what.slice(0, 100)}`));
        }
        break;
      case "warning":
        this.lastWarning = event.message;
        if (mode === "normal") this.progress(this.paint(pc.yellow, `⚠ ${event.message}`));
        break;
      case "error":
        this.closeText();
        this.options.stderr.write(`${this.paint(pc.red, "error:")} ${event.message}\n`);
        break;
      case "done":
        this.finalText = event.text;
        // The exit status is 1: -q/-z print no warnings, so say here why the turn was cut short.
        if (event.reason === "guardrail" && mode !== "normal" && this.lastWarning)
          this.options.stderr.write(`hermes: ${this.lastWarning}\n`);
        if (mode === "oneshot") {
          if (event.text)
            this.options.stdout.write(event.text.endsWith("\n") ? event.text : `${event.text}\n`);
        } else {
          this.closeText();
        }
        break;
      default:
        break;
    }
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");
}
