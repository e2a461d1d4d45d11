/**
 * Bounded capture of a child's output stream: keeps the first 40% and the last 60% of the byte
 * limit, counts what fell in between, and renders the kept text with a notice that says what was
 * cut. Memory stays bounded however much the child prints.
 */

export interface CapturedText {
  /** The kept text; when cut, with a one-line notice between head and tail. */
  text: string;
  /** Bytes the stream carried in all. */
  totalBytes: number;
  /** Bytes dropped from the middle (0 when nothing was cut). */
  omittedBytes: number;
}

export class OutputCapture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;

  /** `limit` is the most bytes kept; `label` names the stream in the notice ("stdout"). */
  constructor(
    readonly limit: number,
    private readonly label: string,
  ) {
    this.headLimit = Math.floor(limit * 0.4);
    this.tailLimit = limit - this.headLimit;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    const joined = Buffer.concat([this.tail, rest]);
    this.tail = joined.length > this.tailLimit ? joined.subarray(joined.length - this.tailLimit) : joined;
  }

  /**
   * The captured text. `limit` (at most the capture limit) renders a shorter head and tail, for a
   * result that must fit a tighter budget; the notice still counts every byte left out.
   */
  result(limit = this.limit): CapturedText {
    const keep = Math.max(0, Math.min(limit, this.limit));
    let head = Buffer.concat(this.head);
    let tail = this.tail;
    if (this.total <= this.limit) {
      // Nothing dropped yet: head and tail are one contiguous stream.
      const all = Buffer.concat([head, tail]);
      if (all.length <= keep) return { text: all.toString("utf8"), totalBytes: this.total, omittedBytes: 0 };
      head = all.subarray(0, Math.floor(keep * 0.4));
      tail = all.subarray(all.length - (keep - head.length));
    } else if (keep < this.limit) {
      head = head.subarray(0, Math.min(head.length, Math.floor(keep * 0.4)));
      tail = tail.subarray(tail.length - Math.min(tail.length, keep - head.length));
    }
    const omitted = this.total - head.length - tail.length;
    const notice =
      `\n…[${this.label} truncated: ${omitted} of ${this.total} bytes omitted from the middle ` +
      `(limit ${formatKb(keep)}); print less, or write bulky results to a file and print a summary]…\n`;
    return {
      text: decodeHead(head) + notice + decodeTail(tail),
      totalBytes: this.total,
      omittedBytes: omitted,
    };
  }
}

function formatKb(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`;
}

/** Decodes a prefix cut at an arbitrary byte, dropping a trailing partial UTF-8 character. */
function decodeHead(buf: Buffer): string {
  let end = buf.length;
  let back = 0;
  while (end > 0 && back < 4 && ((buf[end - 1] ?? 0) & 0xc0) === 0x80) {
    end--;
    back++;
  }
  // end-1 is now the lead byte (or ASCII); drop it when its sequence is incomplete.
  const lead = buf[end - 1] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (end > 0 && need > 1 && need > back + 1) end--;
  else end = buf.length;
  return buf.subarray(0, end).toString("utf8");
}

/** Decodes a suffix cut at an arbitrary byte, dropping leading UTF-8 continuation bytes. */
function decodeTail(buf: Buffer): string {
  let start = 0;
  while (start < buf.length && start < 4 && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}
