/**
 * Redaction of a process's own output streams (`process.stdout`/`process.stderr` of the CLI, the
 * gateway, cron): `write` is wrapped once, so every byte the process prints passes the redactor,
 * whoever writes it (the answer, streamed text, tool progress lines, errors, warnings).
 *
 * Streamed text arrives in pieces, so a secret can be cut between two writes. The end of each write
 * that could be the start of a known secret or of a key shape (`ghp_…` still growing) is held back
 * and printed with the next write, after redaction of the joined text. Held text is printed at the
 * latest after `holdMs` without a new write, or when an empty write asks for a flush. What is not
 * covered: a secret whose pieces arrive further apart than `holdMs`, one spread over writes to two
 * different streams, a token the renderer itself breaks (wraps or styles mid-token), and shapes
 * recognised only by context (`?password=`, `user:pass@`, `Bearer`) when the cut falls inside them.
 */
import { StringDecoder } from "node:string_decoder";
import { type Redactor, SHAPE_STARTS } from "./redact.js";

/** Longest tail held back; a longer run of token characters is printed as it is. */
const MAX_HOLD = 512;
const TOKEN_TAIL = /[A-Za-z0-9_\-.+/=]+$/;

/**
 * Pure: how many characters at the end of `text` could be the beginning of a secret completed by
 * the next write: a proper prefix of a known spelling, or a run of token characters that begins (or
 * could still grow into the beginning of) a key shape.
 */
export function holdBackLength(text: string, spellings: readonly string[]): number {
  let hold = 0;
  for (const spelling of spellings) {
    const max = Math.min(spelling.length - 1, text.length);
    for (let k = max; k > hold; k--) {
      if (text.endsWith(spelling.slice(0, k))) {
        hold = k;
        break;
      }
    }
  }
  const tail = TOKEN_TAIL.exec(text.slice(-MAX_HOLD))?.[0];
  if (tail && tail.length > hold) {
    const start = tail.search(/[A-Za-z]/);
    const run = start >= 0 ? tail.slice(start) : "";
    if (run && SHAPE_STARTS.some((s) => run.startsWith(s) || s.startsWith(run))) {
      hold = Math.max(hold, run.length);
    }
  }
  return Math.min(hold, MAX_HOLD);
}

/**
 * Redacts text that arrives in pieces (streamed deltas relayed one by one): `push` returns what may
 * be sent now, holding back a tail that could be the start of a secret; `end` returns the rest.
 */
export class StreamTextRedactor {
  private held = "";
  constructor(private readonly redactor: Redactor) {}

  push(piece: string): string {
    const redacted = this.redactor.redact(this.held + piece);
    if (!this.redactor.enabled) {
      this.held = "";
      return redacted;
    }
    const hold = holdBackLength(redacted, this.redactor.knownSpellings());
    this.held = redacted.slice(redacted.length - hold);
    return redacted.slice(0, redacted.length - hold);
  }

  end(): string {
    const rest = this.redactor.redact(this.held);
    this.held = "";
    return rest;
  }
}

type WriteCallback = (error?: Error | null) => void;

export interface RedactedStream {
  /** Prints whatever is held back now. */
  flush(): void;
  /** Restores the stream's original `write`. */
  restore(): void;
}

const installed = new WeakMap<NodeJS.WritableStream, RedactedStream>();

/**
 * Wraps `stream.write` so every write is redacted by `redactor` (read at each write, so secrets
 * registered later count). Installing twice on one stream returns the first installation. The
 * wrapper is transparent while `redactor.enabled` is false.
 */
export function redactStreamWrites(
  stream: NodeJS.WritableStream,
  redactor: Redactor,
  options: { holdMs?: number } = {},
): RedactedStream {
  const existing = installed.get(stream);
  if (existing) return existing;
  const holdMs = options.holdMs ?? 250;
  const original = stream.write;
  const write = original.bind(stream) as (chunk: string, cb?: WriteCallback) => boolean;
  const decoder = new StringDecoder("utf8");
  let held = "";
  let timer: ReturnType<typeof setTimeout> | undefined;

  const flushHeld = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!held) return;
    const text = redactor.redact(held);
    held = "";
    write(text);
  };

  const wrapped = function (this: unknown, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const cb = (typeof encoding === "function" ? encoding : callback) as WriteCallback | undefined;
    if (!redactor.enabled) {
      flushHeld();
      return (original as (...a: unknown[]) => boolean).call(stream, chunk, encoding, callback);
    }
    const piece =
      typeof chunk === "string"
        ? chunk
        : chunk instanceof Uint8Array
          ? decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          : String(chunk);
    if (timer) clearTimeout(timer);
    timer = undefined;
    const text = held + piece;
    held = "";
    if (piece.length === 0) {
      // An empty write is a flush request (the CLI's exit path waits on one).
      return write(redactor.redact(text), cb);
    }
    const redacted = redactor.redact(text);
    const hold = holdBackLength(redacted, redactor.knownSpellings());
    const out = hold > 0 ? redacted.slice(0, redacted.length - hold) : redacted;
    if (hold > 0) {
      held = redacted.slice(redacted.length - hold);
      timer = setTimeout(flushHeld, holdMs);
      timer.unref?.();
    }
    if (out.length > 0) return write(out, cb);
    if (cb) process.nextTick(cb);
    return true;
  };
  stream.write = wrapped as typeof stream.write;
  const handle: RedactedStream = {
    flush: flushHeld,
    restore() {
      flushHeld();
      stream.write = original;
      installed.delete(stream);
    },
  };
  installed.set(stream, handle);
  // Writes to files and pipes are synchronous at exit on POSIX: held text is not lost.
  process.once("exit", flushHeld);
  return handle;
}
