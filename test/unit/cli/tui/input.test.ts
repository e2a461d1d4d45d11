import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { blockRows, TerminalInput } from "../../../../src/cli/tui/input.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import { stripAnsi } from "../../../../src/cli/tui/text-width.js";

type Tty = PassThrough & { isTTY: boolean; columns: number; setRawMode: (on: boolean) => void };

function tty(): Tty {
  return Object.assign(new PassThrough(), { isTTY: true, columns: 80, setRawMode: () => undefined });
}

const inputs: TerminalInput[] = [];
afterEach(() => {
  for (const i of inputs.splice(0)) i.close();
});

function setup(options: { history?: string[] } = {}) {
  const stdin = tty();
  const out = tty();
  let screen = "";
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  out.on("data", (d: Buffer) => {
    screen += d.toString("utf8");
    for (const w of [...waiters]) {
      if (stripAnsi(screen).includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const submitted: string[] = [];
  const submitWaiters: Array<() => void> = [];
  const interrupts: Array<{ hadText: boolean; question: boolean }> = [];
  let eof = 0;
  const added: string[] = [];
  const input = new TerminalInput({
    input: stdin,
    output: out,
    style: createStyle(false),
    history: { entries: options.history ?? [], add: (e) => added.push(e) },
    pasteWindowMs: 15,
  });
  inputs.push(input);
  input.start({
    submit: (t) => {
      submitted.push(t);
      for (const w of submitWaiters.splice(0)) w();
    },
    interrupt: (i) => interrupts.push(i),
    eof: () => eof++,
  });
  return {
    input,
    type: (s: string) => stdin.write(s),
    submitted,
    interrupts,
    added,
    eof: () => eof,
    screen: () => stripAnsi(screen),
    clearScreen: () => {
      screen = "";
    },
    nextSubmit: () => new Promise<void>((resolve) => submitWaiters.push(resolve)),
    waitFor: (text: string) =>
      stripAnsi(screen).includes(text)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ text, resolve })),
  };
}

describe("TerminalInput", () => {
  it("submits a typed line and records it in the history", async () => {
    const t = setup();
    const next = t.nextSubmit();
    t.type("hello world\r");
    await next;
    expect(t.submitted).toEqual(["hello world"]);
    expect(t.added).toEqual(["hello world"]);
  });

  it("holds a multi-line paste until Enter and sends it as one message", async () => {
    const t = setup();
    t.type("line one\rline two\rline thr");
    await t.waitFor("… line thr");
    expect(t.submitted).toEqual([]);
    const next = t.nextSubmit();
    t.type("ee\r");
    await next;
    expect(t.submitted).toEqual(["line one\nline two\nline three"]);
  });

  it("a paste that ends with a newline waits for Enter on the empty continuation line", async () => {
    const t = setup();
    t.type("a\rb\r");
    // The held paste is shown with the continuation prompt once the paste window has passed.
    await t.waitFor("… b\n… ");
    const next = t.nextSubmit();
    t.type("\r");
    await next;
    expect(t.submitted).toEqual(["a\nb"]);
  });

  it("continues a line that ends with a backslash", async () => {
    const t = setup();
    t.type("first \\\r");
    await t.waitFor("… ");
    const next = t.nextSubmit();
    t.type("second\r");
    await next;
    expect(t.submitted).toEqual(["first \nsecond"]);
  });

  it("ignores an empty line", async () => {
    const t = setup();
    t.type("\r");
    await t.waitFor("❯ \r\n❯ ");
    const next = t.nextSubmit();
    t.type("x\r");
    await next;
    expect(t.submitted).toEqual(["x"]);
  });

  it("asks a question on the same line and puts the draft back afterwards", async () => {
    const t = setup();
    t.type("my draft");
    await t.waitFor("my draft");
    const answer = t.input.ask(["Pick one:"], "Answer? ");
    await t.waitFor("Answer? ");
    t.type("yes\r");
    expect(await answer).toBe("yes");
    expect(t.input.line).toBe("my draft");
    expect(t.submitted).toEqual([]);
    expect(t.screen()).toContain("Pick one:");
  });

  it("Ctrl+C cancels a question (null) and reports it; otherwise reports whether text was typed", async () => {
    const t = setup();
    const answer = t.input.ask([], "Sure? ");
    await t.waitFor("Sure? ");
    t.type("\x03");
    expect(await answer).toBeNull();
    t.type("abc");
    await t.waitFor("abc");
    t.type("\x03");
    t.input.clearInput({ echo: true });
    t.type("\x03");
    expect(t.interrupts).toEqual([
      { hadText: false, question: true },
      { hadText: true, question: false },
      { hadText: false, question: false },
    ]);
    expect(t.screen()).toContain("abc^C");
  });

  it("Ctrl+D on an empty line reports end of input", async () => {
    const t = setup();
    t.type("\x04");
    expect(t.eof()).toBe(1);
  });

  it("prints above the prompt and draws the prompt and the draft again", async () => {
    const t = setup();
    t.type("draft");
    await t.waitFor("draft");
    t.clearScreen();
    t.input.print(["an answer line"]);
    const screen = t.screen();
    expect(screen.indexOf("an answer line")).toBeLessThan(screen.lastIndexOf("❯ draft"));
  });

  it("recalls multi-line history entries with the up arrow", async () => {
    const t = setup({ history: ["older\nentry"] });
    t.type("\x1b[A");
    expect(t.input.line).toBe("older\nentry");
  });
});

describe("TerminalInput without a terminal for output", () => {
  it("writes prompts and questions plainly and still reads lines", async () => {
    const stdin = tty();
    const out = new PassThrough();
    let written = "";
    out.on("data", (d: Buffer) => {
      written += d.toString("utf8");
    });
    const input = new TerminalInput({
      input: stdin,
      output: out,
      style: createStyle(false),
      pasteWindowMs: 5,
    });
    inputs.push(input);
    const submitted = new Promise<string>((resolve) => {
      input.start({ submit: resolve, interrupt: () => undefined, eof: () => undefined });
    });
    const answer = input.ask(["Question?"], "Sure? ");
    stdin.write("yes\n");
    expect(await answer).toBe("yes");
    stdin.write("hello\n");
    expect(await submitted).toBe("hello");
    input.print(["plain output"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toContain("Question?\nSure? ");
    expect(written).toContain("plain output\n");
    expect(written).not.toContain("\x1b[");
  });
});

describe("blockRows", () => {
  it.each<[string, number, number]>([
    ["❯ hi", 80, 1],
    ["x".repeat(80), 80, 2],
    ["x".repeat(81), 80, 2],
    ["status\n❯ hi", 80, 2],
    ["\n❯ ", 80, 2],
  ])("%j in %i columns → %i rows", (text, columns, rows) => {
    expect(blockRows(text, columns)).toBe(rows);
  });
});
