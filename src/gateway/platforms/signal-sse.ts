/**
 * A server-sent events reader (the WHATWG event-stream format): feed it decoded text as it arrives,
 * get back complete events. Keeps the last event id, as a client must for `Last-Event-ID` when it
 * reconnects. Pure; no I/O.
 */

export interface SseEvent {
  /** `event:` field; "message" when absent. */
  event: string;
  data: string;
  /** `id:` of this event, when it had one. */
  id?: string | undefined;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | undefined;
  private sawField = false;
  /** The id of the last complete event that carried one (the stream's position). */
  lastEventId: string | undefined;

  /** Parses `chunk` (text, any split) and returns the events it completed. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      // A lone \r at the very end may be half of \r\n still in flight.
      if (this.buffer[nl] === "\r" && nl === this.buffer.length - 1) break;
      const width = this.buffer.startsWith("\r\n", nl) ? 2 : 1;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + width);
      const done = this.line(line);
      if (done) out.push(done);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      if (!this.sawField) return undefined;
      const done: SseEvent = { event: this.event || "message", data: this.data.join("\n") };
      if (this.id !== undefined) {
        done.id = this.id;
        this.lastEventId = this.id;
      }
      this.data = [];
      this.event = "";
      this.id = undefined;
      this.sawField = false;
      return done;
    }
    if (line.startsWith(":")) return undefined; // a comment: keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.sawField = true;
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
    return undefined;
  }
}
