/**
 * The questions `hermes setup` and `hermes model` ask: one readline over the command's stdin for
 * the whole conversation, questions and lists on stderr (stdout stays for results). A key is read
 * without echo. The flows are written against `Prompter`, so tests hand in scripted answers.
 */
import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import type { CliIo } from "../io.js";

/** The user ended the conversation (Ctrl+C, Ctrl+D): the flow stops, saving nothing more. */
export class PromptCancelled extends Error {
  constructor() {
    super("cancelled");
    this.name = "PromptCancelled";
  }
}

export interface Prompter {
  /** A line of information. */
  say(line: string): void;
  /** Asks; an empty answer is `fallback` (shown in brackets) when given. Throws PromptCancelled. */
  ask(question: string, fallback?: string): Promise<string>;
  /** Asks without echoing what is typed (keys, tokens). Throws PromptCancelled. */
  secret(question: string): Promise<string>;
  /** y/n with a default. Throws PromptCancelled. */
  confirm(question: string, fallback: boolean): Promise<boolean>;
  /** Aborted when the user leaves, also between questions (e.g. during a connection test). */
  readonly signal?: AbortSignal;
  close(): void;
}

/**
 * A prompter on the terminal of `io`. Call `close` when done (the readline holds stdin open).
 */
export function terminalPrompter(io: CliIo): Prompter {
  let muted = false;
  // readline echoes typed characters through `output`; muting it hides a key being typed.
  const output = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) io.stderr.write(chunk);
      callback();
    },
  });
  const rl: Interface = createInterface({
    input: io.stdin,
    output,
    terminal: io.stdin.isTTY === true,
  });
  let closed = false;
  const left = new AbortController();
  const waiting = new Set<(value: string | null) => void>();
  rl.on("close", () => {
    closed = true;
    left.abort(new PromptCancelled());
    for (const resolve of waiting) resolve(null);
    waiting.clear();
  });
  rl.on("SIGINT", () => rl.close());

  const question = (text: string): Promise<string> =>
    new Promise<string | null>((resolve) => {
      if (closed) return resolve(null);
      waiting.add(resolve);
      rl.question(text, (answer) => {
        waiting.delete(resolve);
        resolve(answer);
      });
    }).then((answer) => {
      if (answer === null) throw new PromptCancelled();
      return answer;
    });

  const prompter: Prompter = {
    say: (line) => io.stderr.write(`${line}\n`),
    async ask(text, fallback) {
      const answer = (await question(`${text}${fallback ? ` [${fallback}]` : ""}: `)).trim();
      return answer === "" && fallback !== undefined ? fallback : answer;
    },
    async secret(text) {
      io.stderr.write(`${text}: `);
      muted = true;
      try {
        return (await question("")).trim();
      } finally {
        muted = false;
        io.stderr.write("\n");
      }
    },
    async confirm(text, fallback) {
      for (;;) {
        const answer = (await question(`${text} [${fallback ? "Y/n" : "y/N"}]: `)).trim().toLowerCase();
        if (answer === "") return fallback;
        if (["y", "yes"].includes(answer)) return true;
        if (["n", "no"].includes(answer)) return false;
        io.stderr.write("Answer y or n.\n");
      }
    },
    signal: left.signal,
    close: () => rl.close(),
  };
  return prompter;
}

/** A prompter answering from a script, for tests; running out of answers cancels. */
export function scriptedPrompter(
  answers: readonly string[],
  said: string[] = [],
): Prompter & { said: string[] } {
  const queue = [...answers];
  const next = (): string => {
    const answer = queue.shift();
    if (answer === undefined) throw new PromptCancelled();
    return answer;
  };
  return {
    said,
    say: (line) => said.push(line),
    async ask(text, fallback) {
      said.push(`? ${text}`);
      const answer = next().trim();
      return answer === "" && fallback !== undefined ? fallback : answer;
    },
    async secret(text) {
      said.push(`? ${text}`);
      return next().trim();
    },
    async confirm(text, fallback) {
      said.push(`? ${text}`);
      const answer = next().trim().toLowerCase();
      return answer === "" ? fallback : answer.startsWith("y");
    },
    close: () => undefined,
  };
}
