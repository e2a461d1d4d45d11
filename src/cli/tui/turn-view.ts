/**
 * Turns one run's agent events into what the REPL shows: rendered answer lines (stdout), tool lines,
 * warnings and errors (stderr), and the busy label of the spinner. No terminal I/O here: everything
 * goes to a sink, so the view is tested with a fake one.
 */
import type { AgentEvent } from "../../agent/events.js";
import { LiveOutput } from "./live-output.js";
import { type MarkdownMode, MarkdownStream } from "./markdown-stream.js";
import type { Style } from "./style.js";
import {
  formatArgs,
  formatToolLine,
  previewArgs,
  resultExcerpt,
  type ToolProgress,
  toolEmoji,
} from "./tool-line.js";

export interface TurnSink {
  /** Rendered answer lines (stdout). */
  answer(lines: string[]): void;
  /** Progress, warnings and errors (stderr). */
  info(lines: string[]): void;
  /** The spinner label, or null when the turn is over. */
  status(label: string | null): void;
  /**
   * The latest lines a running command printed, shown under the spinner row; an empty list
   * takes them away (the command ended). Absent: live output is not shown.
   */
  output?(lines: readonly string[]): void;
}

export interface TurnViewOptions {
  markdown: MarkdownMode;
  /** Style of the info stream. */
  style: Style;
  /** Current wrap width of the answer stream (read at every delta: the terminal may be resized). */
  width: () => number | undefined;
  /** Current `/verbose` level (read at every tool event). */
  toolProgress: () => ToolProgress;
  showReasoning?: boolean;
  emojiFor?: (tool: string) => string | undefined;
}

/** Lines of a running command's output shown under the spinner row. */
const LIVE_LINES = 4;

export class TurnView {
  private readonly markdown: MarkdownStream;
  private readonly reasoning: MarkdownStream;
  private readonly starts = new Map<string, { name: string; args: Record<string, unknown> }>();
  private lastTool: string | null = null;
  /** Running subagents by `callId:index`, with what each is doing. */
  private readonly subagentsRunning = new Map<string, string>();
  private wroteAnswer = false;
  /** Output of the command running now, and the call it belongs to. */
  private readonly live = new LiveOutput(LIVE_LINES);
  private liveCall: string | null = null;

  constructor(
    private readonly sink: TurnSink,
    private readonly options: TurnViewOptions,
  ) {
    this.markdown = new MarkdownStream({ mode: options.markdown });
    this.reasoning = new MarkdownStream({ mode: "raw" });
  }

  handle(event: AgentEvent): void {
    const s = this.options.style;
    switch (event.type) {
      case "turn_start":
        this.sink.status("thinking…");
        break;
      case "reasoning_delta":
        this.sink.status("reasoning…");
        if (this.options.showReasoning) {
          const lines = this.reasoning.push(event.text);
          if (lines.length > 0) this.sink.info(lines.map((l) => s.dim(`  ${l}`)));
        }
        break;
      case "text_delta": {
        this.flushReasoning();
        this.markdown.width = this.options.width();
        this.answer(this.markdown.push(event.text));
        this.sink.status("writing…");
        break;
      }
      case "stream_discarded":
        // Lines already on the screen cannot be taken back: show the rest, then say it is void.
        if (event.text) {
          this.flushAnswer();
          this.sink.info([s.yellow("⚠ [the text above was cut off and is not the answer; retrying]")]);
        }
        break;
      case "tool_start": {
        this.flushAnswer();
        this.starts.set(event.callId, { name: event.name, args: event.args });
        const preview = previewArgs(event.name, event.args, 40);
        this.sink.status(
          `${toolEmoji(event.name, this.options.emojiFor)} ${event.name}${preview ? ` ${preview}` : ""}`,
        );
        if (this.options.toolProgress() === "verbose") {
          this.sink.info([s.dim(`  → ${event.name} ${formatArgs(event.args)}`)]);
        }
        break;
      }
      case "tool_progress":
        if (this.options.toolProgress() === "verbose")
          this.sink.info([s.dim(`    ${event.name}: ${event.message}`)]);
        else
          this.sink.status(`${toolEmoji(event.name, this.options.emojiFor)} ${event.name}: ${event.message}`);
        break;
      case "tool_output":
        this.liveOutput(event);
        break;
      case "tool_end":
        if (event.callId === this.liveCall) this.endLive();
        this.toolEnd(event);
        // A nested call ended; the script that made it is still running.
        if (!event.parentCallId) this.sink.status("thinking…");
        break;
      case "subagent":
        this.subagent(event);
        break;
      case "warning":
        this.flushAnswer();
        this.sink.info([s.yellow(`⚠ ${event.message}`)]);
        break;
      case "retry":
        this.flushAnswer();
        this.sink.info([s.yellow(`⏳ ${event.message}`)]);
        // Stays up while the wait runs and the retried request is in flight: say both.
        this.sink.status(
          `attempt ${event.attempt} of ${event.attempts} after a ${(event.delayMs / 1000).toFixed(1)} s wait…`,
        );
        break;
      case "error":
        this.flushAnswer();
        this.sink.info([`${s.red("error:")} ${event.message}`]);
        break;
      case "done":
        this.flushReasoning();
        this.flushAnswer();
        if (event.reason === "interrupted") this.sink.info([s.yellow("⏹ Interrupted.")]);
        else if (event.reason === "max_turns") {
          this.sink.info([s.yellow(`⚠ Stopped after ${event.iterations} model calls (agent.max_turns).`)]);
        } else if (event.reason === "guardrail")
          this.sink.info([s.yellow("⚠ Stopped by a tool-loop guardrail.")]);
        this.sink.status(null);
        break;
      default:
        break;
    }
  }

