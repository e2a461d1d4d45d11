/**
 * What the agent hears about a background process without polling it: `notify_on_complete` (one
 * notice when it ends: how, and the tail of its output) and `watch_patterns` (a notice when it
 * prints a line containing one of the patterns). Notices go out through `ToolContext.notify` and
 * wake an idle REPL or chat.
 *
 * A chatty process cannot flood the model: at most one notice per process per cooldown window
 * (15 s, as upstream); matches inside a window are counted and reported together when it ends; a
 * process that keeps matching through three windows in a row stops being watched and is reported
 * once, when it exits. Patterns are plain text (never regular expressions), so no pattern can be
 * invalid or take catastrophic time.
 *
 * The registry feeds it output chunks and the exit; nothing here touches a process.
 */

import { cleanTerminalText } from "../../util/terminal-text.js";
import type { AgentNotice } from "../types.js";

export const WATCH_COOLDOWN_MS = 15_000;
/** Consecutive windows with suppressed matches after which watching stops. */
export const WATCH_STRIKE_LIMIT = 3;
export const MAX_WATCH_PATTERNS = 20;
export const MAX_PATTERN_CHARS = 200;
/** Matched lines quoted in one notice, and the characters kept of each. */
const QUOTED_LINES = 5;
const LINE_CHARS = 300;
/** A line longer than this (no newline for a long time) is matched on its first part only. */
const MAX_PARTIAL_CHARS = 8192;
/** The output tail an exit notice quotes. */
const TAIL_LINES = 20;
const TAIL_CHARS = 1500;

export interface WatchSettings {
  notifyOnComplete: boolean;
  patterns: readonly string[];
}

export interface WatchedProcess {
  id: string;
  command: string;
  startedAt: number;
}

/** How the process ended, as the registry saw it. */
export interface WatchExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  endedAt: number;
  /** Its output (the registry's buffer); the tail is quoted. */
  output: string;
  /** Who stopped it, when Hermes did: the process tool (the model saw it), or shutdown. */
  stoppedBy?: "tool" | "shutdown" | undefined;
}

export interface WatchDeps {
  notify: (notice: AgentNotice) => void;
  now?: () => number;
  /** Runs `fn` after `ms`; returns a cancel function (tests pass a fake). Unref'd by default. */
  schedule?: (fn: () => void, ms: number) => () => void;
  /** Runs `fn` after the current I/O callbacks (default `setImmediate`). */
  defer?: (fn: () => void) => void;
}

/**
 * Checks `watch_patterns` from the model: a clear message for each way it can be wrong (the
 * model reads it and can retry). Returns the patterns to use.
 */
export function validatePatterns(patterns: readonly string[]): string[] {
  if (patterns.length > MAX_WATCH_PATTERNS) {
    throw new Error(
      `watch_patterns has ${patterns.length} entries; at most ${MAX_WATCH_PATTERNS} are allowed. Keep the few lines you really need to hear about.`,
    );
  }
  for (const p of patterns) {
    if (p.trim() === "") {
      throw new Error("watch_patterns has an empty entry, which would match every line. Remove it.");
    }
    if (p.length > MAX_PATTERN_CHARS) {
      throw new Error(
        `watch_patterns entry "${p.slice(0, 40)}…" is ${p.length} characters; at most ${MAX_PATTERN_CHARS}. Use a shorter piece of the line.`,
      );
    }
    if (p.includes("\n"))
      throw new Error(
        `watch_patterns entry ${JSON.stringify(p)} spans lines; lines are matched one at a time.`,
      );
  }
  return [...new Set(patterns)];
}

export class ProcessWatch {
  private readonly now: () => number;
  private readonly schedule: (fn: () => void, ms: number) => () => void;
  private readonly defer: (fn: () => void) => void;
  private readonly patterns: readonly string[];
  private notifyOnComplete: boolean;
  private watching: boolean;
  private partial = "";
  /** Matches not yet reported: how many, and the latest few lines. */
  private held = 0;
  private heldLines: string[] = [];
  /** Matches since watching stopped (reported with the exit). */
  private afterDisabled = 0;
  private windowOpen = false;
  private cancelWindow: () => void = () => undefined;
  private strikes = 0;
  private seenByModel = false;
  private done = false;

  constructor(
    private readonly target: WatchedProcess,
    settings: WatchSettings,
    private readonly deps: WatchDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.schedule =
      deps.schedule ??
      ((fn, ms) => {
        const timer = setTimeout(fn, ms);
        timer.unref();
        return () => clearTimeout(timer);
      });
    this.defer = deps.defer ?? ((fn) => setImmediate(fn));
    this.notifyOnComplete = settings.notifyOnComplete;
    this.patterns = settings.patterns;
    this.watching = settings.patterns.length > 0;
  }

  /** A chunk of the process's output as it arrived (any split, escape sequences included). */
  output(chunk: string): void {
    if (this.done || this.patterns.length === 0) return;
    const text = this.partial + chunk;
    const lines = text.split("\n");
    const last = lines.pop() ?? "";
    this.partial = last.length > MAX_PARTIAL_CHARS ? last.slice(0, MAX_PARTIAL_CHARS) : last;
    for (const line of lines) this.line(line);
  }

