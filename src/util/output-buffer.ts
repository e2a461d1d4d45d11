/**
 * Bounded buffers for streamed process output, so a command that prints gigabytes costs a fixed
 * amount of memory. Sizes are in UTF-16 code units (string length), which is what callers cap.
 */

/** Keeps the first `headMax` and the last `tailMax` characters written, counting what fell between. */
export class HeadTailBuffer {
  private head = "";
  private tailChunks: string[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  write(text: string): void {
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tailChunks.push(rest);
    this.tailLength += rest.length;
    // Compact only when well over budget, so steady streams do not re-join on every chunk.
    if (this.tailLength > this.tailMax * 2) this.compact();
  }

  /** Characters written so far, kept or not. */
  get totalChars(): number {
    return this.total;
  }

  /** Characters written but not kept. */
  get droppedChars(): number {
    this.compact();
    return this.total - this.head.length - this.tailLength;
  }

  /** The kept text, with `marker(n)` where `n` characters were dropped. */
  toString(marker: (dropped: number) => string = (n) => `\n…[${n} characters omitted]…\n`): string {
    this.compact();
    const dropped = this.total - this.head.length - this.tailLength;
    const tail = this.tailChunks.join("");
    return dropped > 0 ? this.head + marker(dropped) + tail : this.head + tail;
  }

  private compact(): void {
    if (this.tailLength <= this.tailMax) return;
    const joined = this.tailChunks.join("");
    const kept = joined.slice(joined.length - this.tailMax);
    this.tailChunks = [kept];
    this.tailLength = kept.length;
  }
}

/**
 * Keeps the last `max` characters written and addresses them by absolute offset (characters since
 * the start of the stream), so readers can ask "what is new since offset N" and learn what was lost.
 */
export class TailBuffer {
  private chunks: string[] = [];
  private length = 0;
  private total = 0;

  constructor(private readonly max: number) {}

  write(text: string): void {
    if (text.length === 0) return;
    this.chunks.push(text);
    this.length += text.length;
    this.total += text.length;
    if (this.length > this.max * 2) this.compact();
  }

  /** Absolute offset just past the last character written. */
  get end(): number {
    return this.total;
  }

  /** Absolute offset of the oldest character still kept. */
  get start(): number {
    this.compact();
    return this.total - this.length;
  }

  /** Kept text from absolute offset `from` (clamped to what is kept) to the end. */
  readFrom(from: number): { text: string; from: number; lost: number } {
    const start = this.start;
    const begin = Math.max(from, start);
    const all = this.chunks.join("");
    return { text: all.slice(begin - start), from: begin, lost: Math.max(0, start - from) };
  }

  /** All kept text. */
  toString(): string {
    this.compact();
    return this.chunks.join("");
  }

  private compact(): void {
    if (this.length <= this.max) return;
    const joined = this.chunks.join("");
    const kept = joined.slice(joined.length - this.max);
    this.chunks = [kept];
    this.length = kept.length;
  }
}
