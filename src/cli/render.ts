/**
 * Turns agent events into terminal output: the answer on stdout, progress (tool lines, warnings)
 * on stderr. Colours only on a TTY and never with NO_COLOR.
 *
 * Text from a model call that fails and is retried is not the answer. When stdout is a terminal
 * in normal mode, text streams as it comes and an abandoned attempt gets a marker line; everywhere
 * else (`-q`, stdout piped or redirected) each attempt's text is held until the call completes and
 * a failed attempt's text is dropped, so stdout never carries a fragment. `-z` prints only the
 * final answer of a completed turn. Each retry wait is said on stderr in every mode.
 *
 * With `markdown` set (stdout is a terminal), the answer is rendered as the REPL renders it
 * (headings, lists, code blocks, tables, wrapped to the terminal width) a whole line at a time;
 * piped or redirected output stays the model's markdown, byte for byte. `-z` is never rendered.
 */
import pc from "picocolors";
import type { AgentEvent } from "../agent/events.js";
import type { MarkdownMode, MarkdownStream } from "./tui/markdown-stream.js";
import { createStyle } from "./tui/style.js";
import type { formatToolLine } from "./tui/tool-line.js";

export type OutputMode = "normal" | "quiet" | "oneshot";

export interface RendererOptions {
  mode: OutputMode;
  verbose: boolean;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  color: boolean;
  emojiFor?: (tool: string) => string | undefined;
  /** How answer text is shown: `ansi`/`plain` render markdown (a terminal), `raw` (default) does not. */
  markdown?: MarkdownMode;
}

export { previewArgs } from "../agent/tool-display.js";

/**
 * What a renderer draws with, loaded only where it is used: the markdown renderer (marked) when
 * answers are rendered, and the tool-line formatter (string-width) in normal mode, the only one
 * that shows tool lines. A one-shot (`-z`) or `-q` run loads neither.
 */
export interface RendererParts {
  markdown: MarkdownStream | null;
  toolLine: typeof formatToolLine | null;
}

/** A renderer with the parts its options need (see RendererParts). */
export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  const md = options.markdown ?? "raw";
  const markdown =
    md !== "raw" && options.mode !== "oneshot"
      ? new (await import("./tui/markdown-stream.js")).MarkdownStream({ mode: md })
      : null;
  const toolLine = options.mode === "normal" ? (await import("./tui/tool-line.js")).formatToolLine : null;
  return new Renderer(options, { markdown, toolLine });
}

export class Renderer {
  private readonly starts = new Map<string, { name: string; args: Record<string, unknown> }>();
  private textOpen = false;
  /** The last warning, so a turn that ends on it (a guardrail stop) can say why under -q/-z. */
  private lastWarning = "";
  /** Text of the current model call, held until it completes (see the file comment). */
  private held = "";
  private readonly live: boolean;
  /** Renders answer text line by line; null when it is written as it came. */
  private readonly markdown: MarkdownStream | null;
  private readonly toolLine: typeof formatToolLine | null;
  finalText = "";

  /** Use `createRenderer`, which loads the parts `options` call for. */
  constructor(
    private readonly options: RendererOptions,
    parts: RendererParts,
  ) {
    this.live = options.mode === "normal" && (options.stdout as NodeJS.WriteStream).isTTY === true;
    this.markdown = parts.markdown;
    this.toolLine = parts.toolLine;
  }

  private writeText(text: string): void {
    if (!text) return;
    if (this.markdown) {
      // The terminal may be resized between lines.
      const columns = (this.options.stdout as NodeJS.WriteStream).columns;
      this.markdown.width = columns && columns > 0 ? columns : undefined;
      this.writeLines(this.markdown.push(text));
      return;
    }
    this.options.stdout.write(text);
    this.textOpen = !text.endsWith("\n");
  }

  private writeLines(lines: string[]): void {
    if (lines.length > 0) this.options.stdout.write(lines.map((l) => `${l}\n`).join(""));
  }

  private paint(fn: (s: string) => string, s: string): string {
    return this.options.color ? fn(s) : s;
  }

  private progress(line: string): void {
    if (this.options.mode !== "normal") return;
    this.flushHeld();
    this.closeText();
    this.options.stderr.write(`${line}\n`);
  }

  private flushHeld(): void {
    const text = this.held;
    this.held = "";
    this.writeText(text);
  }

  private closeText(): void {
    if (this.markdown) {
      this.writeLines(this.markdown.flush());
      return;
    }
    if (this.textOpen) {
      this.options.stdout.write("\n");
      this.textOpen = false;
    }
  }

  handle(event: AgentEvent): void {
    const { mode, verbose } = this.options;
    switch (event.type) {
      case "text_delta":
        if (mode === "oneshot") break;
        if (this.live) this.writeText(event.text);
        else this.held += event.text;
        break;
      case "stream_discarded":
        this.held = "";
        if (this.live && event.text) {
          this.closeText();
          this.options.stderr.write(
            `${this.paint(pc.yellow, "⚠ [the text above was cut off and is not the answer; retrying]")}\n`,
          );
        }
        break;
      case "turn_end":
        // The call completed (or ended the turn): its text is now the model's, shown as such.
        if (event.finishReason === "error" || event.finishReason === "aborted") this.held = "";
        else this.flushHeld();
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
        // Tool lines show in normal mode only, the only mode that has the formatter.
        if (!this.toolLine) break;
        const line = this.toolLine(
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
      case "retry":
        // Every wait is shown, in every mode (stderr only: -z keeps stdout for the answer).
        this.held = "";
        this.closeText();
        this.options.stderr.write(
          mode === "normal"
            ? `${this.paint(pc.yellow, `⏳ ${event.message}`)}\n`
            : `hermes: ${event.message}\n`,
        );
        break;
      case "error":
        this.held = "";
        this.closeText();
        this.options.stderr.write(`${this.paint(pc.red, "error:")} ${event.message}\n`);
        break;
      case "done":
        this.finalText = event.text;
        // The exit status is 1: -q/-z print no warnings, so say here why the turn was cut short.
        if (event.reason === "guardrail" && mode !== "normal" && this.lastWarning)
          this.options.stderr.write(`hermes: ${this.lastWarning}\n`);
        this.flushHeld();
        if (mode === "oneshot") {
          // A failed or interrupted turn has no final answer: earlier text is not one.
          if (event.text && event.reason !== "error" && event.reason !== "interrupted")
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