  private line(raw: string): void {
    const line = cleanTerminalText(raw.length > MAX_PARTIAL_CHARS ? raw.slice(0, MAX_PARTIAL_CHARS) : raw);
    if (!this.patterns.some((p) => line.includes(p))) return;
    if (!this.watching) {
      this.afterDisabled++;
      this.keep(line);
      return;
    }
    this.held++;
    this.keep(line);
    if (!this.windowOpen) this.flush();
  }

  private keep(line: string): void {
    const trimmed = line.trim();
    this.heldLines.push(trimmed.length > LINE_CHARS ? `${trimmed.slice(0, LINE_CHARS)}…` : trimmed);
    if (this.heldLines.length > QUOTED_LINES) this.heldLines.shift();
  }

  /** Reports what is held and opens a cooldown window; the window's end reports what came meanwhile. */
  private flush(): void {
    const count = this.held;
    const lines = this.heldLines;
    this.held = 0;
    this.heldLines = [];
    const what =
      count === 1
        ? "printed a line matching watch_patterns"
        : `printed ${count} lines matching watch_patterns (the latest ${lines.length} quoted)`;
    this.send(`${this.label()} ${what}:\n${lines.join("\n")}`);
    this.windowOpen = true;
    this.cancelWindow = this.schedule(() => this.windowEnded(), WATCH_COOLDOWN_MS);
  }

  private windowEnded(): void {
    this.windowOpen = false;
    if (this.done) return;
    if (this.held === 0) {
      this.strikes = 0;
      return;
    }
    this.strikes++;
    if (this.strikes >= WATCH_STRIKE_LIMIT) {
      this.watching = false;
      this.notifyOnComplete = true;
      const count = this.held;
      const lines = this.heldLines;
      this.held = 0;
      this.heldLines = [];
      this.send(
        `${this.label()} kept matching watch_patterns (${count} more lines since the last notice; latest:\n${lines.join("\n")}\n). Watching it stopped so it cannot flood you; you will hear once when it exits. Use the process tool (poll, log) to look sooner.`,
      );
      return;
    }
    this.flush();
  }

  /** The model read the exit through the process tool: no exit notice, and a queued one is withdrawn. */
  seen(): void {
    this.seenByModel = true;
    this.deps.notify({ source: "process", id: this.target.id, text: "", retract: true });
  }

  /** The process ended and its output drained. Reports it unless the model already knows. */
  exited(exit: WatchExit): void {
    if (this.done) return;
    this.cancelWindow();
    this.windowOpen = true; // the last line is counted, not reported on its own: the exit says it
    if (this.partial !== "" && this.patterns.length > 0) this.line(this.partial);
    this.partial = "";
    this.done = true;
    if (exit.stoppedBy) return; // the process tool reported the kill; at shutdown nobody listens
    const unreported = this.held + this.afterDisabled;
    if (!this.notifyOnComplete && unreported === 0) return;
    // A `process wait` resolving on the same exit marks it seen in this same turn of the event
    // loop; deferring lets it, so the model is not told twice.
    this.defer(() => {
      if (this.seenByModel) return;
      this.send(this.exitText(exit, unreported));
    });
  }

  /** Hermes is shutting down or the entry was dropped: nothing more is reported. */
  stop(): void {
    this.done = true;
    this.cancelWindow();
  }

  private exitText(exit: WatchExit, unreported: number): string {
    const seconds = Math.max(0, Math.round((exit.endedAt - this.target.startedAt) / 1000));
    const how =
      exit.signal !== null
        ? `was killed by ${exit.signal} (exit code ${exit.exitCode ?? "none"}) after ${seconds} s; Hermes did not stop it (the user or another program did)`
        : `exited with code ${exit.exitCode ?? "unknown"} after ${seconds} s`;
    const parts = [`${this.label()} ${how}.`];
    if (unreported > 0) {
      parts.push(
        `${unreported} more lines matched watch_patterns since the last notice; the latest:\n${this.heldLines.join("\n")}`,
      );
    }
    const tail = outputTail(exit.output);
    parts.push(tail === "" ? "It printed nothing." : `Last output:\n${tail}`);
    return parts.join("\n");
  }

  private label(): string {
    const command = cleanTerminalText(this.target.command).replace(/\s+/g, " ").trim();
    return `Background process ${this.target.id} (${command.length > 120 ? `${command.slice(0, 119)}…` : command})`;
  }

  private send(text: string): void {
    try {
      this.deps.notify({ source: "process", id: this.target.id, text, wake: true });
    } catch {
      // A surface that cannot take the notice must not break the process's output handling.
    }
  }
}

/** The last lines of `output` as the screen showed them, bounded in lines and characters. */
export function outputTail(output: string): string {
  const clean = cleanTerminalText(output.slice(-TAIL_CHARS * 4)).replace(/\s+$/, "");
  const lines = clean.split("\n").slice(-TAIL_LINES).join("\n");
  return lines.length > TAIL_CHARS ? `…${lines.slice(-TAIL_CHARS)}` : lines;
}