  /** Renders whatever is still buffered; call once the run ended (also after a failure). */
  finish(): void {
    this.endLive();
    this.flushReasoning();
    this.flushAnswer();
    this.sink.status(null);
  }

  /** Whether any answer text was shown. */
  get answered(): boolean {
    return this.wroteAnswer;
  }

  private toolEnd(event: Extract<AgentEvent, { type: "tool_end" }>): void {
    const start = this.starts.get(event.callId);
    this.starts.delete(event.callId);
    const level = this.options.toolProgress();
    const repeated = this.lastTool === event.name;
    this.lastTool = event.name;
    if (level === "off" || (level === "new" && repeated && event.ok)) return;
    const line = formatToolLine(
      { name: event.name, args: start?.args, ok: event.ok, durationMs: event.durationMs },
      this.options.style,
      {
        ...(this.options.emojiFor ? { emojiFor: this.options.emojiFor } : {}),
        ...(this.options.width() !== undefined ? { width: this.options.width() } : {}),
      },
    );
    // Calls made by a script (execute_code) sit under the call that ran it.
    const lines = [event.parentCallId ? `  ↳ ${line}` : line];
    if (level === "verbose") lines.push(...resultExcerpt(event.result).map((l) => this.options.style.dim(l)));
    this.sink.info(lines);
  }

  /** One line per child as it starts and ends; the status line follows the busiest moment. */
  private subagent(event: Extract<AgentEvent, { type: "subagent" }>): void {
    const s = this.options.style;
    const goal = event.goal.length > 60 ? `${event.goal.slice(0, 59)}…` : event.goal;
    const tag = `[${event.index + 1}]`;
    if (event.state === "start") {
      this.subagentsRunning.set(`${event.callId}:${event.index}`, "starting");
      if (this.options.toolProgress() !== "off") this.sink.info([s.dim(`  ↳ ${tag} ${goal}`)]);
    } else if (event.state === "progress") {
      this.subagentsRunning.set(`${event.callId}:${event.index}`, event.detail);
    } else {
      this.subagentsRunning.delete(`${event.callId}:${event.index}`);
      if (this.options.toolProgress() !== "off") {
        const ok = event.detail === "completed";
        const seconds = event.durationMs !== undefined ? ` in ${(event.durationMs / 1000).toFixed(1)}s` : "";
        const mark = ok ? s.green("✓") : s.yellow("⚠");
        this.sink.info([`  ↳ ${tag} ${mark} ${s.dim(`${event.detail}${seconds}: ${goal}`)}`]);
      }
    }
    const running = [...this.subagentsRunning.values()];
    this.sink.status(
      running.length > 0
        ? `🔀 ${running.length} subagent${running.length === 1 ? "" : "s"}: ${running.join(", ")}`
        : "thinking…",
    );
  }

  /** A running command printed something: its last lines go under the spinner row. */
  private liveOutput(event: Extract<AgentEvent, { type: "tool_output" }>): void {
    if (!this.sink.output || this.options.toolProgress() === "off") return;
    if (this.liveCall !== event.callId) {
      // Another call's output (parallel calls): the newest speaker has the rows.
      this.live.clear();
      this.liveCall = event.callId;
    }
    this.live.push(event.text);
    this.sink.output(this.live.tail());
  }

  private endLive(): void {
    if (this.liveCall === null) return;
    this.liveCall = null;
    this.live.clear();
    this.sink.output?.([]);
  }

  private answer(lines: string[]): void {
    if (lines.length === 0) return;
    this.wroteAnswer = true;
    this.sink.answer(lines);
  }

  private flushAnswer(): void {
    this.answer(this.markdown.flush());
  }

  private flushReasoning(): void {
    const lines = this.reasoning.flush();
    if (lines.length > 0 && this.options.showReasoning)
      this.sink.info(lines.map((l) => this.options.style.dim(`  ${l}`)));
  }
}
