/** Output streams for commands run in-process: what they write is collected in `text`. */
import { Writable } from "node:stream";

/** A writable stream that keeps everything written to it as `text`. */
export function sink(): Writable & { text: string } {
  const stream = new Writable({
    write(chunk, _enc, done) {
      stream.text += String(chunk);
      done();
    },
  }) as Writable & { text: string };
  stream.text = "";
  return stream;
}
