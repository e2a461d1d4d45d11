/**
 * The busy indicator that lives in the prompt line while a turn runs (`⠋ thinking… 3s`). It only
 * keeps time and says when to redraw; the input line draws it, because the prompt line belongs to
 * readline (a separate spinner writing to the terminal would fight it, as ora does).
 */

export const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;

export interface SpinnerClock {
  now(): number;
  every(ms: number, fn: () => void): () => void;
}

export const systemClock: SpinnerClock = {
  now: () => Date.now(),
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export class Spinner {
  private label: string | null = null;
  private startedAt = 0;
  private cancel: (() => void) | null = null;

  /** `redraw` is called on every frame while the spinner runs. */
  constructor(
    private readonly redraw: () => void,
    private readonly clock: SpinnerClock = systemClock,
    private readonly intervalMs = 100,
  ) {}

  get active(): boolean {
    return this.label !== null;
  }

  /** Starts (or restarts) the clock with `label`. */
  start(label: string): void {
    this.startedAt = this.clock.now();
    this.label = label;
    this.cancel ??= this.clock.every(this.intervalMs, this.redraw);
  }

  /** Changes the label and keeps the elapsed time; starts the spinner when it was stopped. */
  setLabel(label: string): void {
    if (this.label === null) this.start(label);
    else this.label = label;
  }

  stop(): void {
    this.label = null;
    this.cancel?.();
    this.cancel = null;
  }

  /** Seconds since `start`. */
  elapsedSeconds(): number {
    return Math.max(0, Math.floor((this.clock.now() - this.startedAt) / 1000));
  }

  /** `⠋ thinking… 3s`, or null when stopped. The frame follows the clock, so redraws agree. */
  text(): { frame: string; label: string; elapsed: string } | null {
    if (this.label === null) return null;
    const ticks = Math.floor((this.clock.now() - this.startedAt) / this.intervalMs);
    const frame = SPINNER_FRAMES[ticks % SPINNER_FRAMES.length] as string;
    return { frame, label: this.label, elapsed: `${this.elapsedSeconds()}s` };
  }
}
